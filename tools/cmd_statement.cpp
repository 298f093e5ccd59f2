// evledger statement — print the log key's signed statement about the projections at a
// checkpoint (projections/FORMAT.md, "Projection digest").
#include <nlohmann/json.hpp>

#include "keys/note.h"
#include "projections/digest.h"
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
  auto given = args.get_optional_u64("size", kAnyU64);
  if (!given) return fail(given.error());
  std::optional<uint64_t> size = *given;
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  const bool newest = !size;
  if (newest) {
    auto checkpoint = ledger_checkpoint(**ledger, std::nullopt, "size");
    if (!checkpoint) return fail(checkpoint.error());
    size = checkpoint->checkpoint.size;
  }
  auto note = (*ledger)->statement(size);
  if (!note && note.error().code() == Code::kNotFound) {
    std::string latest = "does not exist";
    if (auto stated = (*ledger)->statement()) {
      auto parsed = parse_note(*stated);
      auto statement = parsed ? parse_projection_statement(parsed->text)
                              : Result<ProjectionStatement>(parsed.error());
      if (statement) latest = "is of size " + std::to_string(statement->size);
    }
    return fail(not_found(
        (newest ? "the newest checkpoint, of size " + std::to_string(*size) +
                      ", has no statement: it was signed by a writer without projections or "
                      "an evledger from before statements; any append or 'evledger rebuild' "
                      "adds one"
                : note.error().message() + "; the newest checkpoint is of size " +
                      newest_size_text(**ledger)) +
        "; the newest statement " + latest));
  }
  if (!note) return fail(note.error().with_context("statement"));
  auto key = (*ledger)->log_verifier();
  if (!key) return fail(key.error().with_context("the log's verifier key"));
  auto opened = open_statement_note(*note, *key);
  if (!opened) {
    return fail(corrupt("stored " + opened.error().message() +
                        "; run 'evledger rebuild --check --ledger " + (*ledger)->dir() + "'"));
  }
  // A statement of another projection format (an evledger that folds the log otherwise) is
  // printed as it is, its signature verified: this evledger cannot check its digest.
  if (!opened->statement) {
    std::fprintf(stderr,
                 "evledger: this statement is of projection format '%s', made by another "
                 "version of evledger; its signature by the log key verifies, but this one "
                 "folds '%s' and cannot check its digest\n",
                 opened->other_format.c_str(), std::string(kProjectionFormat).c_str());
    if (!args.has("json")) {
      Status s = write_output("-", *note);
      return s ? kExitOk : fail(s);
    }
    nlohmann::ordered_json j;
    j["format"] = opened->other_format;
    j["size"] = *size;
    j["note"] = *note;
    print_json_line(j);
    return kExitOk;
  }
  const ProjectionStatement& statement = *opened->statement;
  if (size && statement.size != *size) {
    return fail(corrupt("the statement stored for size " + std::to_string(*size) +
                        " states size " + std::to_string(statement.size)));
  }
  if (!args.has("json")) {
    Status s = write_output("-", *note);
    return s ? kExitOk : fail(s);
  }
  nlohmann::ordered_json j;
  j["origin"] = statement.origin;
  j["size"] = statement.size;
  j["digest"] = base64_encode(statement.digest);
  j["note"] = *note;
  print_json_line(j);
  return kExitOk;
}

}  // namespace

int cmd_statement(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"size"}, {"json", false}}, kStatementUsage,
                     run_statement);
}

}  // namespace evl::cli
