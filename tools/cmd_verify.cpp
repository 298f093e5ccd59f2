// evledger verify — the auditor: re-check every entry from the stored bytes.
#include <nlohmann/json.hpp>

#include "events/file_read.h"
#include "events/utf8.h"
#include "keys/note.h"
#include "keys/checkpoint.h"
#include "ledger/audit.h"
#include "ledger/split_view.h"
#include "ledger/upstream.h"
#include "ledger/thread_pool.h"
#include "ledger/tiles.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger verify (--ledger DIR | --tiles DIR | --url URL) [--vkey VKEY]\n"
    "                       [--from-checkpoint FILE [--evidence-dir DIR]] [--policy FILE]\n"
    "                       [--json] [--threads N]\n"
    "       evledger verify --evidence FILE --vkey VKEY [--json]\n"
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
    "that log's key as --vkey does.\n"
    "--evidence-dir DIR: when the saved checkpoint is not consistent with the source's newest\n"
    "(a split view), the evidence is written under DIR/evidence/ and named on stderr.\n"
    "--evidence FILE checks split-view evidence (written by evledger mirror or by\n"
    "--evidence-dir) offline: exit 0 when it proves that the log of VKEY signed two\n"
    "checkpoints that are not consistent, 1 with the reason when it does not (a doctored or\n"
    "incomplete file).\n";

constexpr size_t kMaxEvidenceBytes = size_t{256} << 10;

int verify_evidence(const Args& args) {
  auto file = args.require("evidence");
  if (!file) return fail(file.error());
  auto vkey = args.require("vkey");
  if (!vkey) return fail(usage_error("--evidence needs --vkey: the log's key is what the "
                                     "evidence must be signed by"));
  auto key = load_verifier_key(*vkey);
  if (!key) return fail(key.error().with_context("--vkey"));
  auto text = read_file(*file, ReadLimit{"split-view evidence", kMaxEvidenceBytes});
  if (!text) return fail(text.error());
  auto evidence = parse_split_view(*text);
  Result<SplitViewFinding> finding =
      evidence ? check_split_view(*evidence, *key) : Result<SplitViewFinding>(evidence.error());
  if (!finding) {
    if (args.has("json")) {
      print_json_line(nlohmann::ordered_json{{"ok", false}, {"error", finding.error().message()}});
    }
    std::fprintf(stderr, "evledger: evidence REJECTED: %s: %s\n", file->c_str(),
                 visible_lines(finding.error().message()).c_str());
    return kExitRejected;
  }
  const SplitViewFinding& f = *finding;
  if (args.has("json")) {
    print_json_line(nlohmann::ordered_json{{"ok", true},
                                           {"origin", f.older.origin},
                                           {"olderSize", f.older.size},
                                           {"olderRoot", base64_encode(f.older.root)},
                                           {"newerSize", f.newer.size},
                                           {"newerRoot", base64_encode(f.newer.root)},
                                           {"newerRootAtOlderSize", base64_encode(f.older_in_newer)}});
    return kExitOk;
  }
  std::printf("split view proven: %s signed a checkpoint of size %llu with root %s, and one of "
              "size %llu whose tree holds root %s at size %llu; the log showed two histories\n",
              visible_text(f.older.origin).c_str(), static_cast<unsigned long long>(f.older.size),
              base64_encode(f.older.root).c_str(), static_cast<unsigned long long>(f.newer.size),
              base64_encode(f.older_in_newer).c_str(),
              static_cast<unsigned long long>(f.older.size));
  return kExitOk;
}

// --from-checkpoint --evidence-dir, after a failed audit: the saved checkpoint against the
// source's newest, over the source's tree. Says on stderr what it wrote.
void record_split_view(const Args& args, const AuditOptions& options, AuditSource& source,
                       const Ledger* ledger) {
  std::string newest;
  Status scanned = source.scan_checkpoints([&](std::string_view note) {
    newest = note;
    return Status::ok();
  });
  std::optional<VerifierKey> key = options.log_key;
  if (!key && ledger) {
    if (auto k = ledger->log_verifier()) key = *k;
  }
  if (!scanned || newest.empty() || !key) return;
  auto saved = open_checkpoint(*options.saved_checkpoint, *key);
  auto top = open_checkpoint(newest, *key);
  if (!saved || !top || saved->size > top->size) return;  // no tree here to prove it with
  Result<std::optional<SplitView>> compared = std::optional<SplitView>();
  if (ledger) {
    Status read = ledger->read_tree([&](const HashReader& tree, uint64_t) {
      compared = compare_checkpoints(*options.saved_checkpoint, newest, *key, tree);
      return Status::ok();
    });
    if (!read) compared = read;
  } else {
    const std::string where = *args.get(args.has("url") ? "url" : "tiles");
    auto tree = tile_tree(where, top->size);
    compared = tree ? compare_checkpoints(*options.saved_checkpoint, newest, *key, **tree)
                    : Result<std::optional<SplitView>>(tree.error());
  }
  if (!compared) {
    std::fprintf(stderr, "evledger: no split-view evidence: %s\n",
                 visible_lines(compared.error().message()).c_str());
    return;
  }
  if (!compared->has_value()) return;
  auto path = write_split_view(*args.get("evidence-dir"), **compared);
  if (!path) {
    std::fprintf(stderr, "evledger: a split view was found, but %s\n",
                 visible_lines(path.error().message()).c_str());
    return;
  }
  std::fprintf(stderr, "evledger: split view: the saved checkpoint of size %llu is not "
               "consistent with the source's of size %llu; evidence written to %s\n",
               static_cast<unsigned long long>(saved->size),
               static_cast<unsigned long long>(top->size), path->c_str());
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("verify takes no arguments"));
  if (args.has("evidence")) {
    if (args.has("ledger") || args.has("tiles") || args.has("url")) {
      return fail(usage_error("--evidence is checked offline: give no --ledger, --tiles, --url"));
    }
    return verify_evidence(args);
  }
  if (args.has("evidence-dir") && !args.has("from-checkpoint")) {
    return fail(usage_error("--evidence-dir goes with --from-checkpoint (the evidence is about "
                            "that checkpoint)"));
  }
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
    if (options.saved_checkpoint && args.has("evidence-dir")) {
      record_split_view(args, options, *source, ledger.get());
    }
    return exit_code(report.status.code());
  }
  return kExitOk;
}

}  // namespace

int cmd_verify(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"tiles"}, {"url"}, {"json", false}, {"threads"}, {"vkey"},
                      {"from-checkpoint"}, {"policy"}, {"evidence"}, {"evidence-dir"}}, kUsage, run);
}

}  // namespace evl::cli
