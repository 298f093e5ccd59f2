// evledger mirror — keep a verified copy of a log from any host of its tile layout.
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <thread>

#include "ledger/mirror.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger mirror --from URL --ledger DIR --vkey VKEY [--follow SECONDS]\n"
    "                       [--connections N] [--policy FILE] [--json]\n"
    "\n"
    "Copies the log that URL serves (evledger serve, or any static host of an export-tiles\n"
    "directory, nginx for one) into the mirror ledger DIR, created when missing, verifying\n"
    "everything on the way in: the checkpoint's signature by VKEY (the log's verifier key, a\n"
    "key or a file holding one) and its consistency with the checkpoint the mirror verified\n"
    "before; every entry as 'evledger verify' checks it (canonical form, id, signatures, key\n"
    "policy at its position); the tree, recomputed, against the signed root. Entries are\n"
    "stored at the same indices with the log's own signed checkpoints; the mirror folds its own\n"
    "projections and, where the upstream publishes its signed statement about them, checks\n"
    "that the two agree. A mirror holds no log key and signs nothing. Serve it with 'evledger\n"
    "serve --read-only --ledger DIR': the same URLs, byte for byte.\n"
    "\n"
    "Bundles are fetched over N kept-alive connections (--connections, 1 to 64, default 4)\n"
    "while earlier ones are verified and stored, 8,192 entries per transaction: an interrupted\n"
    "mirror resumes after what it stored. --follow S pulls again every S seconds (1 to 86400)\n"
    "and keeps up with a growing log until stopped; network errors are then retried.\n"
    "--policy FILE (a C2SP tlog-policy) demands the upstream's checkpoint carry its quorum of\n"
    "witness cosignatures.\n"
    "\n"
    "A split view (the upstream shows a checkpoint that is not consistent with one verified\n"
    "before) stops the mirror: the evidence is written under DIR/evidence/ and named on\n"
    "stderr; 'evledger verify --evidence FILE --vkey VKEY' checks it offline.\n"
    "\n"
    "Exit 0 when the mirror holds the upstream's checkpoint, 1 when the upstream fails\n"
    "verification (nothing of the failing transaction is stored) or shows a split view, 2 for\n"
    "bad arguments, 3 for I/O and network errors. Progress on stderr; --json prints a summary\n"
    "object per pull.\n";

void print_report(const MirrorReport& r, const std::string& from, bool json) {
  if (json) {
    nlohmann::ordered_json j = {{"ok", r.status.is_ok()},
                                {"from", from},
                                {"previousSize", r.previous_size},
                                {"size", r.size},
                                {"upstreamSize", r.upstream_size},
                                {"statementChecked", r.statement_checked}};
    if (r.evidence) j["evidence"] = *r.evidence;
    if (!r.status) j["error"] = r.status.message();
    print_json_line(j);
    return;
  }
  if (!r.status) return;
  if (r.size == r.previous_size) {
    std::printf("up to date at size %llu (upstream %llu)\n",
                static_cast<unsigned long long>(r.size),
                static_cast<unsigned long long>(r.upstream_size));
    return;
  }
  std::printf("mirrored %llu entries: size %llu%s\n",
              static_cast<unsigned long long>(r.size - r.previous_size),
              static_cast<unsigned long long>(r.size),
              r.statement_checked ? ", the upstream's projection statement matches" : "");
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("mirror takes no arguments"));
  auto from = args.require("from");
  if (!from) return fail(from.error());
  auto dir = args.require("ledger");
  if (!dir) return fail(dir.error());
  auto vkey = args.require("vkey");
  if (!vkey) return fail(vkey.error());
  auto key = load_verifier_key(*vkey);
  if (!key) return fail(key.error().with_context("--vkey"));
  auto follow = args.get_optional_u64("follow", {1, 86400, "seconds between pulls"});
  if (!follow) return fail(follow.error());
  auto connections = args.get_u64("connections", 4, {1, 64, "kept-alive connections"});
  if (!connections) return fail(connections.error());
  MirrorOptions options;
  options.log_key = *key;
  if (Status s = load_policy_option(args, options.policy); !s) return fail(s);

  OpenOptions open;
  open.dir = *dir;
  open.create = true;
  open.mirror_of = *key;
  open.hook = make_projection_hook(writer_projection_options());
  auto mirror = Ledger::open(open);
  if (!mirror) return fail(mirror.error());
  auto upstream = Upstream::open(*from, static_cast<unsigned>(*connections));
  if (!upstream) return fail(upstream.error().with_context("--from"));

  std::optional<Progress> bar;
  options.progress = [&](uint64_t done, uint64_t total) {
    if (!bar) bar.emplace("mirror", total);
    bar->update(done, total);
  };
  for (;;) {
    MirrorReport report = pull_upstream(**mirror, **upstream, options);
    bar.reset();
    print_report(report, *from, args.has("json"));
    std::fflush(stdout);
    const bool retry = follow->has_value() && report.status.code() == Code::kIo;
    if (!report.status && !retry) return fail(report.status.with_context("mirror of " + *from));
    if (!report.status) {
      std::fprintf(stderr, "evledger: %s; trying again in %llu s\n",
                   report.status.message().c_str(), static_cast<unsigned long long>(**follow));
    }
    if (!follow->has_value()) return kExitOk;
    std::this_thread::sleep_for(std::chrono::seconds(**follow));
  }
}

}  // namespace

int cmd_mirror(const std::vector<std::string>& argv) {
  return run_command(argv,
                     {{"from"}, {"ledger"}, {"vkey"}, {"follow"}, {"connections"}, {"policy"},
                      {"json", false}},
                     kUsage, run);
}

}  // namespace evl::cli
