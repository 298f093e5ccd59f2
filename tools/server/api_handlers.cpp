// The API's projection routes: runs, groups, leaders, benchmarks (tools/server/api.h). Each
// parses its parameters, reads one snapshot of the projections through projections/query.h
// (the functions the CLI's listings call) and serializes what they give.
#include <optional>
#include <string>

#include "events/jcs.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "tools/server/api.h"
#include "tools/server/api_support.h"

namespace evl::server {

using api::LogAnswer;

namespace {

// A group named by a parameter (group=<key or a unique start>), resolved in `state`.
struct GroupName {
  std::optional<std::string> hex;  // parsed: the hex digits
  Result<std::optional<Digest>> resolve(const ProjectionStore& state) const {
    if (!hex) return std::optional<Digest>();
    auto key = resolve_group(state, *hex, "group");
    if (!key) return key.error();
    return std::optional<Digest>(*key);
  }
};

Result<GroupName> group_parameter(const Request& request) {
  GroupName name;
  if (auto text = request.query("group")) {
    auto hex = parse_group_prefix(*text, "group");
    if (!hex) return hex.error();
    name.hex = std::move(*hex);
  }
  return name;
}

}  // namespace

Response handle_api_runs(const Request& request, Context& context) {
  auto group = group_parameter(request);
  if (!group) return problem(group.error());
  RunFilter filter;
  filter.benchmark = request.query("benchmark");
  return api::projection_listing(
      request, context, "runs", {"benchmark", "group", "limit", "cursor"},
      [&](const ProjectionStore& state, const PageRequest& page) -> Result<Page> {
        auto key = group->resolve(state);
        if (!key) return key.error();
        filter.group = *key;
        return list_runs(state, filter, page);
      });
}

Response handle_api_run(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "runs/{run}", {}); !s) return problem(s);
  auto hex = parse_run_prefix(request.rest, "run");
  if (!hex) return problem(hex.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  auto manifests = log_manifests(context.ledger);
  return answer.from_projections([&](const ProjectionStore& state) -> Result<std::string> {
    auto view = read_named_run_view(state, *manifests, *hex, "run");
    if (!view) return view.error();
    return jcs_serialize(*view);
  });
}

Response handle_api_groups(const Request& request, Context& context) {
  return api::projection_listing(request, context, "groups", {"limit", "cursor"},
                                 [](const ProjectionStore& state, const PageRequest& page) {
                                   return list_groups(state, page);
                                 });
}

Response handle_api_group(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "groups/{group}", {}); !s) return problem(s);
  auto hex = parse_group_prefix(request.rest, "group");
  if (!hex) return problem(hex.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  return answer.from_projections([&](const ProjectionStore& state) -> Result<std::string> {
    auto key = resolve_group(state, *hex, "group");
    if (!key) return key.error();
    auto group = read_group(state, *key);
    if (!group) return group.error();
    if (!*group) return not_found("no comparison group " + digest_text(*key) + " in this ledger");
    return jcs_serialize(**group);
  });
}

Response handle_api_leaders(const Request& request, Context& context) {
  auto group = group_parameter(request);
  if (!group) return problem(group.error());
  const std::string order = request.query("order").value_or("log");
  if (order != "log" && order != "newest") {
    return problem(usage_error("order= must be log (oldest first, the default) or newest"));
  }
  return api::projection_listing(
      request, context, "leaders", {"group", "order", "limit", "cursor"},
      [&](const ProjectionStore& state, const PageRequest& page) -> Result<Page> {
        auto key = group->resolve(state);
        if (!key) return key.error();
        return order == "newest" ? leadership_history_newest_first(state, *key, page)
                                 : leadership_history(state, *key, page);
      });
}

Response handle_api_benchmarks(const Request& request, Context& context) {
  return api::projection_listing(request, context, "benchmarks", {"limit", "cursor"},
                                 [](const ProjectionStore& state, const PageRequest& page) {
                                   return list_benchmarks(state, page);
                                 });
}

}  // namespace evl::server
