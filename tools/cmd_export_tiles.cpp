// evledger export-tiles — write the C2SP tlog-tiles layout of a ledger into a directory.
#include <nlohmann/json.hpp>

#include <optional>

#include "events/utf8.h"
#include "ledger/tiles.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger export-tiles --ledger DIR --out OUT [--json]\n"
    "\n"
    "Writes the ledger's newest signed checkpoint as a C2SP tlog-tiles layout into OUT:\n"
    "OUT/checkpoint (the signed note, verbatim), hash tiles OUT/tile/<L>/<N>[.p/<W>] and entry\n"
    "bundles OUT/tile/entries/<N>[.p/<W>]. Any static web server can serve OUT, and any tlog\n"
    "client verifies it with the log's verifier key (evledger verify --tiles OUT, or Go's\n"
    "sumdb/tlog) without trusting the server.\n"
    "\n"
    "Incremental: when OUT already holds a checkpoint, it must verify under this log's key and\n"
    "match the ledger's tree at its size (otherwise OUT belongs to another log, or history was\n"
    "rewritten, and nothing is written); then only the tiles and bundles that are new since\n"
    "that size are written. Files are written under temporary names and renamed; the checkpoint\n"
    "is written last, after everything else is on disk. Full tiles are never rewritten.\n"
    "\n"
    "Exit 0 when OUT holds the newest checkpoint, 1 when OUT belongs to another log or the\n"
    "ledger is damaged, 2 for bad arguments, 3 when OUT cannot be written. Progress on stderr;\n"
    "--json prints a summary object.\n";

void print_report(const ExportReport& r, double seconds, bool json) {
  if (json) {
    nlohmann::ordered_json j = {{"ok", true},
                                {"origin", r.origin},
                                {"size", r.size},
                                {"previousSize", r.previous_size},
                                {"root", r.root},
                                {"tilesWritten", r.tiles_written},
                                {"bundlesWritten", r.bundles_written},
                                {"filesKept", r.files_kept},
                                {"bytesWritten", r.bytes_written},
                                {"checkpointWritten", r.checkpoint_written},
                                {"seconds", seconds}};
    print_json_line(j);
    return;
  }
  if (!r.checkpoint_written) {
    std::printf("up to date: %s at size %llu, nothing written\n", visible_text(r.origin).c_str(),
                static_cast<unsigned long long>(r.size));
    return;
  }
  std::printf("exported %s at size %llu (from %llu): %llu hash tiles, %llu entry bundles, "
              "%llu bytes (%.2f s)\n",
              visible_text(r.origin).c_str(), static_cast<unsigned long long>(r.size),
              static_cast<unsigned long long>(r.previous_size),
              static_cast<unsigned long long>(r.tiles_written),
              static_cast<unsigned long long>(r.bundles_written),
              static_cast<unsigned long long>(r.bytes_written), seconds);
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("export-tiles takes no arguments"));
  auto out = args.require("out");
  if (!out) return fail(out.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  ExportOptions options;
  std::optional<Progress> bar;
  options.progress = [&](uint64_t done, uint64_t total) {
    if (!bar) bar.emplace("export", total);
    bar->update(done);
  };
  int64_t start = now_ms();
  auto report = export_tiles(**ledger, *out, options);
  bar.reset();
  if (!report) return fail(report.error().with_context("export-tiles into " + *out));
  print_report(*report, (now_ms() - start) / 1000.0, args.has("json"));
  return kExitOk;
}

}  // namespace

int cmd_export_tiles(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"out"}, {"json", false}}, kUsage, run);
}

}  // namespace evl::cli
