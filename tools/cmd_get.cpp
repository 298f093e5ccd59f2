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

Result<uint64_t> resolve(const Ledger& ledger, const std::string& what) {
  if (what.rfind("sha256:", 0) == 0) {
    auto id = parse_digest_text(what);
    if (!id) return usage_error(id.error().message());
    return ledger.find(*id);
  }
  auto index = parse_u64(what);
  if (!index) return usage_error("'" + what + "' is neither an event id (sha256:<hex>) nor an index");
  return *index;
}

int run_get(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("get takes one ID or INDEX"));
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto index = resolve(**ledger, args.positional()[0]);
  if (!index) return fail(index.error());
  auto bytes = (*ledger)->entry(*index);
  if (!bytes) return fail(bytes.error());
  if (args.has("raw")) {
    Status s = write_output("-", as_chars(*bytes));
    return s ? kExitOk : fail(s);
  }
  auto entry = decode_entry(*bytes);
  if (!entry) return fail(corrupt("stored entry " + std::to_string(*index) + ": " +
                                  entry.error().message() + "; run evledger verify"));
  auto body = decode_body(entry->body);
  if (!body) return fail(corrupt("stored entry " + std::to_string(*index) + ": " +
                                 body.error().message() + "; run evledger verify"));
  KeyPolicy keys = (*ledger)->policy();
  if (args.has("json")) {
    std::printf("%s\n", entry_json(*index, *entry, *body, keys).c_str());
  } else {
    std::fputs(entry_text(*index, *entry, *body, keys).c_str(), stdout);
  }
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
    auto entry = decode_entry(bytes);
    if (!entry) return corrupt("stored entry " + std::to_string(index) + ": " + entry.error().message());
    auto body = decode_body(entry->body);
    if (!body) return corrupt("stored entry " + std::to_string(index) + ": " + body.error().message());
    std::string line = json ? entry_json(index, *entry, *body, keys)
                            : entry_line(index, *entry, *body, keys);
    std::printf("%s\n", line.c_str());
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
