// evledger show — one run as a person reads it (KernelIndex's run page), with a citation that
// anyone can verify against the log.
#include <cmath>

#include "keys/checkpoint.h"
#include "keys/note.h"
#include "projections/query.h"
#include "tools/commands.h"
#include "tools/projection_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger show --ledger DIR RUN [--json]\n"
    "\n"
    "Shows the run view of RUN as KernelIndex's run page does: primary measurement, rank in\n"
    "its comparison group, SOL score, speedup and cases faster, identity, correctness,\n"
    "workload, protocol, environment, reruns with verdicts, attestations, corrections and the\n"
    "log events behind it, and a citation naming the log index, the event id and a signed\n"
    "checkpoint that includes it, so the reader can verify it (evledger proof inclusion).\n"
    "--json prints the run view with DESIGN.md's field names.\n"
    "\n"
    "RUN is the run digest (sha256:<64 hex>) or a start of it that no other run shares, at\n"
    "least 6 hex digits, as 'evledger runs' prints it (sha256:0012c2de8659…; the prefix and\n"
    "the ellipsis may be left out). Several runs starting so: exit 2, listing some.\n";

const Json* at(const Json& v, std::string_view path) {
  const Json* cur = &v;
  size_t start = 0;
  while (cur != nullptr && start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string_view key =
        path.substr(start, dot == std::string_view::npos ? path.npos : dot - start);
    cur = cur->is_object() ? cur->find(key) : nullptr;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur;
}

std::string str(const Json& v, std::string_view path) { return text_of(at(v, path)); }

// 159785 ns -> "159.8 µs"; 1750000 -> "1.75 ms" (four significant digits, as the page shows).
std::string human_ns(double ns) {
  const char* unit = "ns";
  double v = ns;
  if (ns >= 1e9) { v = ns / 1e9; unit = "s"; }
  else if (ns >= 1e6) { v = ns / 1e6; unit = "ms"; }
  else if (ns >= 1e3) { v = ns / 1e3; unit = "µs"; }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

std::string measurement(const Json& view) {
  const Json* value = at(view, "primary.value");
  if (value == nullptr || !value->is_number()) return "no primary measurement";
  std::string unit = str(view, "primary.unit");
  std::string shown = unit == "ns" ? human_ns(value->as_number())
                                   : text_of(value) + " " + unit;
  return shown + " " + str(view, "primary.statistic");
}

void section(const char* title) { std::printf("\n%s\n", title); }
void row(const char* label, const std::string& value) {
  if (value != "-") std::printf("  %-22s %s\n", label, value.c_str());
}

std::string short_digest(const std::string& d) {
  return d.size() > 27 ? d.substr(0, 27) + "…" : d;
}

void print_list(const Json& view, const char* member, const char* empty,
                const std::function<std::string(const Json&)>& line) {
  const Json* list = at(view, member);
  if (list == nullptr || !list->is_array() || list->as_array().empty()) {
    std::printf("  %s\n", empty);
    return;
  }
  for (const auto& item : list->as_array()) std::printf("  - %s\n", line(item).c_str());
}

void print_view(const Json& view, const std::string& checkpoint_line, const std::string& origin) {
  std::string run = str(view, "run");
  std::printf("Run %s · evledger\n%s\n", run.substr(7, 8).c_str(), str(view, "title").c_str());

  section("Primary measurement");
  std::printf("  %s\n", measurement(view).c_str());
  std::string rank = str(view, "rank");
  std::string observed = str(view, "observedAt").substr(0, 10);
  if (rank != "-") {
    std::printf("  Rank %s of %s in its comparison group%s · observed %s\n", rank.c_str(),
                str(view, "groupSize").c_str(),
                text_of(at(view, "tied")) == "true" ? " (tied)" : "", observed.c_str());
  } else {
    std::printf("  Not ranked · observed %s\n", observed.c_str());
  }
  const Json* sol = at(view, "sourceNative.solScore");
  const Json* speedup = at(view, "sourceNative.speedup");
  if (sol != nullptr && sol->is_number()) {
    std::printf("  SOL %.4f · %.2f× reference · %s/%s cases faster\n", sol->as_number(),
                speedup != nullptr && speedup->is_number() ? speedup->as_number() : NAN,
                str(view, "sourceNative.casesFaster").c_str(),
                str(view, "sourceNative.casesTotal").c_str());
  }
  std::printf("  Evidence: %s%s\n", str(view, "evidence").c_str(),
              str(view, "flags") == "[]" ? "" : (" · flags " + str(view, "flags")).c_str());

  section("Identity");
  row("implementation", str(view, "implementation.title"));
  row("revision", str(view, "implementation.version"));
  row("source available", str(view, "sourceAvailable"));
  row("workload", str(view, "workload.title"));
  row("comparison key", short_digest(str(view, "comparisonKey")));
  row("source", str(view, "source"));
  row("benchmark", str(view, "benchmark"));
  row("external id", str(view, "externalId"));
  row("run digest", run);
  row("missing manifests", str(view, "missing") == "[]" ? "-" : str(view, "missing"));

  section("Correctness");
  std::printf("  Marked %s by the source; comparator %s.\n", str(view, "status").c_str(),
              str(view, "workload.comparator").c_str());
  section("Workload");
  row("definition comparator", str(view, "workload.comparator"));
  row("description", str(view, "workload.description"));
  row("cases", str(view, "workload.cases"));
  section("Measurements");
  row((str(view, "primary.metric") + " · " + str(view, "primary.statistic")).c_str(),
      measurement(view));
  section("Protocol");
  row("harness", str(view, "protocol.harness") + " " + str(view, "protocol.harnessVersion"));
  row("timer", str(view, "protocol.timer"));
  row("primaryStatistic", str(view, "protocol.primaryStatistic"));
  row("correctnessReference", str(view, "protocol.correctnessReference"));
  row("comparabilityFamily", str(view, "protocol.family"));
  section("Environment");
  row("gpu", str(view, "environment.product") + " (" + str(view, "environment.architecture") + ")");

  section("Controlled reruns");
  print_list(view, "reruns", "No controlled reruns yet.", [](const Json& r) {
    return str(r, "verdict") + " · " + str(r, "runner") + " · log index " + str(r, "index");
  });
  section("Replications and notes");
  print_list(view, "attestations", "No attestations yet.", [](const Json& a) {
    return str(a, "type") + " by " + str(a, "author") + ": " + str(a, "text");
  });
  std::printf("  Community attestations never change the evidence level; only a controlled rerun "
              "does.\n");
  section("Corrections");
  print_list(view, "corrections", "None.", [](const Json& c) {
    return str(c, "type") + " by " + str(c, "author") + ": " + str(c, "reason");
  });
  section("Log events behind this view");
  print_list(view, "history", "None.", [](const Json& h) {
    return "index " + str(h, "index") + " " + str(h, "kind") + " " + str(h, "event") +
           (str(h, "void") == "-" ? "" : " [void: " + str(h, "void") + "]");
  });

  section("Cite this record");
  std::printf("  %s. evledger log %s, entry %s, event %s; run %s. %s\n", str(view, "title").c_str(),
              origin.c_str(), str(view, "index").c_str(), str(view, "event").c_str(), run.c_str(),
              checkpoint_line.c_str());
  std::printf("  Verify: evledger proof inclusion --ledger DIR --index %s, then evledger proof "
              "verify with the log's key.\n", str(view, "index").c_str());
}

int run(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("show takes one RUN digest"));
  auto prefix = run_prefix_arg(args.positional()[0], "RUN");
  if (!prefix) return fail(prefix.error());
  Status s = with_projections(args, [&](const Ledger& ledger, const KeyValueStore& state,
                                        uint64_t) -> Status {
    auto run = resolve_run(state, *prefix, "RUN");
    if (!run) return run.error();
    auto view = read_run_view(state, *run);
    if (!view) return view.error();
    if (!*view) return not_found("no observation of run " + digest_text(*run) + " in this ledger");
    if (args.has("json")) {
      std::printf("%s\n", json_line(**view).c_str());
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
    print_view(**view, checkpoint_line, origin);
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

}  // namespace

int cmd_show(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"json", false}}, kUsage, run);
}

}  // namespace evl::cli
