// evledger gen --activity: synthetic reruns, attestations and corrections appended to a
// ledger (the planning is tools/gen/activity.h; this file is the command around it).
#include <cstdio>

#include "keys/signer.h"
#include "tools/gen/activity.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"

namespace evl::cli {
namespace {

struct LoadedKey {
  std::string path;
  SecretKey key;
};

Result<std::vector<LoadedKey>> load_keys(const Args& args, const std::string& option) {
  std::vector<LoadedKey> out;
  for (const std::string& path : args.all(option)) {
    auto key = SecretKey::load(path);
    if (!key) return key.error().with_context("--" + option + " " + path);
    out.push_back({path, std::move(key.value())});
  }
  if (out.empty()) return usage_error("gen --activity needs --" + option + " FILE");
  return out;
}

// Whether `key` may sign the events it is given for, at the ledger's current size, by the
// ledger's own rule (keys/policy.h) applied to an event of that kind: refusing here says which
// file and which grant is missing before anything is signed.
Status check_key_role(const KeyPolicy& policy, uint64_t size, const LoadedKey& key,
                      const std::string& option, Payload kind, const char* fix) {
  EventBody probe;
  probe.author = key.key.public_key();
  probe.payload = std::move(kind);
  Status allowed = policy.check(size, probe);
  if (allowed) return Status::ok();
  return Status(allowed.code(), "--" + option + " " + key.path + " (" + key.key.name() +
                                    "): " + allowed.message() + "; an admin grants it with " +
                                    "'evledger key grant" + fix + "'");
}

// The projections read a runner's owner and host from its scope ("owner:<id>", "host:<id>"):
// without them its reruns never count towards a replication, so say so.
void warn_without_identity(const KeyPolicy& policy, const LoadedKey& key) {
  bool owner = false, host = false;
  for (const std::string& entry : policy.find(key.key.public_key())->scope) {
    owner = owner || entry.rfind("owner:", 0) == 0;
    host = host || entry.rfind("host:", 0) == 0;
  }
  if (owner && host) return;
  std::fprintf(stderr,
               "evledger: warning: runner %s has no owner:<id> and host:<id> scope entries; its "
               "reruns never count towards 'replicated' (grant it with --scope owner:ID --scope "
               "host:ID)\n",
               key.key.name().c_str());
}

void print_summary(const gen::ActivityStats& s, const gen::ActivityTotals& t, uint64_t size) {
  std::printf(
      "%llu reruns (%llu confirming, %llu of them replications; %llu contradicting; %llu "
      "refuting; %llu on another GPU), %llu attestations (%llu reproduced, %llu "
      "could_not_reproduce, %llu environment_note, %llu regression_observed), %llu "
      "retractions, %llu supersessions, %llu lab environments\n"
      "%llu events appended, %llu already present, %llu rejected; ledger size %llu\n",
      static_cast<unsigned long long>(s.confirming + s.contradicting + s.refuting + s.other_gpu),
      static_cast<unsigned long long>(s.confirming),
      static_cast<unsigned long long>(s.replications),
      static_cast<unsigned long long>(s.contradicting),
      static_cast<unsigned long long>(s.refuting), static_cast<unsigned long long>(s.other_gpu),
      static_cast<unsigned long long>(s.attestations[0] + s.attestations[1] + s.attestations[2] +
                                      s.attestations[3]),
      static_cast<unsigned long long>(s.attestations[0]),
      static_cast<unsigned long long>(s.attestations[1]),
      static_cast<unsigned long long>(s.attestations[2]),
      static_cast<unsigned long long>(s.attestations[3]),
      static_cast<unsigned long long>(s.retractions),
      static_cast<unsigned long long>(s.supersessions),
      static_cast<unsigned long long>(s.manifests), static_cast<unsigned long long>(t.added),
      static_cast<unsigned long long>(t.present), static_cast<unsigned long long>(t.rejected),
      static_cast<unsigned long long>(size));
}

constexpr size_t kActivityBatch = 1000;

}  // namespace

int gen_activity(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("gen takes no positional arguments"));
  if (args.has("runs") || args.has("out")) {
    return fail(usage_error("--activity appends to --ledger; it takes no --runs or --out"));
  }
  auto events = args.get_u64("activity", 0, {1, 10'000'000, "events"});
  if (!events) return fail(events.error());
  auto seed = args.get_u64("seed", 1, kAnyU64);
  if (!seed) return fail(seed.error());
  auto runners = load_keys(args, "runner-key");
  if (!runners) return fail(runners.error());
  auto attestors = load_keys(args, "attestor-key");
  if (!attestors) return fail(attestors.error());
  if (args.all("curator-key").size() != 1) {
    return fail(usage_error("gen --activity needs one --curator-key FILE"));
  }
  auto curator = load_keys(args, "curator-key");
  if (!curator) return fail(curator.error());
  auto ledger = open_ledger_to_append(args);
  if (!ledger) return fail(ledger.error());

  KeyPolicy policy = (*ledger)->policy();
  uint64_t size = (*ledger)->size();
  gen::ActivityOptions options;
  options.events = *events;
  options.seed = *seed;
  std::map<PublicKey, const SecretKey*> keys;
  auto admit = [&](const std::vector<LoadedKey>& list, const char* option, const Payload& kind,
                   const char* fix, std::vector<KeyRef>& refs) -> Status {
    for (const LoadedKey& k : list) {
      EVL_RETURN_IF_ERROR(check_key_role(policy, size, k, option, kind, fix));
      if (std::holds_alternative<Rerun>(kind)) warn_without_identity(policy, k);
      keys[k.key.public_key()] = &k.key;
      refs.push_back(KeyRef{k.key.public_key(), k.key.name()});
    }
    return Status::ok();
  };
  std::vector<KeyRef> curators;
  Status admitted = admit(*runners, "runner-key", Rerun{},
                          " --role runner --scope owner:ID --scope host:ID", options.runners);
  if (admitted) {
    admitted = admit(*attestors, "attestor-key", Attestation{}, " --role attestor",
                     options.attestors);
  }
  if (admitted) admitted = admit(*curator, "curator-key", Correction{}, " --role curator", curators);
  if (!admitted) return fail(admitted);
  options.curator = curators.front();
  auto subjects = gen::read_activity_subjects(**ledger);
  if (!subjects) return fail(subjects.error());
  auto plan = gen::plan_activity(*subjects, options);
  if (!plan) return fail(plan.error());
  Progress progress("activity", plan->events.size());
  auto totals = gen::append_activity(**ledger, plan->events, keys, kActivityBatch,
                                     [&](uint64_t done) { progress.update(done); });
  if (!totals) return fail(totals.error());
  for (const std::string& problem : totals->problems) {
    std::fprintf(stderr, "evledger: rejected: %s\n", problem.c_str());
  }
  print_summary(plan->stats, *totals, (*ledger)->size());
  return totals->rejected == 0 ? kExitOk : kExitRejected;
}

}  // namespace evl::cli
