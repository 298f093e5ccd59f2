// evledger verify — the auditor: re-check every entry from the stored bytes.
#include <nlohmann/json.hpp>

#include "events/file_read.h"
#include "events/utf8.h"
#include "keys/note.h"
#include "ledger/audit.h"
#include "ledger/thread_pool.h"
#include "ledger/tiles.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger verify (--ledger DIR | --tiles DIR | --url URL) [--vkey VKEY]\n"
    "                       [--from-checkpoint FILE] [--policy FILE] [--json] [--threads N]\n"
    "\n"
    "The auditor, of a ledger directory, of a C2SP tlog-tiles export (evledger export-tiles),\n"
    "or of anything serving that layout over http (--url http://host/prefix/).\n"
    "Re-checks every entry from the stored bytes: canonical form, event id and\n"
    "its id record, every DSSE signature (on all cores), and that each signer held the needed\n"
    "role at that position. Recomputes the RFC 6962 tree and compares every stored tree hash,\n"
    "checks every stored checkpoint's signature and root (so each is consistent with the\n"
    "next). --vkey pins the log's verifier key (a key or a file holding one); without it the\n"
    "genesis's log key is trusted. --from-checkpoint FILE checks that a checkpoint you saved\n"
    "earlier is still a prefix of the log: that is how truncation and rewritten history are\n"
    "caught. Reports the first failure with its index, what was expected and what was found.\n"
    "Events voided by a compromise are counted, not failures. --threads N checks on N\n"
    "threads (0 to 1024; 0, the default: one per hardware thread). Exit 0 when everything\n"
    "verifies, 1 on the first failure. Progress on stderr; --json prints a summary object.\n"
    "--policy FILE (a C2SP tlog-policy) also demands that the checkpoint the source publishes\n"
    "(a server's /checkpoint, a tile directory's checkpoint, a ledger's DIR/witnessing/\n"
    "checkpoint from serve --policy) carries the policy's quorum of valid cosignatures, and\n"
    "names the witnesses missing or invalid when it does not; a policy with one log line pins\n"
    "that log's key as --vkey does.\n";

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("verify takes no arguments"));
  auto threads = args.get_u64("threads", 0, {0, kMaxPoolThreads, "0: one per hardware thread"});
  if (!threads) return fail(threads.error());
  AuditOptions options;
  options.threads = static_cast<unsigned>(*threads);
  if (auto vkey = args.get("vkey")) {
    auto key = load_verifier_key(*vkey);
    if (!key) return fail(key.error().with_context("--vkey"));
    options.log_key = *key;
  }
  if (Status s = load_policy_option(args, options.policy); !s) return fail(s);
  if (options.policy && !options.log_key && options.policy->logs().size() == 1) {
    options.log_key = options.policy->logs()[0].key;
  }
  if (auto saved = args.get("from-checkpoint")) {
    auto note = read_file(*saved, ReadLimit{"checkpoint file", kMaxNoteFileBytes});
    if (!note) return fail(note.error());
    options.saved_checkpoint = *note;
  }
  int sources = args.has("ledger") + args.has("tiles") + args.has("url");
  if (sources != 1) return fail(usage_error("verify needs exactly one of --ledger, --tiles, --url"));
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<AuditSource> source;
  if (args.has("ledger")) {
    // LMDB trusts its file: check its structure before LMDB maps it, so that a damaged file
    // fails the audit instead of crashing it.
    if (Status storage = check_ledger_storage(*args.get("ledger")); !storage) {
      if (args.has("json")) print_json_line(nlohmann::ordered_json{{"ok", false}, {"error", storage.message()}});
      std::fprintf(stderr, "evledger: verification FAILED: %s\n",
                   visible_lines(storage.message()).c_str());
      return exit_code(storage.code());
    }
    auto opened = open_ledger(args, false);
    if (!opened) return fail(opened.error());
    ledger = std::move(opened.value());
    source = ledger_audit_source(*ledger);
  } else {
    if (!options.log_key) {
      return fail(usage_error("verifying tiles needs --vkey: the checkpoint must be signed by a "
                              "key you trust, not one the server chose"));
    }
    const bool url = args.has("url");
    const std::string where = *args.get(url ? "url" : "tiles");
    if (url != (where.find("://") != std::string::npos)) {
      return fail(usage_error(url ? "--url " + where + " is not a URL; a directory goes to --tiles"
                                  : "--tiles " + where + " is a URL; give it to --url"));
    }
    source = tile_audit_source(where);
  }
  Progress progress("verify", 0);
  options.progress = [&](uint64_t done, uint64_t total) { progress.update(done, total); };
  int64_t start = now_ms();
  AuditReport report = audit_log(*source, options);
  double seconds = (now_ms() - start) / 1000.0;
  if (args.has("json")) {
    nlohmann::ordered_json kinds;
    for (size_t k = 0; k < report.kinds.size(); ++k) {
      if (report.kinds[k] != 0) kinds[event_kind_name(static_cast<EventKind>(k))] = report.kinds[k];
    }
    nlohmann::ordered_json j = {{"ok", report.status.is_ok()},
                                {"origin", report.origin},
                                {"entries", report.entries},
                                {"signatures", report.signatures},
                                {"checkpoints", report.checkpoints},
                                {"treeNodes", report.tree_nodes},
                                {"root", report.root},
                                {"kinds", kinds},
                                {"voided", report.voided},
                                {"seconds", seconds}};
    if (!report.status) j["error"] = report.status.message();
    if (report.failed_index) j["failedIndex"] = *report.failed_index;
    if (report.witnessed_size) {
      j["witnessedSize"] = *report.witnessed_size;
      nlohmann::ordered_json by = nlohmann::ordered_json::array();
      for (const Cosignature& c : report.witnessed_by) by.push_back({{"witness", c.name}, {"time", c.time}});
      j["witnessedBy"] = by;
    }
    nlohmann::ordered_json voided = nlohmann::ordered_json::array();
    for (const auto& [index, cause] : report.voided_examples) {
      voided.push_back({{"index", index}, {"cause", cause}});
    }
    j["voidedExamples"] = voided;
    print_json_line(j);
  } else if (report.status) {
    std::printf("ok: %llu entries, %llu signatures, %llu checkpoints, %llu tree hashes verified; "
                "%llu void events; origin %s, root %s (%.2f s)\n",
                static_cast<unsigned long long>(report.entries),
                static_cast<unsigned long long>(report.signatures),
                static_cast<unsigned long long>(report.checkpoints),
                static_cast<unsigned long long>(report.tree_nodes),
                static_cast<unsigned long long>(report.voided),
                visible_text(report.origin).c_str(),
                report.root.c_str(), seconds);
    for (const auto& [index, cause] : report.voided_examples) {
      std::printf("  void: entry %llu: %s\n", static_cast<unsigned long long>(index),
                  visible_text(cause).c_str());
    }
    if (report.witnessed_size) {
      std::string names;
      for (const Cosignature& c : report.witnessed_by) names += (names.empty() ? "" : ", ") + c.name;
      std::printf("witnessed: the published checkpoint of size %llu has the policy's quorum "
                  "(cosigned by %s)\n",
                  static_cast<unsigned long long>(*report.witnessed_size), names.c_str());
    }
  }
  if (!report.status) {
    std::fprintf(stderr, "evledger: verification FAILED: %s\n",
                 visible_lines(report.status.message()).c_str());
    return exit_code(report.status.code());
  }
  return kExitOk;
}

}  // namespace

int cmd_verify(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"tiles"}, {"url"}, {"json", false}, {"threads"}, {"vkey"},
                      {"from-checkpoint"}, {"policy"}}, kUsage, run);
}

}  // namespace evl::cli
