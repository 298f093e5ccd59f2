// evledger runs / groups / leaders — the projections as lists.
#include <optional>
#include <string>

#include "projections/query.h"
#include "tools/commands.h"
#include "tools/projection_cli.h"
#include "tools/run_page.h"

namespace evl::cli {

namespace {

constexpr const char* kRunsUsage =
    "usage: evledger runs --ledger DIR [--benchmark B] [--group KEY] [--json]\n"
    "\n"
    "Lists run views (one per observation), with rank, evidence and flags. --benchmark keeps\n"
    "one benchmark's runs; --group one group's, in display order: its comparison key\n"
    "(sha256:<64 hex>) or a start of it that no other group's shares, at least 6 hex digits,\n"
    "as 'evledger groups' and 'evledger show' print them; both, the group's runs of that\n"
    "benchmark. --json prints one run view per line with DESIGN.md's field names, every member\n"
    "of 'evledger show --json' but the four manifest summaries (GET /api/v1/runs lists the\n"
    "same views in the same order).\n"
    "\n"
    "The text form is a table with a header line. RANK is place/ranked members of the run's\n"
    "group: =3/17 for a tie, -/17 for a run that is not ranked ('evledger show' says why), -/-\n"
    "for one without a group. Each run digest is shortened to sha256:<12 hex>…, which\n"
    "'evledger show' takes while no other run's digest starts the same.\n";

constexpr const char* kGroupsUsage =
    "usage: evledger groups --ledger DIR [--json]\n"
    "\n"
    "Lists comparison groups: key, ranked members, all members that are not void, the leader\n"
    "and its primary value.\n";

constexpr const char* kLeadersUsage =
    "usage: evledger leaders --ledger DIR [--group KEY] [--json]\n"
    "\n"
    "Lists every change of a group's leader in log order: group, new leader, previous leader,\n"
    "cause (new_run, retracted, superseded, disqualified, voided, resolved) and log index.\n"
    "--group keeps one group's: its comparison key or a start of it, as for 'evledger runs'.\n";

// A digest in the listings: 12 hex digits, which 'evledger show' takes back.
std::string listed_digest(const Json* v) { return short_digest(text_of(v), 12); }
// A run that may be null (a group without a leader, the first leader's predecessor).
std::string listed_run_or_none(const Json* run) {
  return run == nullptr || run->is_null() ? std::string("none") : listed_digest(run);
}

std::string joined_list(const Json* list) {
  if (list == nullptr || !list->is_array() || list->as_array().empty()) return "-";
  std::string out;
  for (const auto& item : list->as_array()) out += (out.empty() ? "" : ",") + text_of(&item);
  return out;
}

void print_runs_header() {
  std::printf("%s\n", (padded("RUN", 21) + padded("RANK", 8) + padded("PRIMARY", 17) +
                       padded("EVIDENCE", 13) + padded("STATUS", 20) + padded("FLAGS", 14) +
                       "TITLE")
                          .c_str());
}

// One line per run: its rank as place/ranked members of its group ("=3/17" when tied, "-/17"
// when it is not ranked), the primary measurement, evidence, status, flags and title.
void print_run_line(const Json& run) {
  std::string size = text_of(run.find("groupSize"));
  std::string rank = text_of(run.find("rank"));
  std::string place = (text_of(run.find("tied")) == "true" ? "=" : "") + rank + "/" + size;
  std::printf("%s\n", (padded(listed_digest(run.find("run")), 21) + padded(place, 8) +
                       padded(primary_text(run), 17) + padded(text_of(run.find("evidence")), 13) +
                       padded(text_of(run.find("status")), 20) +
                       padded(joined_list(run.find("flags")), 14) + text_of(run.find("title")))
                          .c_str());
}

int run_runs(const Args& args) {
  RunFilter filter;
  filter.benchmark = args.get("benchmark");
  std::optional<std::string> group_prefix;
  if (auto group = args.get("group")) {
    auto prefix = parse_group_prefix(*group, "--group");
    if (!prefix) return fail(prefix.error());
    group_prefix = *prefix;
  }
  Status s = with_projections(args, [&](const KeyValueStore& state, uint64_t) -> Status {
    if (group_prefix) {
      auto key = resolve_group(state, *group_prefix, "--group");
      if (!key) return key.error();
      filter.group = *key;
    }
    auto runs = list_runs(state, filter);
    if (!runs) return runs.error();
    if (!args.has("json")) print_runs_header();
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
    if (!args.has("json")) {
      std::printf("%s\n", (padded("GROUP", 72) + padded("RANKED", 8) + padded("MEMBERS", 9) +
                           padded("LEADER", 21) + "LEADING VALUE").c_str());
    }
    for (const auto& group : *groups) {
      if (args.has("json")) {
        std::printf("%s\n", json_line(group).c_str());
      } else {
        std::string leader = listed_run_or_none(group.find("leader"));
        std::printf("%s\n", (padded(text_of(group.find("group")), 72) +
                             padded(text_of(group.find("size")), 8) +
                             padded(text_of(group.find("members")), 9) + padded(leader, 21) +
                             text_of(group.find("leaderValue")))
                                .c_str());
      }
    }
    return Status::ok();
  });
  return s ? kExitOk : fail(s);
}

int run_leaders(const Args& args) {
  std::optional<std::string> group_prefix;
  if (auto g = args.get("group")) {
    auto prefix = parse_group_prefix(*g, "--group");
    if (!prefix) return fail(prefix.error());
    group_prefix = *prefix;
  }
  Status s = with_projections(args, [&](const KeyValueStore& state, uint64_t) -> Status {
    std::optional<Digest> group;
    if (group_prefix) {
      auto key = resolve_group(state, *group_prefix, "--group");
      if (!key) return key.error();
      group = *key;
    }
    auto history = leadership_history(state, group);
    if (!history) return history.error();
    if (!args.has("json")) {
      std::printf("%s\n", (padded("INDEX", 10) + padded("GROUP", 21) + padded("CAUSE", 13) +
                           padded("LEADER", 21) + "PREVIOUS").c_str());
    }
    for (const auto& change : *history) {
      if (args.has("json")) {
        std::printf("%s\n", json_line(change).c_str());
      } else {
        std::printf("%s\n", (padded(text_of(change.find("index")), 10) +
                             padded(listed_digest(change.find("group")), 21) +
                             padded(text_of(change.find("cause")), 13) +
                             padded(listed_run_or_none(change.find("run")), 21) +
                             listed_run_or_none(change.find("previous")))
                                .c_str());
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
