// evledger get / log — read entries back, decoded.
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"

namespace evl::cli {

namespace {

constexpr const char* kGetUsage =
    "usage: evledger get --ledger DIR (ID|INDEX) [--json | --raw]\n"
    "\n"
    "Prints one entry, decoded: by event id (sha256:<hex>) or log index. --raw writes the\n"
    "stored entry bytes (canonical SignedEvent) to standard output, for capnp and sha256sum.\n";

constexpr const char* kLogUsage =
    "usage: evledger log --ledger DIR [--from N] [--limit K] [--json]\n"
    "\n"
    "Lists entries from index N (default 0), at most K (default all): one line each, or one\n"
    "JSON object per line with --json.\n";

int run_get(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("get takes one ID or INDEX"));
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto index = find_entry(**ledger, args.positional()[0]);
  if (!index) return fail(index.error());
  auto bytes = (*ledger)->entry(*index);
  if (!bytes) return fail(bytes.error());
  if (args.has("raw")) {
    Status s = write_output("-", as_chars(*bytes));
    return s ? kExitOk : fail(s);
  }
  KeyPolicy keys = (*ledger)->policy();
  if (args.has("json")) {
    auto json = stored_entry_json(*index, *bytes, keys);
    if (!json) return fail(json.error());
    std::printf("%s\n", json->c_str());
    return kExitOk;
  }
  auto event = decode_stored_entry(*index, *bytes);
  if (!event) return fail(event.error());
  std::fputs(entry_text(*index, event->entry, event->body, keys).c_str(), stdout);
  return kExitOk;
}

int run_log(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("log takes no arguments"));
  auto from = args.get_u64("from", 0, kAnyU64);
  auto limit = args.get_u64("limit", UINT64_MAX, kAnyU64);
  if (!from) return fail(from.error());
  if (!limit) return fail(limit.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  uint64_t size = (*ledger)->size();
  uint64_t to = *from >= size ? *from : *from + std::min(*limit, size - *from);
  KeyPolicy keys = (*ledger)->policy();
  bool json = args.has("json");
  Status s = (*ledger)->scan(*from, to, [&](uint64_t index, ByteView bytes) {
    if (json) {
      auto line = stored_entry_json(index, bytes, keys);
      if (!line) return line.error();
      std::printf("%s\n", line->c_str());
      return Status::ok();
    }
    auto event = decode_stored_entry(index, bytes);
    if (!event) return event.error();
    std::printf("%s\n", entry_line(index, event->entry, event->body, keys).c_str());
    return Status::ok();
  });
  return s ? kExitOk : fail(s.with_context("log"));
}

}  // namespace

int cmd_get(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"json", false}, {"raw", false}}, kGetUsage, run_get);
}

int cmd_log(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"from"}, {"limit"}, {"json", false}}, kLogUsage,
                     run_log);
}

}  // namespace evl::cli
