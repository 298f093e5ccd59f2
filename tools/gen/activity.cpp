#include "tools/gen/activity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "events/event_builder.h"
#include "events/jcs.h"
#include "events/manifest_check.h"
#include "keys/signer.h"
#include "ledger/thread_pool.h"
#include "projections/query.h"
#include "tools/gen/random.h"
#include "tools/render.h"

namespace evl::gen {
namespace {

constexpr int64_t kMinuteMs = 60'000, kHourMs = 60 * kMinuteMs, kDayMs = 24 * kHourMs;

std::string slug_of(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') out.push_back(static_cast<char>(c - 'A' + 'a'));
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out.push_back(c);
    else if (!out.empty() && out.back() != '-') out.push_back('-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "key" : out;
}

std::string micros(double ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f \xC2\xB5s", ns / 1000.0);
  return buf;
}

std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::fabs(ratio - 1.0) * 100.0);
  return buf;
}

uint64_t whole(double v) { return static_cast<uint64_t>(std::llround(std::max(1.0, v))); }

// A GPU a runner lab may rerun on.
struct LabGpu {
  const char* product;
  const char* arch;
  const char* slug;
  uint64_t memory_bytes;
  const char* summary;  // for attestations' environment member
};
constexpr LabGpu kB200 = {"NVIDIA B200", "sm_100", "b200", 193273528320,
                          "NVIDIA B200 SXM 180GB, driver 580.65.06, CUDA 13.0, PyTorch 2.9.0"};
constexpr LabGpu kH100 = {"NVIDIA H100", "sm_90", "h100", 85899345920,
                          "NVIDIA H100 SXM 80GB, driver 580.65.06, CUDA 13.0, PyTorch 2.9.0"};

Json lab_environment(const LabGpu& gpu) {
  return O({{"apiVersion", kManifestApiVersion},
            {"kind", "ExecutionEnvironment"},
            {"metadata", O({{"name", std::string("evledger-rerun-lab-") + gpu.slug},
                            {"title", std::string("Rerun lab ") + gpu.product + " (synthetic)"}})},
            {"spec", O({{"hardware", O({{"vendor", "nvidia"},
                                        {"product", gpu.product},
                                        {"architecture", gpu.arch},
                                        {"memoryBytes", gpu.memory_bytes},
                                        {"count", 1}})},
                        {"software", O({{"operatingSystem", "Ubuntu 24.04"},
                                        {"driver", "580.65.06"},
                                        {"cudaToolkit", "13.0"},
                                        {"framework", O({{"name", "pytorch"},
                                                         {"version", "2.9"}})}})},
                        {"settings", O({{"clocksLocked", true}, {"persistenceMode", true}})}})}});
}

enum class Intent : uint8_t { kConfirming, kContradicting, kRefuting, kOtherGpu };

class Planner {
 public:
  Planner(const ActivitySubjects& subjects, const ActivityOptions& options)
      : s_(subjects), o_(options), rng_(options.seed ^ 0xAC71517E5EED0001ull) {
    for (size_t i = 0; i < s_.runs.size(); ++i) {
      const ObservedRun& r = s_.runs[i];
      if (rerunnable(r)) rerunnable_.push_back(i);
      if (!r.group.empty()) groups_[r.group].push_back(i);
    }
  }

  ActivityPlan run();

 private:
  // A latency in ns that a rerun can repeat and an attestation can quote.
  static bool timed(const ObservedRun& r) {
    return r.primary && r.primary->metric == "latency" && r.primary->unit == "ns" &&
           (r.primary->statistic == "mean" || r.primary->statistic == "median") &&
           r.primary->value >= 1;
  }
  static bool rerunnable(const ObservedRun& r) { return r.status == "passed" && timed(r); }
  const LabGpu& observed_gpu(const ObservedRun& r) const {
    auto hw = s_.environments.find(r.environment);
    return hw != s_.environments.end() && hw->second.architecture == kH100.arch ? kH100 : kB200;
  }
  const LabGpu& other_gpu(const ObservedRun& r) const {
    return &observed_gpu(r) == &kH100 ? kB200 : kH100;
  }
  std::string lab_environment_digest(const LabGpu& gpu);
  // Every body the planner makes passes the builder's rules (it writes within the limits).
  void add(Result<EventBody> body) {
    EVL_ASSERT(body.has_value());
    events_.push_back(std::move(body.value()));
  }
  void rerun();
  Json rerun_spec(const ObservedRun& r, Intent intent, double latency, int64_t at_ms,
                  const std::string& runner_slug);
  std::string rerun_cases(const ObservedRun& r, Intent intent, double latency);
  void attestation();
  bool retraction();
  bool supersession();

  const ActivitySubjects& s_;
  const ActivityOptions& o_;
  Rng rng_;
  ActivityStats stats_;
  std::vector<EventBody> manifests_, events_;
  std::vector<size_t> rerunnable_;
  std::map<std::string, std::vector<size_t>> groups_;  // comparison key → runs, log order
  std::map<std::string, std::string> lab_digests_;     // GPU slug → registered digest
  std::map<size_t, size_t> first_confirmer_;           // run → runner
  std::vector<size_t> confirmed_;                      // runs with a confirmation, in order
  std::set<size_t> corrected_;
  uint64_t reruns_ = 0;
};

std::string Planner::lab_environment_digest(const LabGpu& gpu) {
  auto it = lab_digests_.find(gpu.slug);
  if (it != lab_digests_.end()) return it->second;
  CheckedManifest checked = check_manifest(lab_environment(gpu), 1);
  const Digest digest = checked.digest;
  // Like an imported manifest: no claimed time, so it registers once.
  auto body = catalog_event(o_.runners.front().public_key, std::move(checked));
  EVL_ASSERT(body.has_value());
  manifests_.push_back(std::move(body.value()));
  ++stats_.manifests;
  return lab_digests_[gpu.slug] = digest_text(digest);
}

Json Planner::rerun_spec(const ObservedRun& r, Intent intent, double latency, int64_t at_ms,
                         const std::string& runner_slug) {
  bool refuted = intent == Intent::kRefuting;
  const std::string& stat = r.primary->statistic;
  double other = latency * rng_.between(0.99, 1.01);  // the statistic not compared
  Json latency_ns = O({{"mean", whole(stat == "mean" ? latency : other)},
                       {"median", whole(stat == "median" ? latency : other)},
                       {"p05", whole(latency * 0.97)},
                       {"p95", whole(latency * 1.04)},
                       {"minimum", whole(latency * 0.95)},
                       {"maximum", whole(latency * 1.09)}});
  std::string run_id = rng_.hex(16);
  std::string base = "https://reruns." + runner_slug + ".example.org/runs/" + run_id;
  Json spec = O({{"implementationDigest", r.implementation},
                 {"workloadDigest", r.workload},
                 {"protocolDigest", r.protocol}});
  spec.set("environmentDigest",
           intent == Intent::kOtherGpu ? lab_environment_digest(other_gpu(r)) : r.environment);
  spec.set("status", refuted ? "incorrect_numerical" : "passed");
  spec.set("correctness",
           O({{"comparator", "sol_execbench_eval"},
              {"maximumAbsoluteError", refuted ? 0.25 + std::round(rng_.uniform() * 1e3) / 1e3
                                               : 0.0039},
              {"maximumRelativeError", refuted ? 0.12 : 0.0078},
              {"matchedRatio", refuted ? std::round(rng_.between(0.9, 0.99) * 1e4) / 1e4 : 1.0}}));
  spec.set("timing", O({{"primaryStatistic", stat},
                        {"samples", 100 + rng_.below(401)},
                        {"latencyNs", std::move(latency_ns)}}));
  spec.set("evidence",
           O({{"logs", O({{"uri", base + "/log.txt"}, {"digest", "sha256:" + rng_.hex(64)}})},
              {"rawSamples",
               O({{"uri", base + "/samples.json"}, {"digest", "sha256:" + rng_.hex(64)}})},
              {"harness", O({{"repository", "https://git.example.org/evledger-lab/rerun-harness"},
                             {"commit", rng_.hex(40)}})}}));
  spec.set("observedAt", cli::format_time_ms(at_ms));
  return spec;
}

std::string Planner::rerun_cases(const ObservedRun& r, Intent intent, double latency) {
  uint64_t n = r.cases == 0 ? 4 : std::min<uint64_t>(r.cases, 24);
  Json cases = Json::array();
  for (uint64_t c = 0; c < n; ++c) {
    bool wrong = intent == Intent::kRefuting && (c == 0 || rng_.chance(0.3));
    cases.as_array().push_back(O({{"case", std::to_string(c)},
                                  {"status", wrong ? "incorrect_numerical" : "passed"},
                                  {"latencyNs", whole(latency * rng_.between(0.4, 1.6))}}));
  }
  return jcs_serialize(cases);
}

void Planner::rerun() {
  double roll = rng_.uniform();
  Intent intent = roll < 0.60   ? Intent::kConfirming
                  : roll < 0.75 ? Intent::kContradicting
                  : roll < 0.85 ? Intent::kRefuting
                                : Intent::kOtherGpu;
  size_t runners = o_.runners.size();
  size_t run = rng_.pick(rerunnable_);
  size_t runner = rng_.below(runners);
  bool replication = intent == Intent::kConfirming && runners > 1 && !confirmed_.empty() &&
                     rng_.chance(0.35);
  if (replication) {  // another runner repeats a confirmation
    run = rng_.pick(confirmed_);
    runner = (first_confirmer_[run] + 1 + rng_.below(runners - 1)) % runners;
    ++stats_.replications;
  }
  const ObservedRun& r = s_.runs[run];
  double ratio = intent == Intent::kConfirming      ? rng_.between(0.97, 1.03)
                 : intent == Intent::kContradicting ? rng_.between(1.15, 1.30)
                 : intent == Intent::kRefuting      ? rng_.between(0.98, 1.05)
                 : &other_gpu(r) == &kB200          ? rng_.between(0.42, 0.62)
                                                    : rng_.between(1.6, 2.4);
  double latency = std::round(r.primary->value * ratio);
  const KeyRef& key = o_.runners[runner];
  std::string runner_slug = slug_of(key.name);
  int64_t at_ms = r.observed_at_ms + 6 * kHourMs + static_cast<int64_t>(rng_.below(21 * kDayMs));
  Json spec = rerun_spec(r, intent, latency, at_ms, runner_slug);
  std::string seq = "s" + std::to_string(o_.seed) + "-" + std::to_string(++reruns_);
  Json manifest = O({{"apiVersion", kManifestApiVersion},
                     {"kind", "BenchmarkRun"},
                     {"metadata", O({{"name", ("rerun-" + seq + "-" + runner_slug).substr(0, 200)},
                                     {"title", "Controlled rerun of " + r.name + " by " +
                                                   key.name}})},
                     {"spec", std::move(spec)}});
  std::string cases = rng_.chance(0.5) ? rerun_cases(r, intent, latency) : std::string();
  // Claimed at the rerun's own observedAt, as every rerun is (events/event_builder.h).
  auto body = rerun_event(key.public_key, r.run, check_manifest(manifest, 1), std::move(cases));
  EVL_ASSERT(body.has_value());
  events_.push_back(std::move(body.value()));
  switch (intent) {
    case Intent::kConfirming:
      ++stats_.confirming;
      if (first_confirmer_.emplace(run, runner).second) confirmed_.push_back(run);
      break;
    case Intent::kContradicting: ++stats_.contradicting; break;
    case Intent::kRefuting: ++stats_.refuting; break;
    case Intent::kOtherGpu: ++stats_.other_gpu; break;
  }
}

void Planner::attestation() {
  size_t run = rng_.below(s_.runs.size());
  const ObservedRun& r = s_.runs[run];
  const KeyRef& key = o_.attestors[rng_.below(o_.attestors.size())];
  bool timed = Planner::timed(r);
  double reported = timed ? r.primary->value : 0;
  const LabGpu& gpu = observed_gpu(r);
  Attestation a;
  a.target = r.run;
  a.environment = gpu.summary;
  a.evidence_url = "https://gist.example.org/" + slug_of(key.name) + "/" + rng_.hex(32);
  auto measured = [&](double lo, double hi) {
    double ns = std::round(reported * rng_.between(lo, hi));
    a.observed_ns = whole(ns);
    return ns;
  };
  uint64_t type = rng_.below(4);
  if (!timed && (type == 0 || type == 3)) type = 2;
  a.type = static_cast<AttestationType>(type);
  bool variant = rng_.chance(0.5);
  switch (a.type) {
    case AttestationType::kReproduced: {
      double ns = measured(0.97, 1.03);
      a.text = variant
          ? "Reproduced on our own " + std::string(gpu.product) + " node: " + micros(ns) +
                " measured as the mean of 200 timed iterations after 20 warm-up runs (CUDA "
                "graphs off, clocks locked), against the reported " + micros(reported) +
                ". Within " + percent(ns / reported) + "% of the published figure."
          : "Built the submission from source and ran the full suite with the reference "
            "harness: every case passed the correctness check and the suite-mean latency was " +
                micros(ns) + ", " + percent(ns / reported) + "% from the reported " +
                micros(reported) + ".";
      break;
    }
    case AttestationType::kCouldNotReproduce:
      if (timed && variant) {
        double ns = measured(1.2, 1.6);
        a.text = "Could not reproduce: on " + std::string(gpu.product) +
                 " with driver 580.65.06 the kernel measures " + micros(ns) +
                 " against the reported " + micros(reported) + " (" + percent(ns / reported) +
                 "% slower), consistently over five runs. Happy to share the Nsight Systems "
                 "trace.";
      } else {
        a.text = "Could not reproduce: the submission fails to compile against CUDA 13.0 "
                 "(undefined reference to a TMA descriptor helper). The repository pins no "
                 "toolkit version; please state the one the result was measured with.";
      }
      break;
    case AttestationType::kEnvironmentNote:
      a.text = variant
          ? "The reported latency needs locked clocks: with default boost behaviour on a "
            "shared " + std::string(gpu.product) + " node we see up to 8% run-to-run "
            "variation on this workload. Rerun with clocks locked and persistence mode on."
          : "Note for anyone rerunning: the kernel needs PyTorch 2.9 or newer for its custom "
            "op registration; older builds silently fall back to the reference "
            "implementation, which is several times slower.";
      if (rng_.chance(0.4)) a.evidence_url.clear();
      break;
    case AttestationType::kRegressionObserved: {
      double ns = measured(1.08, 1.35);
      a.text = variant
          ? "Regression: after moving to driver 590.12 the same revision runs at " + micros(ns) +
                " (reported " + micros(reported) + ", +" + percent(ns / reported) +
                "%). Rolling the driver back restores the original figure, so this looks like "
                "a driver change rather than the kernel."
          : "Regression observed with CUDA 13.1: suite-mean latency rose to " + micros(ns) +
                " from " + micros(reported) + " (+" + percent(ns / reported) +
                "%), mostly in the cases with 8192 tokens or more.";
      break;
    }
  }
  // The simulated clock of the attestor: a day to weeks after the observation.
  const int64_t clock = r.observed_at_ms + kDayMs + static_cast<int64_t>(rng_.below(45 * kDayMs));
  ++stats_.attestations[type];
  add(attestation_event(key.public_key, std::move(a), clock));
}

bool Planner::retraction() {
  static constexpr const char* kReasons[] = {
      "Withdrawn at the submitters' request: the timing harness skipped the synchronization "
      "after the last launch, so the reported latency is too low.",
      "The implementation revision this run names was force-pushed away; the source it was "
      "measured from no longer exists.",
      "Duplicate submission of an identical kernel under another team name; the earlier "
      "entry stands."};
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t run = rng_.below(s_.runs.size());
    if (!corrected_.insert(run).second) continue;
    const ObservedRun& r = s_.runs[run];
    Correction c;
    c.kind = Correction::Kind::kRetract;
    c.target = r.run;
    c.reason = kReasons[rng_.below(std::size(kReasons))];
    const int64_t clock =
        r.observed_at_ms + 2 * kDayMs + static_cast<int64_t>(rng_.below(60 * kDayMs));
    add(correction_event(o_.curator.public_key, std::move(c), clock));
    ++stats_.retractions;
    return true;
  }
  return false;
}

bool Planner::supersession() {
  static constexpr const char* kReasons[] = {
      "Resubmission with the stream synchronization fix; the earlier run measured an "
      "incomplete kernel.",
      "Re-measured by the source on the corrected evaluation harness; this run replaces the "
      "earlier one."};
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t old_run = rng_.below(s_.runs.size());
    const ObservedRun& old_r = s_.runs[old_run];
    if (old_r.group.empty()) continue;
    const auto& group = groups_[old_r.group];
    auto self = std::find(group.begin(), group.end(), old_run);
    std::vector<size_t> later;
    for (auto it = self + 1; it != group.end(); ++it) {
      if (corrected_.count(*it) == 0) later.push_back(*it);
    }
    if (later.empty() || corrected_.count(old_run) != 0) continue;
    size_t new_run = rng_.pick(later);
    corrected_.insert(old_run);
    corrected_.insert(new_run);
    const ObservedRun& new_r = s_.runs[new_run];
    Correction c;
    c.kind = Correction::Kind::kSupersede;
    c.target = old_r.run;
    c.replacement = new_r.run;
    c.reason = kReasons[rng_.below(std::size(kReasons))];
    const int64_t clock = std::max(old_r.observed_at_ms, new_r.observed_at_ms) + kDayMs +
                          static_cast<int64_t>(rng_.below(10 * kDayMs));
    add(correction_event(o_.curator.public_key, std::move(c), clock));
    ++stats_.supersessions;
    return true;
  }
  return false;
}

ActivityPlan Planner::run() {
  for (uint64_t k = 0; k < o_.events; ++k) {
    double roll = rng_.uniform();
    if (roll < 0.55 && !rerunnable_.empty()) {
      rerun();
    } else if (roll < 0.93) {
      attestation();
    } else if (roll < 0.97) {
      if (!retraction()) attestation();
    } else if (!supersession() && !retraction()) {
      attestation();
    }
  }
  std::stable_sort(events_.begin(), events_.end(), [](const EventBody& a, const EventBody& b) {
    return a.claimed_time_ms < b.claimed_time_ms;
  });
  ActivityPlan plan;
  plan.events = std::move(manifests_);
  for (auto& e : events_) plan.events.push_back(std::move(e));
  plan.stats = stats_;
  return plan;
}

}  // namespace

std::optional<ObservedRun> observed_run(const ManifestText& text) {
  auto manifest = parse_json(text.canonical);
  if (!manifest) return std::nullopt;
  const Json* spec = manifest->find("spec");
  if (spec == nullptr || !spec->is_object()) return std::nullopt;
  ObservedRun r;
  r.run = sha256(as_bytes(text.canonical));
  if (auto metadata = parse_json(text.metadata)) r.name = json_string(*metadata, "name").value_or("");
  r.status = json_string(*spec, "status").value_or("");
  r.protocol = json_string(*spec, "protocolDigest").value_or("");
  r.workload = json_string(*spec, "workloadDigest").value_or("");
  r.environment = json_string(*spec, "environmentDigest").value_or("");
  r.implementation = json_string(*spec, "implementationDigest").value_or("");
  if (r.protocol.empty() || r.workload.empty() || r.environment.empty() ||
      r.implementation.empty()) {
    return std::nullopt;
  }
  r.primary = primary_measurement(*spec);
  r.observed_at_ms = parse_utc_time_ms(json_string(*spec, "observedAt").value_or("")).value_or(0);
  double cases = source_native_metrics(*spec).cases_total.value_or(0);
  r.cases = cases >= 1 && cases <= 1e6 ? static_cast<uint64_t>(cases) : 0;
  if (r.name.empty()) r.name = digest_text(r.run).substr(0, 19);
  return r;
}

namespace {

// Each run's comparison group, as the projections (projections/query.h) list it.
Status read_groups(const Ledger& ledger, std::vector<ObservedRun>& runs) {
  std::map<std::string, std::string> groups;  // run digest text → comparison key text
  EVL_RETURN_IF_ERROR(ledger.read_state([&](const KeyValueStore& state, uint64_t) -> Status {
    auto covered = projected_size(state);
    if (!covered) return covered.error();
    if (*covered != ledger.size()) {
      return rejected("the ledger's projections cover " + std::to_string(*covered) + " of its " +
                      std::to_string(ledger.size()) + " entries; run 'evledger rebuild'");
    }
    auto listed = list_runs(state);
    if (!listed) return listed.error();
    for (const Json& run : *listed) {
      auto digest = json_string(run, "run");
      auto key = json_string(run, "comparisonKey");
      if (digest && key) groups.emplace(*digest, *key);
    }
    return Status::ok();
  }));
  for (ObservedRun& r : runs) {
    if (auto it = groups.find(digest_text(r.run)); it != groups.end()) r.group = it->second;
  }
  return Status::ok();
}

}  // namespace

Result<ActivitySubjects> read_activity_subjects(const Ledger& ledger) {
  ActivitySubjects out;
  Status s = ledger.scan(0, ledger.size(), [&](uint64_t index, ByteView bytes) -> Status {
    auto entry = decode_entry(bytes);
    auto body = entry ? decode_body(entry->body) : Result<EventBody>(entry.error());
    if (!body) return corrupt("entry " + std::to_string(index) + ": " + body.error().message());
    if (const auto* o = std::get_if<Observation>(&body->payload)) {
      if (auto run = observed_run(o->manifest)) out.runs.push_back(std::move(*run));
    } else if (const auto* m = std::get_if<ManifestEvent>(&body->payload)) {
      if (m->manifest.canonical.find("\"kind\":\"ExecutionEnvironment\"") == std::string::npos) {
        return Status::ok();
      }
      auto manifest = parse_json(m->manifest.canonical);
      const Json* spec = manifest ? manifest->find("spec") : nullptr;
      auto hw = spec != nullptr ? environment_hardware(*spec) : std::nullopt;
      if (hw) out.environments[digest_text(sha256(as_bytes(m->manifest.canonical)))] = *hw;
    }
    return Status::ok();
  });
  if (!s) return s;
  EVL_RETURN_IF_ERROR(read_groups(ledger, out.runs));
  return out;
}

Result<ActivityPlan> plan_activity(const ActivitySubjects& subjects,
                                   const ActivityOptions& options) {
  if (subjects.runs.empty()) {
    return rejected("the ledger holds no observed run to rerun, attest or correct; import a "
                    "catalog first (evledger gen --runs N | evledger import --key IMPORTER -)");
  }
  if (options.runners.empty() || options.attestors.empty()) {
    return rejected("activity needs at least one runner key and one attestor key");
  }
  return Planner(subjects, options).run();
}

Result<ActivityTotals> append_activity(Ledger& ledger, std::span<const EventBody> bodies,
                                       const std::map<PublicKey, const SecretKey*>& keys,
                                       size_t batch,
                                       const std::function<void(uint64_t done)>& on_batch) {
  for (const EventBody& body : bodies) {
    if (keys.count(body.author) == 0) return usage_error("no secret key for an event's author");
  }
  ActivityTotals totals;
  ThreadPool pool;
  batch = std::max<size_t>(1, batch);
  for (size_t start = 0; start < bodies.size(); start += batch) {
    size_t n = std::min(batch, bodies.size() - start);
    std::vector<Result<Bytes>> signed_entries(n, Result<Bytes>(usage_error("unsigned")));
    pool.parallel_for(n, [&](size_t i) {
      const EventBody& body = bodies[start + i];
      signed_entries[i] = sign_event(*keys.at(body.author), body);
    });
    std::vector<Bytes> entries;
    std::vector<size_t> positions;
    auto reject = [&](size_t position, const Status& why) {
      ++totals.rejected;
      if (totals.problems.size() < 5) {
        totals.problems.push_back("event " + std::to_string(position + 1) + " (" +
                                  event_kind_name(bodies[position].kind()) + "): " +
                                  why.message());
      }
    };
    for (size_t i = 0; i < n; ++i) {
      if (!signed_entries[i]) {
        reject(start + i, signed_entries[i].error());
        continue;
      }
      entries.push_back(std::move(signed_entries[i].value()));
      positions.push_back(start + i);
    }
    std::vector<AppendOutcome> outcomes = ledger.append(entries);
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (!outcomes[i].status) reject(positions[i], outcomes[i].status);
      else if (outcomes[i].added) ++totals.added;
      else ++totals.present;
    }
    if (on_batch) on_batch(start + n);
  }
  return totals;
}

}  // namespace evl::gen
