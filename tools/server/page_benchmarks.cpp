// The benchmarks, /benchmarks: every benchmark the runs name, with its number of runs; and one
// benchmark, /benchmarks/<name> (or /benchmarks?name=<name> for any name): its comparison
// groups per GPU and protocol, each with its leader and size, as the projections hold them.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "projections/query.h"
#include "projections/query_site.h"
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

// A page of the benchmarks (cursor=, limit=), as GET /api/v1/benchmarks lists them.
Result<std::string> render_benchmarks(const Request& request, const ProjectionStore& state,
                                      const std::string& root) {
  auto wanted = pages::page_request(request);
  if (!wanted) return wanted.error();
  auto page = list_benchmarks(state, *wanted);
  if (!page) return page.error();
  const pages::PageLinks links = pages::page_links(request, "/benchmarks", {}, *page);
  Writer w(root);
  pages::begin_page(w, "Benchmarks",
                    pages::listing_href(request, "/api/v1/benchmarks", {}, wanted->cursor), links);
  w.element("h1", "Benchmarks");
  w.element("p", "The benchmarks named by the observed runs, by name; " +
                     std::to_string(wanted->limit) + " a page.", {{"class", "subtitle"}});
  w.open("table", {{"class", "ranking"}, {"id", "benchmarks"}}).open("thead").open("tr");
  w.element("th", "Benchmark", {{"scope", "col"}}).element("th", "Runs", {{"scope", "col"}});
  w.close().close().open("tbody");
  for (const Json& b : page->items) {
    const Json* name = b.find("benchmark");
    if (name == nullptr || !name->is_string()) continue;
    w.open("tr");
    w.open("td").link(Href::benchmark(name->as_string()), cli::text_of(name)).close();
    w.element("td", member(b, "runs"));
    w.close();
  }
  w.close().close();
  pages::pager(w, links, "", "More benchmarks");
  pages::end_page(w);
  return w.finish();
}

// The groups in the order people look for them: by GPU, then protocol, then key.
std::vector<const Json*> by_gpu_and_protocol(const std::vector<Json>& groups) {
  std::vector<const Json*> out;
  for (const Json& g : groups) out.push_back(&g);
  std::stable_sort(out.begin(), out.end(), [](const Json* a, const Json* b) {
    const auto ka = std::make_pair(pages::gpu_text(a->find("gpu")), member(*a, "preimage.protocol"));
    const auto kb = std::make_pair(pages::gpu_text(b->find("gpu")), member(*b, "preimage.protocol"));
    return ka < kb;
  });
  return out;
}

// A benchmark's groups, and a page of its runs (cursor=, limit=) as GET /api/v1/runs?benchmark=
// lists them.
Result<std::string> render_benchmark(const Request& request, const ProjectionStore& state,
                                     const std::string& name, const std::string& root) {
  auto wanted = pages::page_request(request);
  if (!wanted) return wanted.error();
  auto found = benchmark_groups(state, name);
  if (!found) return found.error();
  if (found->runs.empty()) {
    return not_found("no observed run names benchmark \"" + name.substr(0, 200) +
                     "\"; /benchmarks lists those that runs name");
  }
  RunFilter filter;
  filter.benchmark = name;
  auto runs = list_runs(state, filter, *wanted);
  if (!runs) return runs.error();
  // The page's own path: /benchmarks/<name>, or /benchmarks?name= for a name no path holds.
  const std::string path = Href::benchmark(name).target();
  const bool by_path = path.find('?') == std::string::npos;
  std::vector<std::pair<std::string_view, std::string_view>> fixed;
  if (!by_path) fixed.emplace_back("name", name);
  const pages::PageLinks links =
      pages::page_links(request, by_path ? std::string_view(path) : "/benchmarks", fixed, *runs);
  std::map<std::string, const Json*> views;  // run digest -> its view
  for (const Json& r : found->runs) views.emplace(member(r, "run"), &r);
  Writer w(root);
  const std::string heading = "Benchmark " + name;
  pages::begin_page(w, heading,
                    pages::listing_href(request, "/api/v1/runs", {{"benchmark", name}},
                                        wanted->cursor),
                    links);
  w.element("h1", heading);
  w.element("p", std::to_string(found->runs.size()) + " runs in " +
                     std::to_string(found->groups.size()) + " comparison groups" +
                     (found->ungrouped ? ", " + std::to_string(found->ungrouped) + " without one"
                                       : std::string()),
            {{"class", "subtitle"}});
  w.open("section").element("h2", "Comparison groups");
  w.element("p", "A group holds the runs that measured the same workload under the same "
                 "protocol, environment and correctness rule: one per GPU and protocol.");
  w.open("table", {{"class", "ranking"}, {"id", "groups"}}).open("thead").open("tr");
  for (const char* h : {"GPU", "Protocol", "Group", "Leader", "Ranked", "Runs"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  for (const Json* g : by_gpu_and_protocol(found->groups)) {
    const std::string key = member(*g, "group"), leader = member(*g, "leader");
    w.open("tr");
    w.element("td", pages::gpu_text(g->find("gpu")));
    w.element("td", cli::short_digest(member(*g, "preimage.protocol"), 12));
    w.open("td");
    if (html::is_digest_text(key)) w.link(Href::group(key), html::digest_hex(key).substr(0, 8));
    w.close();
    w.open("td");
    if (html::is_digest_text(leader)) {
      auto view = views.find(leader);
      w.link(Href::run(leader), view != views.end() ? member(*view->second, "title")
                                                    : cli::short_digest(leader, 12));
      if (view != views.end()) w.text(" · " + cli::primary_text(*view->second));
    } else {
      w.text("none ranked");
    }
    w.close();
    w.element("td", member(*g, "size"));
    w.element("td", member(*g, "members"));
    w.close();
  }
  w.close().close();
  w.close();
  w.open("section").element("h2", "Runs");
  w.element("p", "By run digest, " + std::to_string(wanted->limit) + " a page.");
  pages::run_table(w, runs->items);
  pages::pager(w, links, "", "More runs");
  w.close();
  pages::end_page(w);
  return w.finish();
}

Response benchmark_page(const Request& request, Context& context, std::string_view route,
                        std::initializer_list<std::string_view> allowed, const std::string& name) {
  return pages::checked_page(request, context, route, allowed,
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_benchmark(request, state, name, root);
                             });
}

}  // namespace

Response handle_page_benchmarks(const Request& request, Context& context) {
  if (auto name = request.query("name")) {
    return benchmark_page(request, context, "benchmarks", {"name", "cursor", "limit"}, *name);
  }
  return pages::checked_page(request, context, "benchmarks", {"cursor", "limit"},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_benchmarks(request, state, root);
                             });
}

Response handle_page_benchmark(const Request& request, Context& context) {
  return benchmark_page(request, context, "benchmarks/{name}", {"cursor", "limit"}, request.rest);
}

}  // namespace evl::server
