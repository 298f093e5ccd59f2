// evledger — the command-line tool. Thin: parse, call the library, render, exit code.
#include <sodium.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/commands.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

const Command kCommands[] = {
    {"init", "create a ledger with its log key, first admin key and genesis", evl::cli::cmd_init},
    {"key", "make key pairs; grant, revoke and list keys", evl::cli::cmd_key},
    {"sign", "turn a canonical event body into a signed entry", evl::cli::cmd_sign},
    {"append", "append signed entries from files or a stream", evl::cli::cmd_append},
    {"import", "import a KernelIndex catalog (JSON, JSON lines, YAML): sign and append", evl::cli::cmd_import},
    {"gen", "write a synthetic SOL-ExecBench-style catalog as JSON lines", evl::cli::cmd_gen},
    {"rerun", "append a controlled rerun of an observed run (runner key)", evl::cli::cmd_rerun},
    {"attest", "append an attestation about an observed run (any granted key)", evl::cli::cmd_attest},
    {"retract", "append a retraction of a run (curator key)", evl::cli::cmd_retract},
    {"supersede", "append a supersession: a new run replaces an old one (curator key)", evl::cli::cmd_supersede},
    {"disqualify", "append a source's disqualification of a run (curator or importer)", evl::cli::cmd_disqualify},
    {"get", "print one entry by id or index", evl::cli::cmd_get},
    {"log", "list entries", evl::cli::cmd_log},
    {"verify", "re-check every entry, signature and key-policy decision", evl::cli::cmd_verify},
    {"runs", "list run views with rank, evidence and flags", evl::cli::cmd_runs},
    {"show", "show one run as a person reads it, with its citation", evl::cli::cmd_show},
    {"groups", "list comparison groups and their leaders", evl::cli::cmd_groups},
    {"leaders", "list every change of a group's leader, with its cause", evl::cli::cmd_leaders},
    {"rebuild", "rebuild the projections from the log and print their digest; --check audits every statement", evl::cli::cmd_rebuild},
    {"bench", "measure throughput against this machine's limits", evl::cli::cmd_bench},
    {"proof", "offline inclusion and consistency proofs: make and verify", evl::cli::cmd_proof},
    {"checkpoint", "print the log's newest (or a given size's) signed checkpoint", evl::cli::cmd_checkpoint},
    {"statement", "print the signed projection statement of the newest (or a given size's) checkpoint", evl::cli::cmd_statement},
    {"serve", "serve the ledger over HTTP: tiles, appends with receipts, the JSON API", evl::cli::cmd_serve},
    {"mirror", "copy a log from any host of its tiles, verifying everything; stop at a split view", evl::cli::cmd_mirror},
    {"witness", "run a C2SP tlog witness: cosign logs' checkpoints it can prove consistent", evl::cli::cmd_witness},
    {"status", "one screen about a log: size, published checkpoint, age, cosignatures, lag", evl::cli::cmd_status},
    {"export-tiles", "write the C2SP tlog-tiles layout: checkpoint, hash tiles, entry bundles", evl::cli::cmd_export_tiles},
};

void usage(std::FILE* out) {
  std::fputs("usage: evledger COMMAND [OPTIONS]\n\n"
             "An append-only ledger of signed evidence about GPU-kernel benchmark results.\n\n"
             "commands:\n", out);
  for (const auto& c : kCommands) std::fprintf(out, "  %-13s %s\n", c.name, c.summary);
  std::fputs("\n'evledger COMMAND --help' describes each. Exit status: 0 ok, 1 rejected or\n"
             "failed verification, 2 usage, 3 I/O or environment.\n", out);
}

}  // namespace

int main(int argc, char** argv) {
  if (sodium_init() < 0) {
    std::fprintf(stderr, "evledger: libsodium could not initialise\n");
    return evl::cli::kExitIo;
  }
  if (argc < 2) {
    usage(stderr);
    return evl::cli::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(stdout);
    return evl::cli::kExitOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "evledger bug: unexpected exception in %s: %s\n", c.name, e.what());
      return evl::cli::kExitIo;
    }
  }
  std::fprintf(stderr, "evledger: unknown command '%s'\n\n", name.c_str());
  usage(stderr);
  return evl::cli::kExitUsage;
}
