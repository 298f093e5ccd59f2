// The search page, /search?q=: runs by benchmark, implementation, source, GPU, external id or
// the start of a run digest or comparison key (projections/query_site.h's search_runs), and the
// benchmarks whose name holds the words.
#include <string>
#include <vector>

#include "projections/query.h"
#include "projections/query_site.h"
#include "tools/json_text.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;

void search_form(Writer& w, const std::string& q) {
  w.open_form(Href::path("/search"), {{"method", "get"}, {"role", "search"}, {"class", "search wide"}});
  w.element("label", "Search runs", {{"for", "q"}});
  w.empty("input", {{"type", "search"}, {"id", "q"}, {"name", "q"}, {"value", q},
                    {"minlength", "2"}, {"maxlength", "200"}});
  w.element("button", "Search", {{"type", "submit"}});
  w.close();
}

Result<std::string> render_search(const Request& request, const ProjectionStore& state,
                                  const std::string& q, const std::string& root) {
  auto page = pages::page_request(request);
  if (!page) return page.error();
  Result<Page> found = Page{};
  if (!q.empty()) found = search_runs(state, q, *page);
  if (!found) return found.error();
  const pages::PageLinks links = pages::page_links(request, "/search", {{"q", q}}, *found);
  Writer w(root);
  // The API has no search; the runs it searches are its runs listing.
  pages::begin_page(w, q.empty() ? std::string("Search") : "Search: " + q,
                    Href::path("/api/v1/runs"), links);
  w.element("h1", "Search");
  search_form(w, q);
  w.element("p", "By benchmark, implementation, source, GPU or external id (any part of the "
                 "name, in any case), or by the first digits of a run digest or comparison key.",
            {{"class", "subtitle"}});
  if (q.empty()) {
    pages::end_page(w);
    return w.finish();
  }
  w.open("section").element("h2", "Runs");
  if (found->items.empty()) {
    w.element("p", page->cursor.empty() ? "No run matches." : "No run matches after these.",
              {{"id", "no-match"}});
  } else {
    w.element("p", std::to_string(found->items.size()) +
                       (found->next ? "+ runs match; these " +
                                          std::string(page->cursor.empty() ? "first " : "") +
                                          "by digest:"
                                    : std::string(" runs match") +
                                          (page->cursor.empty() ? ":" : " here:")),
              {{"id", "match-count"}});
    pages::run_table(w, found->items);
  }
  pages::pager(w, links, "", "More runs");
  w.close();
  pages::end_page(w);
  return w.finish();
}

}  // namespace

Response handle_page_search(const Request& request, Context& context) {
  const std::string q = request.query("q").value_or("");
  return pages::checked_page(request, context, "search", {"q", "cursor", "limit"},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_search(request, state, q, root);
                             });
}

}  // namespace evl::server
