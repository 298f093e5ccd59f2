// evledger rebuild — fold the whole log into fresh projections and print their digest; with
// --check, the auditor's comparison of a fresh fold with every signed statement.
#include <nlohmann/json.hpp>

#include "events/bytes.h"
#include "projections/digest.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
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
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
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

struct CheckReport {
  Status status;
  uint64_t entries = 0;
  std::vector<std::pair<uint64_t, ProjectionStatement>> statements;
  uint64_t checkpoints = 0;
  std::vector<uint64_t> unstated;       // checkpoint sizes without a statement
  std::string stored_state = "unchecked";  // the stored projections against the newest statement
  std::optional<uint64_t> failed_size;
  std::optional<Digest> expected, found;
};

// Fills `report` with the statements, each opened with `key`; the first that does not verify
// or does not fit the log fails.
Status collect_statements(const Ledger& ledger, const VerifierKey& key, CheckReport& report) {
  EVL_RETURN_IF_ERROR(ledger.scan_statements([&](uint64_t size, std::string_view note) -> Status {
    report.failed_size = size;
    auto statement = open_projection_statement(note, key);
    if (!statement) {
      return rejected("the statement stored for size " + std::to_string(size) +
                      " does not verify: " + statement.error().message());
    }
    if (statement->size != size) {
      return rejected("the statement stored for size " + std::to_string(size) + " states size " +
                      std::to_string(statement->size));
    }
    if (size > report.entries) {
      return rejected("the statement for size " + std::to_string(size) + " is beyond the log's " +
                      std::to_string(report.entries) + " entries");
    }
    report.statements.emplace_back(size, std::move(*statement));
    report.failed_size.reset();
    return Status::ok();
  }));
  size_t next = 0;
  return ledger.scan_checkpoints([&](uint64_t size, std::string_view) -> Status {
    ++report.checkpoints;
    while (next < report.statements.size() && report.statements[next].first < size) ++next;
    if (next == report.statements.size() || report.statements[next].first != size) {
      report.unstated.push_back(size);
    }
    return Status::ok();
  });
}

Status check(const Ledger& ledger, const VerifierKey& key, CheckReport& report) {
  report.entries = ledger.size();
  EVL_RETURN_IF_ERROR(collect_statements(ledger, key, report));
  if (report.statements.empty()) {
    return not_found("ledger " + ledger.dir() + " has no projection statement to check (it was "
                     "written before statements existed, or without projections); any append "
                     "or 'evledger rebuild' signs one for the newest checkpoint");
  }
  std::vector<uint64_t> sizes;
  for (const auto& [size, statement] : report.statements) sizes.push_back(size);
  Progress progress("check", report.entries);
  size_t at = 0;
  EVL_RETURN_IF_ERROR(fold_projection_digests(
      ledger, sizes, [&](uint64_t size, const Digest& digest) -> Status {
        progress.update(size);
        const ProjectionStatement& statement = report.statements[at++].second;
        if (digest == statement.digest) return Status::ok();
        report.failed_size = size;
        report.expected = digest;
        report.found = statement.digest;
        return rejected("the statement signed at size " + std::to_string(size) + " says digest " +
                        base64_encode(statement.digest) + ", but folding the log's first " +
                        std::to_string(size) + " entries gives " + base64_encode(digest));
      }));
  // The projections the ledger serves must be those the newest statement describes.
  const auto& [newest, statement] = report.statements.back();
  return ledger.read_state([&](const KeyValueStore& state, uint64_t) -> Status {
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != newest) {
      report.stored_state = "not compared: they cover " + std::to_string(*applied) +
                            " entries, the newest statement " + std::to_string(newest);
      return Status::ok();
    }
    const uint64_t size = newest;
    auto digest = projection_digest(state);
    if (!digest) return digest.error();
    if (*digest == statement.digest) {
      report.stored_state = "match";
      return Status::ok();
    }
    report.stored_state = "DIFFERENT";
    report.failed_size = size;
    report.expected = statement.digest;
    report.found = *digest;
    return rejected("the stored projections of " + std::to_string(size) + " entries have digest " +
                    base64_encode(*digest) + ", but the statement signed at that size (which a "
                    "fresh fold of the log confirms) says " + base64_encode(statement.digest) +
                    ": they were changed outside evledger; 'evledger rebuild' refolds them");
  });
}

int check_command(const Args& args) {
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto key = args.has("vkey") ? load_verifier_key(*args.get("vkey")) : (*ledger)->log_verifier();
  if (!key) return fail(key.error().with_context(args.has("vkey") ? "--vkey" : "the log key"));
  CheckReport report;
  int64_t start = now_ms();
  report.status = check(**ledger, *key, report);
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
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
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
