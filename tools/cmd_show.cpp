// evledger show — one run as a person reads it (KernelIndex's run page), with a citation that
// anyone can verify against the log.
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "tools/commands.h"
#include "tools/projection_cli.h"
#include "tools/render.h"
#include "tools/run_page.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger show --ledger DIR RUN [--json]\n"
    "\n"
    "Shows the run view of RUN as KernelIndex's run page does: primary measurement, rank in\n"
    "its comparison group (or why it has none), SOL score, speedup and cases faster, identity,\n"
    "correctness, workload, protocol, environment, artifacts, reruns with verdicts,\n"
    "attestations, corrections and the log events behind it, and a citation naming the log\n"
    "index, the event id and a signed checkpoint that includes it, so the reader can verify\n"
    "it (evledger proof inclusion).\n"
    "--json prints the run view with DESIGN.md's field names.\n"
    "\n"
    "RUN is the run digest (sha256:<64 hex>) or a start of it that no other run shares, at\n"
    "least 6 hex digits, as 'evledger runs' prints it (sha256:0012c2de8659…; the prefix and\n"
    "the ellipsis may be left out). Several runs starting so: exit 2, listing some.\n";

int run(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("show takes one RUN digest"));
  auto prefix = parse_run_prefix(args.positional()[0], "RUN");
  if (!prefix) return fail(prefix.error());
  Status s = with_projections(args, [&](const Ledger& ledger, const KeyValueStore& state,
                                        uint64_t) -> Status {
    std::vector<RankExclusion> unranked;
    auto view = read_named_run_view(state, *log_manifests(ledger), *prefix, "RUN", &unranked);
    if (!view) return view.error();
    if (args.has("json")) {
      std::printf("%s\n", json_line(*view).c_str());
      return Status::ok();
    }
    std::string checkpoint_line;
    std::string origin;
    if (auto key = ledger.log_verifier()) origin = key->name;
    if (auto note = ledger.checkpoint()) {
      auto parsed = parse_note(*note);
      auto body = parsed ? parse_checkpoint_body(parsed->text) : Result<Checkpoint>(parsed.error());
      if (body) {
        checkpoint_line = "In the checkpoint of size " + std::to_string(body->size) +
                          ", root " + base64_encode(body->root) + ".";
      }
    }
    const std::string page = run_page_text(*view, {origin, checkpoint_line, std::move(unranked)});
    std::fputs(visible_lines(page).c_str(), stdout);
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

}  // namespace

int cmd_show(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"json", false}}, kUsage, run);
}

}  // namespace evl::cli
