// evledger rebuild — fold the whole log into fresh projections and print their digest; with
// --check, the auditor's comparison of a fresh fold with every signed statement.
#include <nlohmann/json.hpp>

#include <functional>
#include <future>
#include <optional>

#include "events/bytes.h"
#include "events/utf8.h"
#include "ledger/audit.h"
#include "projections/digest.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "projections/statement_audit.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger rebuild --ledger DIR [--log-key FILE] [--json]\n"
    "       evledger rebuild --ledger DIR --check [--vkey VKEY] [--json]\n"
    "\n"
    "Rebuilds every projection (run views, evidence, ranks, leadership history) from the log,\n"
    "in one transaction: readers see the old state until the new one is complete. A progress\n"
    "bar goes to standard error when it is a terminal. Prints the projection digest before\n"
    "and after (they must be equal: the projections are a pure function of the log) and the\n"
    "signed statement of the newest checkpoint, which must state the rebuilt digest (the\n"
    "rebuild fails, changing nothing, when it does not):\n"
    "  evledger/projections/v3 <origin> <size> <base64 digest>\n"
    "\n"
    "--check changes nothing (the ledger is opened read-only): it folds the log into a fresh\n"
    "in-memory state and compares its digest at every size with a stored statement, checks\n"
    "each statement's signature by the log key (the genesis's, or --vkey), and compares the\n"
    "stored projections with the newest statement. Reports the first mismatch with its size,\n"
    "the digest expected (folded from the log) and the one found. Checkpoints without a\n"
    "statement (signed before statements existed, or by a writer without projections), and\n"
    "statements of another projection format (made by an evledger that folds the log\n"
    "otherwise; their signatures are checked), are counted, not failures. Exit 0 when\n"
    "everything matches, 1 on the first mismatch or when there is no statement to check,\n"
    "2 usage, 3 I/O.\n";

// The digest of the stored projections and the log size they cover, from one read snapshot;
// `opened` is called once that snapshot is open (or reading failed).
Result<std::pair<Digest, uint64_t>> state_digest(const Ledger& ledger,
                                                 const std::function<void()>& opened = [] {}) {
  std::pair<Digest, uint64_t> out{};
  bool told = false;
  Status s = ledger.read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
    told = true;
    opened();
    auto digest = projection_digest(state);
    if (!digest) return digest.error();
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != size) return rejected("the projections do not cover the log");
    out = {*digest, size};
    return Status::ok();
  });
  if (!told) opened();
  if (!s) return s;
  return out;
}

// The structure of the ledger's LMDB file, checked before LMDB maps it: a damaged file fails
// the command instead of crashing it (ledger/audit.h).
Status checked_storage(const Args& args) {
  auto dir = args.require("ledger");
  return dir ? check_ledger_storage(*dir) : dir.error();
}

int rebuild(const Args& args) {
  if (Status storage = checked_storage(args); !storage) return fail(storage);
  // A bar on a terminal while the rebuild folds (not while opening catches the state up).
  std::optional<Progress> progress;
  ProjectionHookOptions projections;
  projections.rebuild_progress = [&](uint64_t folded, uint64_t total) {
    if (progress) progress->update(folded, total);
  };
  auto ledger = open_ledger(args, true, projections);  // opening catches the projections up
  if (!ledger) return fail(ledger.error());
  // The stored projections' digest is computed on a second thread, from a read snapshot opened
  // before the rebuild starts: LMDB readers keep their snapshot while the rebuild's transaction
  // runs and commits, and the scan fills the part of a core that the fold leaves idle, instead
  // of running first while nothing else does.
  std::promise<void> snapshot;
  auto before_scan = std::async(std::launch::async, [&] {
    return state_digest(**ledger, [&] { snapshot.set_value(); });
  });
  snapshot.get_future().wait();
  std::fprintf(stderr, "rebuilding the projections of %llu entries...\n",
               static_cast<unsigned long long>((*ledger)->size()));
  int64_t start = now_ms();
  progress.emplace("rebuild", (*ledger)->size());
  // The ledger refuses to commit a rebuilt state whose statement differs from the one signed.
  Status rebuilt = (*ledger)->rebuild_state();
  progress.reset();  // ends the bar's line
  double seconds = (now_ms() - start) / 1000.0;
  auto before = before_scan.get();
  if (!rebuilt) return fail(rebuilt);
  if (!before) return fail(before.error().with_context("the projections before the rebuild"));
  // The rebuilt digest: the statement signed for the log's size states it (the ledger commits
  // a rebuild only when its digest is the one signed for that size, and signs it when none
  // was); a full scan only when no statement is stored for that size.
  const uint64_t size = (*ledger)->size();
  std::optional<std::string> note;
  Digest after{};
  if (auto stored = (*ledger)->statement(size)) {
    auto key = (*ledger)->log_verifier();
    if (!key) return fail(key.error());
    auto statement = open_projection_statement(*stored, *key);
    if (!statement) return fail(corrupt("stored " + statement.error().message()));
    note = *stored;
    after = statement->digest;
  } else if (stored.error().code() != Code::kNotFound) {
    return fail(stored.error());
  } else {
    auto scanned = state_digest(**ledger);
    if (!scanned) return fail(scanned.error());
    after = scanned->first;
  }
  const bool same = before->first == after;
  if (args.has("json")) {
    nlohmann::ordered_json j;
    j["size"] = size;
    j["digest"] = base64_encode(after);
    j["previousDigest"] = base64_encode(before->first);
    j["identical"] = same;
    j["matchesStatement"] = note ? nlohmann::ordered_json(true) : nullptr;
    j["statement"] = note ? nlohmann::ordered_json(*note) : nullptr;
    j["seconds"] = seconds;
    print_json_line(j);
  } else {
    std::printf("rebuilt %llu entries in %.2f s; digest %s (%s the incremental state; %s)\n",
                static_cast<unsigned long long>(size), seconds, base64_encode(after).c_str(),
                same ? "identical to" : "DIFFERENT from",
                note ? "the signed statement below states it"
                     : "no statement is stored for this size");
    if (note) std::fputs(visible_lines(*note).c_str(), stdout);
  }
  if (!same && note) {
    return fail(corrupt("the stored projections differed from the log's fold, which the "
                        "statement signed at size " + std::to_string(size) +
                        " confirms: they had been changed outside evledger (or by a bug); the "
                        "rebuilt ones now replace them"));
  }
  if (!same) {
    return fail(corrupt("the rebuilt projections differ from the incremental ones: a bug in "
                        "evledger, or state changed outside it"));
  }
  return kExitOk;
}

int check_command(const Args& args) {
  if (Status storage = checked_storage(args); !storage) {
    std::fprintf(stderr, "evledger: check FAILED: %s\n",
                 visible_lines(storage.message()).c_str());
    return exit_code(storage.code());
  }
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
    j["otherFormatStatements"] = report.other_format.size();
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
                report.statements.size(), visible_text(key->name).c_str(),
                static_cast<unsigned long long>(report.statements.front().first),
                static_cast<unsigned long long>(report.statements.back().first),
                static_cast<unsigned long long>(report.entries), report.stored_state.c_str(),
                report.unstated.size(), static_cast<unsigned long long>(report.checkpoints),
                seconds);
  }
  if (!report.other_format.empty()) {
    std::fprintf(stderr,
                 "evledger: %zu statement(s) of another projection format (sizes %llu to %llu, "
                 "the last '%s') were not checked: an evledger that folds the log the same way "
                 "checks them\n",
                 report.other_format.size(),
                 static_cast<unsigned long long>(report.other_format.front().first),
                 static_cast<unsigned long long>(report.other_format.back().first),
                 visible_text(report.other_format.back().second).c_str());
  }
  if (!report.status) {
    std::fprintf(stderr, "evledger: check FAILED: %s\n",
                 visible_lines(report.status.message()).c_str());
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
