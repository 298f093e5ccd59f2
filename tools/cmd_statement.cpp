// evledger statement — print the log key's signed statement about the projections at a
// checkpoint (projections/FORMAT.md, "Projection digest").
#include "events/utf8.h"
#include "projections/digest.h"
#include "projections/statement_audit.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kStatementUsage =
    "usage: evledger statement --ledger DIR [--size N] [--json]\n"
    "\n"
    "Prints the signed projection statement of the log's newest checkpoint, or of the one of\n"
    "exactly N entries, verbatim: a C2SP signed note by the log key whose text is\n"
    "  evledger/projections/v3\\n<origin>\\n<size>\\n<base64 projection digest>\\n\n"
    "The ledger stores one with every checkpoint (a commit by a writer with projections), so\n"
    "N must be a size at which a commit ended. The note is checked against the genesis's log\n"
    "key before it is printed. An auditor folds the log prefix of that size and compares\n"
    "digests: 'evledger rebuild --check' does it for every statement.\n"
    "A statement of another projection format (made by an evledger that folds the log\n"
    "otherwise) is printed as it is, with a notice, once its signature verifies; --json\n"
    "then prints {format, size, note}.\n"
    "--json prints {origin, size, digest, note}. Exit 0 ok, 1 no such statement or one that\n"
    "does not verify, 2 usage, 3 I/O.\n";

int run_statement(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("statement takes no arguments"));
  auto size = args.get_optional_u64("size", kAnyU64);
  if (!size) return fail(size.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto stored = stored_statement(**ledger, *size);
  if (!stored) return fail(stored.error());
  // A statement of another projection format (an evledger that folds the log otherwise) is
  // printed as it is, its signature verified: this evledger cannot check its digest.
  if (!stored->opened.statement) {
    std::fprintf(stderr,
                 "evledger: this statement is of projection format '%s', made by another "
                 "version of evledger; its signature by the log key verifies, but this one "
                 "folds '%s' and cannot check its digest\n",
                 visible_text(stored->opened.other_format).c_str(),
                 std::string(kProjectionFormat).c_str());
  }
  Status s = args.has("json") ? write_output("-", statement_json(*stored) + "\n")
                              : write_output("-", stored->note);
  return s ? kExitOk : fail(s);
}

}  // namespace

int cmd_statement(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"size"}, {"json", false}}, kStatementUsage,
                     run_statement);
}

}  // namespace evl::cli
