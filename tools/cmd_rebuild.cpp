// evledger rebuild — fold the whole log into fresh projections and print their digest; with
// --check, the auditor's comparison of a fresh fold with every signed statement.
#include <nlohmann/json.hpp>

#include "events/bytes.h"
#include "projections/digest.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "projections/statement_audit.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger rebuild --ledger DIR [--log-key FILE] [--json]\n"
    "       evledger rebuild --ledger DIR --check [--vkey VKEY] [--json]\n"
    "\n"
    "Rebuilds every projection (run views, evidence, ranks, leadership history) from the log,\n"
    "in one transaction: readers see the old state until the new one is complete. Prints the\n"
    "projection digest before and after (they must be equal: the projections are a pure\n"
    "function of the log) and the signed statement of the newest checkpoint, which must state\n"
    "the rebuilt digest (the rebuild fails, changing nothing, when it does not):\n"
    "  evledger/projections/v2 <origin> <size> <base64 digest>\n"
    "\n"
    "--check changes nothing (the ledger is opened read-only): it folds the log into a fresh\n"
    "in-memory state and compares its digest at every size with a stored statement, checks\n"
    "each statement's signature by the log key (the genesis's, or --vkey), and compares the\n"
    "stored projections with the newest statement. Reports the first mismatch with its size,\n"
    "the digest expected (folded from the log) and the one found. Checkpoints without a\n"
    "statement (signed before statements existed, or by a writer without projections) are\n"
    "counted, not failures. Exit 0 when everything matches, 1 on the first mismatch or when\n"
    "there is no statement to check, 2 usage, 3 I/O.\n";

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

int rebuild(const Args& args) {
  auto ledger = open_ledger(args, true);  // opening for writing catches the projections up
  if (!ledger) return fail(ledger.error());
  auto before = state_digest(**ledger);
  if (!before) return fail(before.error());
  std::fprintf(stderr, "rebuilding the projections of %llu entries...\n",
               static_cast<unsigned long long>(before->second));
  int64_t start = now_ms();
  // The ledger refuses to commit a rebuilt state whose statement differs from the one signed.
  if (Status s = (*ledger)->rebuild_state(); !s) return fail(s);
  double seconds = (now_ms() - start) / 1000.0;
  auto after = state_digest(**ledger);
  if (!after) return fail(after.error());
  bool same = before->first == after->first;
  // The newest checkpoint's statement, which must state the rebuilt digest.
  std::optional<std::string> note;
  std::optional<bool> stated;
  if (auto stored = (*ledger)->statement(after->second)) {
    auto key = (*ledger)->log_verifier();
    if (!key) return fail(key.error());
    auto statement = open_projection_statement(*stored, *key);
    if (!statement) return fail(corrupt("stored " + statement.error().message()));
    note = *stored;
    stated = statement->digest == after->first;
  } else if (stored.error().code() != Code::kNotFound) {
    return fail(stored.error());
  }
  if (args.has("json")) {
    nlohmann::ordered_json j;
    j["size"] = after->second;
    j["digest"] = base64_encode(after->first);
    j["previousDigest"] = base64_encode(before->first);
    j["identical"] = same;
    j["matchesStatement"] = stated ? nlohmann::ordered_json(*stated) : nullptr;
    j["statement"] = note ? nlohmann::ordered_json(*note) : nullptr;
    j["seconds"] = seconds;
    print_json_line(j);
  } else {
    std::printf("rebuilt %llu entries in %.2f s; digest %s (%s the incremental state; %s)\n",
                static_cast<unsigned long long>(after->second), seconds,
                base64_encode(after->first).c_str(), same ? "identical to" : "DIFFERENT from",
                !stated   ? "no statement is stored for this size"
                : *stated ? "the signed statement below states it"
                          : "the signed statement below states ANOTHER digest");
    if (note) std::fputs(note->c_str(), stdout);
  }
  if (!same && stated && *stated) {
    return fail(corrupt("the stored projections differed from the log's fold, which the "
                        "statement signed at size " + std::to_string(after->second) +
                        " confirms: they had been changed outside evledger (or by a bug); the "
                        "rebuilt ones now replace them"));
  }
  if (!same) {
    return fail(corrupt("the rebuilt projections differ from the incremental ones: a bug in "
                        "evledger, or state changed outside it"));
  }
  if (stated && !*stated) {
    return fail(corrupt("the rebuilt projections differ from the statement signed at size " +
                        std::to_string(after->second)));
  }
  return kExitOk;
}

int check_command(const Args& args) {
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto key = args.has("vkey") ? load_verifier_key(*args.get("vkey")) : (*ledger)->log_verifier();
  if (!key) return fail(key.error().with_context(args.has("vkey") ? "--vkey" : "the log key"));
  Progress progress("check", (*ledger)->size());
  int64_t start = now_ms();
  StatementAudit report = audit_projection_statements(
      **ledger, *key, [&](uint64_t folded) { progress.update(folded); });
  double seconds = (now_ms() - start) / 1000.0;
  if (args.has("json")) {
    auto digest = [](const std::optional<Digest>& d) {
      return d ? nlohmann::ordered_json(base64_encode(*d)) : nlohmann::ordered_json(nullptr);
    };
    nlohmann::ordered_json j;
    j["ok"] = report.status.is_ok();
    j["entries"] = report.entries;
    j["statements"] = report.statements.size();
    j["checkpoints"] = report.checkpoints;
    j["checkpointsWithoutStatement"] = report.unstated.size();
    j["storedState"] = report.stored_state;
    if (!report.status) {
      j["error"] = report.status.message();
      j["failedSize"] = report.failed_size ? nlohmann::ordered_json(*report.failed_size) : nullptr;
      j["expected"] = digest(report.expected);
      j["found"] = digest(report.found);
    }
    j["seconds"] = seconds;
    print_json_line(j);
  } else if (report.status) {
    std::printf("ok: %zu statements signed by %s (sizes %llu to %llu) match a fresh fold of the "
                "log's %llu entries; stored projections: %s; %zu of %llu checkpoints have no "
                "statement (%.2f s)\n",
                report.statements.size(), key->name.c_str(),
                static_cast<unsigned long long>(report.statements.front().first),
                static_cast<unsigned long long>(report.statements.back().first),
                static_cast<unsigned long long>(report.entries), report.stored_state.c_str(),
                report.unstated.size(), static_cast<unsigned long long>(report.checkpoints),
                seconds);
  }
  if (!report.status) {
    std::fprintf(stderr, "evledger: check FAILED: %s\n", report.status.message().c_str());
    return exit_code(report.status.code());
  }
  return kExitOk;
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("rebuild takes no arguments"));
  if (args.has("check")) {
    if (args.has("log-key")) return fail(usage_error("--check signs nothing: drop --log-key"));
    return check_command(args);
  }
  if (args.has("vkey")) return fail(usage_error("--vkey goes with --check"));
  return rebuild(args);
}

}  // namespace

int cmd_rebuild(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"log-key"}, {"json", false}, {"check", false}, {"vkey"}},
                     kUsage, run);
}

}  // namespace evl::cli
