// The comparison group's page, /groups/<key>: its ranking as the projections order it, a chart
// of its runs over observation time with the record staircase, and its leadership history.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/manifest_check.h"
#include "projections/query.h"
#include "tools/json_text.h"
#include "tools/run_page.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;

using pages::member;
using pages::number;

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct Point {
  double t, v;
  const Json* run;
  std::string digest;  // its run digest's text, read once
};

// The chart: every run with a primary value over its observation time, and the staircase of
// the leaders in the order the leadership history gives them.
void chart(Writer& w, const std::vector<Json>& runs, const std::vector<Json>& history) {
  std::vector<Point> points;
  for (const Json& r : runs) {
    auto t = parse_utc_time_ms(member(r, "observedAt"));
    auto v = number(r, "primary.value");
    if (t && v) points.push_back({static_cast<double>(*t), *v, &r, member(r, "run")});
  }
  if (points.empty()) return;
  double t0 = points[0].t, t1 = t0, v0 = points[0].v, v1 = v0;
  for (const Point& p : points) {
    t0 = std::min(t0, p.t), t1 = std::max(t1, p.t), v0 = std::min(v0, p.v), v1 = std::max(v1, p.v);
  }
  constexpr double kW = 640, kH = 240, kLeft = 60, kRight = 10, kTop = 10, kBottom = 30;
  auto x = [&](double t) { return kLeft + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (kW - kLeft - kRight); };
  auto y = [&](double v) { return kTop + (v1 > v0 ? (v1 - v) / (v1 - v0) : 0.5) * (kH - kTop - kBottom); };
  const std::string unit = member(runs.front(), "primary.unit");
  w.open("svg", {{"viewBox", "0 0 640 240"}, {"class", "chart"}, {"role", "img"},
                 {"aria-label", "primary value (" + unit + ") of each run over observation time, "
                                "with the record staircase"}});
  w.empty("line", {{"x1", fixed(kLeft, 0)}, {"y1", fixed(kH - kBottom, 0)}, {"x2", fixed(kW - kRight, 0)},
                   {"y2", fixed(kH - kBottom, 0)}, {"class", "axis"}});
  w.empty("line", {{"x1", fixed(kLeft, 0)}, {"y1", fixed(kTop, 0)}, {"x2", fixed(kLeft, 0)},
                   {"y2", fixed(kH - kBottom, 0)}, {"class", "axis"}});
  const Json top(v1), bottom(v0);
  w.element("text", cli::text_of(&top) + " " + unit,
            {{"x", "4"}, {"y", fixed(kTop + 10, 0)}, {"class", "label"}});
  w.element("text", cli::text_of(&bottom) + " " + unit,
            {{"x", "4"}, {"y", fixed(kH - kBottom, 0)}, {"class", "label"}});
  w.element("text", member(*points.front().run, "observedAt").substr(0, 10),
            {{"x", fixed(kLeft, 0)}, {"y", fixed(kH - 8, 0)}, {"class", "label"}});
  // The staircase: each leader from its observation on, until the next.
  std::map<std::string_view, const Point*> by_run;
  for (const Point& p : points) by_run.emplace(p.digest, &p);
  std::string stairs;
  std::optional<double> last_v;
  for (const Json& change : history) {
    auto it = by_run.find(member(change, "run"));
    if (it == by_run.end()) continue;
    const Point* found = it->second;
    if (last_v) stairs += fixed(x(found->t), 1) + "," + fixed(y(*last_v), 1) + " ";
    stairs += fixed(x(found->t), 1) + "," + fixed(y(found->v), 1) + " ";
    last_v = found->v;
  }
  if (last_v) {
    stairs += fixed(kW - kRight, 1) + "," + fixed(y(*last_v), 1);
    w.empty("polyline", {{"points", stairs}, {"class", "stairs"}});
  }
  for (const Point& p : points) {
    w.open("circle", {{"cx", fixed(x(p.t), 1)}, {"cy", fixed(y(p.v), 1)}, {"r", "3.5"},
                      {"class", member(*p.run, "rank") == "1" ? "dot leader" : "dot"}});
    w.element("title", member(*p.run, "title") + ": " + cli::primary_text(*p.run) + ", " +
                           member(*p.run, "observedAt").substr(0, 10));
    w.close();
  }
  w.close();
}

void ranking(Writer& w, const std::vector<Json>& runs, const Json& group) {
  const auto leader_value = number(group, "leaderValue");
  w.open("table", {{"class", "ranking"}}).open("thead").open("tr");
  for (const char* h : {"Rank", "Run", "Primary", "vs #1", "Evidence", "Observed"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  for (const Json& r : runs) {
    w.open("tr");
    const std::string rank = member(r, "rank");
    w.element("td", rank == "-" ? "not ranked" : rank + (member(r, "tied") == "true" ? " (tied)" : ""));
    w.open("td").link(Href::run(member(r, "run")), member(r, "title")).close();
    w.element("td", cli::primary_text(r));
    const auto value = number(r, "primary.value");
    w.element("td", rank != "-" && value && leader_value && *leader_value > 0
                        ? fixed(*value / *leader_value, 2) + "×" : std::string("-"));
    w.open("td").element("span", member(r, "evidence"), {{"class", "badge"}}).close();
    w.element("td", member(r, "observedAt").substr(0, 10));
    w.close();
  }
  w.close().close();
}

// The newest changes the group page lists; /records?group= pages through all of them.
constexpr size_t kLeadershipShown = 20;

void leadership(Writer& w, const std::vector<Json>& history, const std::string& group) {
  if (history.empty()) {
    w.element("p", "No leader yet.");
    return;
  }
  w.open("ol", {{"class", "items"}, {"id", "leadership"}});
  for (size_t i = history.size(); i > 0 && history.size() - i < kLeadershipShown; --i) {
    w.open("li");
    pages::leadership_change(w, history[i - 1], false);
    w.close();
  }
  w.close();
  w.open("p").text(history.size() > kLeadershipShown
                       ? "The newest " + std::to_string(kLeadershipShown) + " of " +
                             std::to_string(history.size()) + " changes. "
                       : std::string());
  w.link(Href::query("/records", {{"group", html::digest_hex(group)}}), "The whole history");
  w.text(", newest first.").close();
}

Result<std::string> render_group(const ProjectionStore& state, const Digest& key,
                                 const std::string& root) {
  auto group = read_group(state, key);
  if (!group) return group.error();
  if (!*group) return not_found("no comparison group " + digest_text(key) + " in this ledger");
  auto runs = list_group_rows(state, key);
  if (!runs) return runs.error();
  auto history = leadership_history(state, key);
  if (!history) return history.error();
  const std::string hex = html::digest_hex(digest_text(key));
  Writer w(root);
  const std::string heading = "Comparison group " + hex.substr(0, 8);
  pages::begin_page(w, heading, Href::path("/api/v1/groups/" + hex));
  w.element("h1", heading);
  w.element("p", runs->empty() ? std::string("No runs.") : member(runs->front(), "benchmark") +
                 " · " + member(**group, "members") + " runs, " +
                 std::to_string(std::count_if(runs->begin(), runs->end(), [](const Json& r) {
                   return member(r, "rank") != "-";
                 })) + " ranked", {{"class", "subtitle"}});
  w.open("section").element("h2", "Ranking");
  ranking(w, *runs, **group);
  w.close();
  w.open("section").element("h2", "Runs over time");
  chart(w, *runs, *history);
  w.close();
  w.open("section").element("h2", "Leadership history");
  leadership(w, *history, digest_text(key));
  w.close();
  pages::end_page(w);
  return w.finish();
}

}  // namespace

Response handle_page_group(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "groups/{group}", {}); !s) {
    return pages::error_page(request, 400, s.message());
  }
  auto hex = parse_group_prefix(request.rest, "group");
  if (!hex) return pages::error_page(request, http_status(hex.error().code()), hex.error().message());
  const std::string root = pages::root_of(request);
  return pages::page_answer(request, context, [&](const ProjectionStore& state) -> Result<std::string> {
    auto key = resolve_group(state, *hex, "group");
    if (!key) return key.error();
    return render_group(state, *key, root);
  });
}

}  // namespace evl::server
