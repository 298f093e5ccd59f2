// tools/server/page_support.h — what the pages' handlers share (page_*.cpp only): the frame
// every page has (head, site header, footer), their answers and error pages.
//
// Thread safety: pure functions; a PageAnswer belongs to one request.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "events/json.h"
#include "events/status.h"
#include "projections/store.h"
#include "tools/server/context.h"
#include "tools/server/html.h"
#include "tools/server/http.h"

namespace evl::server::pages {

// The server's --prefix, as the request's target shows it ("" at the root).
std::string prefix_of(const Request& request);

// Writes the doctype, the head (title, style, script, the alternate JSON resource), the site
// header, and opens <main>; finish() of the writer closes it, then footer() ends the page.
void begin_page(html::Writer& w, std::string_view title, const html::Href& alternate);
void end_page(html::Writer& w);

// A JSON value as indented text (two spaces), for people.
std::string pretty_json(const Json& value);

// The page that `render` makes of one snapshot of the projections, answered as the API
// answers (api.h: ETag of the newest checkpoint, 304, 503 while they lag), with the CSP; an
// error becomes a page with its status and message.
Response page_answer(const Request& request, Context& context,
                     const std::function<Result<std::string>(const ProjectionStore&)>& render,
                     std::string_view content_type = "text/html; charset=utf-8");
// An error page for `status` (a 4xx or 5xx) and its message.
Response error_page(const Request& request, int status, std::string_view detail);

}  // namespace evl::server::pages
