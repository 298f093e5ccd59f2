// evledger checkpoint — print a signed checkpoint of the log (C2SP tlog-checkpoint note).
#include "keys/checkpoint.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kCheckpointUsage =
    "usage: evledger checkpoint --ledger DIR [--size N] [--json]\n"
    "\n"
    "Prints the log's newest signed checkpoint, or the one of exactly N entries, verbatim: a\n"
    "C2SP tlog-checkpoint note signed by the log key. The log signs one per commit, so N must be\n"
    "a size at which a commit ended. Save it to later ask for a consistency proof from it\n"
    "(evledger proof consistency --from <its size>). --json prints {origin, size, root, note}.\n";

int run_checkpoint(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("checkpoint takes no arguments"));
  auto given = args.get_optional_u64("size", kAnyU64);
  if (!given) return fail(given.error());
  const std::optional<uint64_t> size = *given;
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto checkpoint = ledger_checkpoint(**ledger, size, "size");
  if (!checkpoint) return fail(checkpoint.error());
  Status s = write_output("-", args.has("json") ? checkpoint_json(*checkpoint) + "\n"
                                                : checkpoint->note);
  return s ? kExitOk : fail(s);
}

}  // namespace

int cmd_checkpoint(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"size"}, {"json", false}}, kCheckpointUsage,
                     run_checkpoint);
}

}  // namespace evl::cli
