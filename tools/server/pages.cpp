// The pages' routes and their assets (tools/server/pages.h).
#include "tools/server/pages.h"

#include "events/bytes.h"
#include "events/sha256.h"
#include "tools/server/page_support.h"

namespace evl::server {
namespace {

// An asset answer: cached for an hour, revalidated by the digest of its bytes.
Response asset(const Request& request, std::string_view body, std::string_view type) {
  const std::string etag = "\"" + hex_encode(sha256(as_bytes(body))).substr(0, 16) + "\"";
  Response r;
  if (request.header("If-None-Match").value_or("") == etag) {
    r.status = 304;
  } else {
    r = Response::bytes(200, std::string(type), std::string(body));
  }
  return std::move(r).with("ETag", etag).with("Cache-Control", "public, max-age=3600")
      .with("X-Content-Type-Options", "nosniff");
}

// The pages' icon: a browser asks for one, and finds it in each page's head.
constexpr std::string_view kAppIcon =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
    "<rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#0b4fa8\"/>"
    "<path d=\"M4 4h8v2H6v1h5v2H6v1h6v2H4z\" fill=\"#fff\"/></svg>";

}  // namespace

Response handle_asset(const Request& request, Context&) {
  if (request.rest == "app.css") return asset(request, kAppCss, "text/css; charset=utf-8");
  if (request.rest == "app.js") return asset(request, kAppJs, "text/javascript; charset=utf-8");
  if (request.rest == "icon.svg") return asset(request, kAppIcon, "image/svg+xml");
  return pages::error_page(request, 404, "no asset " + request.rest.substr(0, 100) +
                                             " on this server: app.css, app.js and icon.svg are");
}

void add_page_routes(Router& router) {
  router.get("/assets/", "asset", handle_asset, true);
  router.get("/runs/", "page-run", handle_page_run, true);
  router.get("/groups/", "page-group", handle_page_group, true);
  router.get("/compare", "page-compare", handle_page_compare);
  router.get("/events/", "page-event", handle_page_event, true);
  router.get("/", "page-home", handle_page_home);
  router.get("/benchmarks", "page-benchmarks", handle_page_benchmarks);
  router.get("/benchmarks/", "page-benchmark", handle_page_benchmark, true);
  router.get("/records", "page-records", handle_page_records);
  router.get("/records/current", "page-records-current", handle_page_records_current);
  router.get("/records/feed.xml", "page-records-feed", handle_page_records_feed);
  router.get("/keys", "page-keys", handle_page_keys);
  router.get("/search", "page-search", handle_page_search);
}

}  // namespace evl::server
