// evledger rebuild — fold the whole log into fresh projections and print their digest.
#include "events/bytes.h"
#include "projections/digest.h"
#include "projections/query.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger rebuild --ledger DIR [--log-key FILE] [--json]\n"
    "\n"
    "Rebuilds every projection (run views, evidence, ranks, leadership history) from the log,\n"
    "in one transaction: readers see the old state until the new one is complete. Prints the\n"
    "projection digest before and after (they must be equal: the projections are a pure\n"
    "function of the log) and the statement the log key signs about it:\n"
    "  evledger/projections/v1 <origin> <size> <base64 digest>\n"
    "An auditor rebuilds from a log prefix and compares digests.\n";

Result<std::pair<Digest, uint64_t>> state_digest(const Ledger& ledger) {
  std::pair<Digest, uint64_t> out{};
  Status s = ledger.read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
    auto digest = projection_digest(state);
    if (!digest) return digest.error();
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != size) return rejected("the projections do not cover the log");
    out = {*digest, size};
    return Status::ok();
  });
  if (!s) return s;
  return out;
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("rebuild takes no arguments"));
  auto ledger = open_ledger(args, true);  // opening for writing catches the projections up
  if (!ledger) return fail(ledger.error());
  auto before = state_digest(**ledger);
  if (!before) return fail(before.error());
  std::fprintf(stderr, "rebuilding the projections of %llu entries...\n",
               static_cast<unsigned long long>(before->second));
  int64_t start = now_ms();
  if (Status s = (*ledger)->rebuild_state(); !s) return fail(s);
  double seconds = (now_ms() - start) / 1000.0;
  auto after = state_digest(**ledger);
  if (!after) return fail(after.error());
  auto key = (*ledger)->log_verifier();
  std::string origin = key ? key->name : "";
  bool same = before->first == after->first;
  if (args.has("json")) {
    std::printf("{\"size\":%llu,\"digest\":\"%s\",\"previousDigest\":\"%s\",\"identical\":%s,"
                "\"seconds\":%.3f}\n",
                static_cast<unsigned long long>(after->second),
                base64_encode(after->first).c_str(), base64_encode(before->first).c_str(),
                same ? "true" : "false", seconds);
  } else {
    std::printf("rebuilt %llu entries in %.2f s; digest %s (%s the incremental state)\n",
                static_cast<unsigned long long>(after->second), seconds,
                base64_encode(after->first).c_str(), same ? "identical to" : "DIFFERENT from");
    std::fputs(projection_statement(origin, after->second, after->first).c_str(), stdout);
  }
  if (!same) {
    return fail(corrupt("the rebuilt projections differ from the incremental ones: a bug in "
                        "evledger, or state changed outside it"));
  }
  return kExitOk;
}

}  // namespace

int cmd_rebuild(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"log-key"}, {"json", false}}, kUsage, run);
}

}  // namespace evl::cli
