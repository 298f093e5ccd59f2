// tools/server/pages.h — the pages people read, served by `evledger serve` at its prefix,
// rendered on the server from the projections (projections/query.h, the calls the JSON API
// makes) through the HTML writer (tools/server/html.h). No page decides a rank, an evidence
// level or a verdict: it shows what the projections say.
//
//   GET /assets/app.css, /assets/app.js, /assets/icon.svg   the pages' style, script and icon
//        (embedded at build time)
//   GET /runs/<run digest or a unique start>   a run: every section of `evledger show`,
//        banners, "Compare with #1", the group, "Cite this record" with a .tlog-proof
//   GET /groups/<comparison key or a unique start>   its ranking with ties, evidence and
//        "vs #1", an SVG chart of its runs over observation time with the record staircase
//        (the leaders in the order of the leadership history), and that history
//   GET /compare?run=<run>&run=<run>[&format=csv|json]   2 to 8 runs side by side in aligned
//        rows; the rows as CSV, or the run views as JSON ({"runs": [...]})
//   GET /events/<log index or event id>   one entry decoded, its signers with their key names
//        and roles at its position, its inclusion proof in the newest checkpoint with a
//        .tlog-proof download, and links to every run it touched
//   GET /   the log's origin, size, newest checkpoint and its cosignatures (serve --policy), the
//        projection statement, counts, recent events and recent record changes
//   GET /benchmarks   the benchmarks with their number of runs, a page of them
//   GET /benchmarks/<name>, /benchmarks?name=<name>   its comparison groups per GPU and
//        protocol, each with its leader and size, and a page of its runs
//   GET /records[?group=<key>]   the first current records, recently broken ones, and a page
//        of the record history newest first (of one group with group=), as
//        /api/v1/leaders?order=newest pages it
//   GET /records/current   a page of the current records, one per group by key, with
//        /api/v1/groups's cursors
//   GET /records/feed.xml   an Atom feed of the newest leadership changes (ids that never change)
//   GET /keys   a page of the key registry: grants, revocations, voided ranges; the first void
//        events
//   GET /search?q=<words>   a page of the runs found by benchmark, implementation, source, GPU,
//        external id or the start of a digest
// A page that lists a set that grows with the log takes the API's limit= and cursor= (api.h)
// and shows one page of it: rel=next (and rel=prev, or rel=first for a listing that pages only
// forward) in its head and a pager below the list; its alternate JSON is the API's same page.
//
// Links are relative to the page they are on (page_support.h's root_of), so that the pages
// work at any --prefix and below a proxy's sub-path that the server never sees.
// Every page carries the Content-Security-Policy below (no inline script or style, scripts only
// from /assets/), X-Content-Type-Options: nosniff, <link rel=alternate type=application/json>
// to the API resource it shows, and the API's caching rule (api.h): an ETag of the newest
// checkpoint, so that a cache in front (tools/nginx/) keeps it until the next checkpoint.
// Errors are pages too, with the API's status and the CLI's message.
//
// Thread safety: handlers are plain functions of their request and context.
#pragma once

#include <string_view>

#include "tools/server/context.h"
#include "tools/server/http.h"
#include "tools/server/router.h"

namespace evl::server {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
inline constexpr std::string_view kHtmlType = "text/html; charset=utf-8";

// The assets (tools/server/assets/), embedded at build time.
extern const std::string_view kAppCss;
extern const std::string_view kAppJs;

// Adds the routes above to `router`.
void add_page_routes(Router& router);

Response handle_asset(const Request& request, Context& context);
Response handle_page_run(const Request& request, Context& context);
Response handle_page_group(const Request& request, Context& context);
Response handle_page_compare(const Request& request, Context& context);
Response handle_page_event(const Request& request, Context& context);
Response handle_page_home(const Request& request, Context& context);
Response handle_page_benchmarks(const Request& request, Context& context);
Response handle_page_benchmark(const Request& request, Context& context);
Response handle_page_records(const Request& request, Context& context);
Response handle_page_records_current(const Request& request, Context& context);
Response handle_page_records_feed(const Request& request, Context& context);
Response handle_page_keys(const Request& request, Context& context);
Response handle_page_search(const Request& request, Context& context);

}  // namespace evl::server
