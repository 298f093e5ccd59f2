// evledger verify — the auditor: re-check every entry from the stored bytes.
#include <nlohmann/json.hpp>

#include "ledger/audit.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger verify --ledger DIR [--json] [--threads N]\n"
    "\n"
    "Re-checks every entry from the stored bytes: canonical form, event id and its id record,\n"
    "every DSSE signature (on all cores), and that each signer held the needed role at that\n"
    "position. Reports the first failure with its index, what was expected and what was\n"
    "found. Events voided by a compromise are counted, not failures. Exit 0 when everything\n"
    "verifies, 1 on the first failure. Progress on stderr; --json prints a summary object.\n";

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("verify takes no arguments"));
  auto threads = args.get_u64("threads", 0);
  if (!threads) return fail(threads.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  Progress progress("verify", (*ledger)->size());
  AuditOptions options;
  options.threads = static_cast<unsigned>(*threads);
  options.progress = [&](uint64_t done, uint64_t) { progress.update(done); };
  int64_t start = now_ms();
  AuditReport report = audit_ledger(**ledger, options);
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
                                {"kinds", kinds},
                                {"voided", report.voided},
                                {"seconds", seconds}};
    if (!report.status) j["error"] = report.status.message();
    if (report.failed_index) j["failedIndex"] = *report.failed_index;
    nlohmann::ordered_json voided = nlohmann::ordered_json::array();
    for (const auto& [index, cause] : report.voided_examples) {
      voided.push_back({{"index", index}, {"cause", cause}});
    }
    j["voidedExamples"] = voided;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else if (report.status) {
    std::printf("ok: %llu entries, %llu signatures verified, %llu void events, origin %s "
                "(%.2f s)\n",
                static_cast<unsigned long long>(report.entries),
                static_cast<unsigned long long>(report.signatures),
                static_cast<unsigned long long>(report.voided), report.origin.c_str(), seconds);
    for (const auto& [index, cause] : report.voided_examples) {
      std::printf("  void: entry %llu: %s\n", static_cast<unsigned long long>(index),
                  cause.c_str());
    }
  }
  if (!report.status) {
    std::fprintf(stderr, "evledger: verification FAILED: %s\n", report.status.message().c_str());
    return exit_code(report.status.code());
  }
  return kExitOk;
}

}  // namespace

int cmd_verify(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"json", false}, {"threads"}}, kUsage, run);
}

}  // namespace evl::cli
