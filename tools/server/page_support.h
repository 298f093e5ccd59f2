// tools/server/page_support.h — what the pages' handlers share (page_*.cpp only): the frame
// every page has (head, site header with its navigation and search, footer), their answers and
// error pages, and the pieces several pages show.
//
// Thread safety: pure functions; a PageAnswer belongs to one request.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/json.h"
#include "events/status.h"
#include "projections/query.h"
#include "projections/store.h"
#include "tools/server/context.h"
#include "tools/server/html.h"
#include "tools/server/http.h"

namespace evl::server::pages {

// The server's --prefix, as the request's target shows it ("" at the root).
std::string prefix_of(const Request& request);
// The way up from the requested page to the server's root, which its links start with: "./"
// for a page at the root (/records), "../" one level down (/runs/<hex>), and "log/" for the
// home page of a server at --prefix /log asked for as "/log".
std::string root_of(const Request& request);

// Where a page of a listing sits: the pages after and before it, for the head's rel=next and
// rel=prev and for pager() below the list.
struct PageLinks {
  std::optional<html::Href> next, previous;
  std::optional<html::Href> first;  // a listing that pages only forward: its first page
};

// Writes the doctype, the head (title, style, script, the alternate JSON resource, the
// listing's rel=next and rel=prev), the site header, and opens <main>; finish() of the writer
// closes it, then footer() ends the page.
void begin_page(html::Writer& w, std::string_view title, const html::Href& alternate,
                const PageLinks& links = {});

// A listing's page as the request asks for it: cursor= and limit= as the API takes them
// (api::page_parameters: 1 to kMaxPageLimit, kDefaultPageLimit without limit=).
Result<PageRequest> page_request(const Request& request);
// The links around `page` of the listing at `path` whose other query parameters are `fixed`
// (as Href::query takes them): its next and previous cursors, with the request's limit= kept;
// the first page (rel=first) for a page after the first of a listing without `previous`.
PageLinks page_links(const Request& request, std::string_view path,
                     std::vector<std::pair<std::string_view, std::string_view>> fixed,
                     const Page& page);
// The same query as the page's with `cursor` (none: the first page): the API resource that
// shows the same items, or another page.
html::Href listing_href(const Request& request, std::string_view path,
                        std::vector<std::pair<std::string_view, std::string_view>> fixed,
                        const std::optional<std::string>& cursor);
// The pager below a list: links to the page before (`previous_text`; "First page" to a forward
// listing's first) and after (`next_text`), where there are such pages; nothing on a listing of
// one page.
void pager(html::Writer& w, const PageLinks& links, std::string_view previous_text,
           std::string_view next_text);
void end_page(html::Writer& w);

// A JSON value as indented text (two spaces), for people.
std::string pretty_json(const Json& value);

// A member of a view or record (json_path) as text (cli::text_of: "-" for null), or as a number.
std::string member(const Json& value, std::string_view path);
std::optional<double> number(const Json& value, std::string_view path);
// The GPU of a view or group ({vendor, product, architecture}) as "NVIDIA B200 (sm_100)", or "-".
std::string gpu_text(const Json* gpu);

// A view's benchmark as a table cell linking to its page ("-" when it names none).
void benchmark_cell(html::Writer& w, const Json& view);
// A table of run views (listing views, projections/query.h): each run's title linking to its
// page, benchmark, GPU, primary measurement, rank and evidence, as the projections say them.
void run_table(html::Writer& w, const std::vector<Json>& runs);
// A leadership change ({group, run, previous, cause, index}) as a list item's content: the new
// leader linked (and its group, `with_group`), the cause, the one it replaced and the entry.
void leadership_change(html::Writer& w, const Json& change, bool with_group);

// The page that `render` makes of one snapshot of the projections, answered as the API
// answers (api.h: ETag of the newest checkpoint, 304, 503 while they lag), with the CSP; an
// error becomes a page with its status and message.
Response page_answer(const Request& request, Context& context,
                     const std::function<Result<std::string>(const ProjectionStore&)>& render,
                     std::string_view content_type = "text/html; charset=utf-8");
// A page that takes no query parameters but `allowed`: 400 naming any other (api.h's rule,
// `route` naming the page), else page_answer() of what `render` makes of the snapshot with
// the page's way up to the root (root_of).
using PageRender =
    std::function<Result<std::string>(const ProjectionStore& state, const std::string& root)>;
Response checked_page(const Request& request, Context& context, std::string_view route,
                      std::initializer_list<std::string_view> allowed, const PageRender& render,
                      std::string_view content_type = "text/html; charset=utf-8");
// An error page for `status` (a 4xx or 5xx) and its message.
Response error_page(const Request& request, int status, std::string_view detail);

}  // namespace evl::server::pages
