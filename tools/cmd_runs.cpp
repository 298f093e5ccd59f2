// evledger runs / groups / leaders — the projections as lists.
#include "projections/query.h"
#include "tools/commands.h"
#include "tools/projection_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kRunsUsage =
    "usage: evledger runs --ledger DIR [--benchmark B] [--group KEY] [--json]\n"
    "\n"
    "Lists run views (one per observation), with rank, evidence and flags. --benchmark keeps\n"
    "one benchmark's runs; --group (a comparison key, sha256:...) one group's, in display\n"
    "order. --json prints one run view per line with DESIGN.md's field names. The text form\n"
    "shortens each run digest to sha256:<12 hex>…, which 'evledger show' takes while no\n"
    "other run's digest starts the same.\n";

constexpr const char* kGroupsUsage =
    "usage: evledger groups --ledger DIR [--json]\n"
    "\n"
    "Lists comparison groups: key, ranked size, members and leader.\n";

constexpr const char* kLeadersUsage =
    "usage: evledger leaders --ledger DIR [--group KEY] [--json]\n"
    "\n"
    "Lists every change of a group's leader in log order: group, new leader, previous leader,\n"
    "cause (new_run, retracted, superseded, disqualified, voided, resolved) and log index.\n";

std::string short_digest(const Json* v) {
  std::string s = text_of(v);
  return s.size() > 19 ? s.substr(0, 19) + std::string(kEllipsis) : s;  // as show reads it
}

void print_run_line(const Json& run) {
  const Json* primary = run.find("primary");
  std::string value = primary != nullptr && primary->is_object()
                          ? text_of(primary->find("value")) + " " + text_of(primary->find("unit"))
                          : "-";
  std::string rank = text_of(run.find("rank"));
  std::printf("%s  %-40.40s  %-8s rank %-4s of %-4s %-12s %-14s %s\n",
              short_digest(run.find("run")).c_str(), text_of(run.find("title")).c_str(),
              text_of(run.find("status")).c_str(), rank.c_str(),
              text_of(run.find("groupSize")).c_str(), text_of(run.find("evidence")).c_str(),
              value.c_str(), text_of(run.find("flags")).c_str());
}

int run_runs(const Args& args) {
  RunFilter filter;
  filter.benchmark = args.get("benchmark");
  if (auto group = args.get("group")) {
    auto key = digest_arg(*group, "--group");
    if (!key) return fail(key.error());
    filter.group = *key;
  }
  Status s = with_projections(args, [&](const KeyValueStore& state, uint64_t) -> Status {
    auto runs = list_runs(state, filter);
    if (!runs) return runs.error();
    for (const auto& run : *runs) {
      if (args.has("json")) {
        std::printf("%s\n", json_line(run).c_str());
      } else {
        print_run_line(run);
      }
    }
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

int run_groups(const Args& args) {
  Status s = with_projections(args, [&](const KeyValueStore& state, uint64_t) -> Status {
    auto groups = list_groups(state);
    if (!groups) return groups.error();
    for (const auto& group : *groups) {
      if (args.has("json")) {
        std::printf("%s\n", json_line(group).c_str());
      } else {
        std::printf("%s  size %-4s members %-4s leader %s (%s)\n",
                    text_of(group.find("group")).c_str(), text_of(group.find("size")).c_str(),
                    text_of(group.find("members")).c_str(),
                    short_digest(group.find("leader")).c_str(),
                    text_of(group.find("leaderValue")).c_str());
      }
    }
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

int run_leaders(const Args& args) {
  std::optional<Digest> group;
  if (auto g = args.get("group")) {
    auto key = digest_arg(*g, "--group");
    if (!key) return fail(key.error());
    group = *key;
  }
  Status s = with_projections(args, [&](const KeyValueStore& state, uint64_t) -> Status {
    auto history = leadership_history(state, group);
    if (!history) return history.error();
    for (const auto& change : *history) {
      if (args.has("json")) {
        std::printf("%s\n", json_line(change).c_str());
      } else {
        std::printf("%8s  %s  %-12s %s <- %s\n", text_of(change.find("index")).c_str(),
                    short_digest(change.find("group")).c_str(),
                    text_of(change.find("cause")).c_str(),
                    short_digest(change.find("run")).c_str(),
                    short_digest(change.find("previous")).c_str());
      }
    }
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

int check_no_positional(const Args& args, int (*fn)(const Args&)) {
  if (!args.positional().empty()) {
    return fail(usage_error("unexpected argument '" + args.positional()[0] + "'"));
  }
  return fn(args);
}

}  // namespace

int cmd_runs(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"benchmark"}, {"group"}, {"json", false}}, kRunsUsage,
                     [](const Args& a) { return check_no_positional(a, run_runs); });
}

int cmd_groups(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"json", false}}, kGroupsUsage,
                     [](const Args& a) { return check_no_positional(a, run_groups); });
}

int cmd_leaders(const std::vector<std::string>& argv) {
  return run_command(argv, {{"ledger"}, {"group"}, {"json", false}}, kLeadersUsage,
                     [](const Args& a) { return check_no_positional(a, run_leaders); });
}

}  // namespace evl::cli
