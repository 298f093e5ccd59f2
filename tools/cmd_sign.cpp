// evledger sign — turn canonical body bytes into a signed entry.
#include "events/file_read.h"
#include "keys/signer.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger sign --key KEY_FILE [--out FILE] BODY\n"
    "       evledger sign --key KEY_FILE --cosign [--out FILE] ENTRY\n"
    "\n"
    "Reads BODY (canonical EventBody bytes, e.g. from `capnp convert text:canonical\n"
    "events/event.capnp EventBody`; '-' for standard input), checks that it is canonical and\n"
    "that its author is KEY_FILE's key, and writes the signed entry (canonical SignedEvent\n"
    "bytes) to FILE or standard output. With --cosign, adds KEY_FILE's signature to an\n"
    "existing ENTRY instead.\n";

int run(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("sign takes one BODY file"));
  auto key = load_signer(args, "key");
  if (!key) return fail(key.error());
  const bool cosign = args.has("cosign");
  auto input = read_file(args.positional()[0],
                         ReadLimit{cosign ? "entry file" : "body file", kMaxEntryBytes});
  if (!input) return fail(input.error());
  auto entry = cosign ? add_signature(*key, as_bytes(*input))
                                  : sign_body(*key, as_bytes(*input));
  if (!entry) return fail(entry.error().with_context(args.positional()[0]));
  Status written = write_output(args.get("out").value_or("-"), as_chars(*entry));
  return written ? kExitOk : fail(written);
}

}  // namespace

int cmd_sign(const std::vector<std::string>& argv) {
  return run_command(argv, {{"key"}, {"out"}, {"cosign", false}}, kUsage, run);
}

}  // namespace evl::cli
