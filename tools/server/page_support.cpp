#include "tools/server/page_support.h"

#include "events/jcs.h"
#include "tools/server/api_support.h"
#include "tools/server/pages.h"
#include "tools/server/router.h"

namespace evl::server::pages {
namespace {

void pretty(const Json& value, int depth, std::string& out) {
  const std::string indent(2 * (depth + 1), ' ');
  if (value.is_array() && !value.as_array().empty()) {
    out += "[\n";
    const auto& items = value.as_array();
    for (size_t i = 0; i < items.size(); ++i) {
      out += indent;
      pretty(items[i], depth + 1, out);
      out += i + 1 < items.size() ? ",\n" : "\n";
    }
    out += std::string(2 * depth, ' ') + "]";
  } else if (value.is_object() && !value.as_object().empty()) {
    out += "{\n";
    const auto& members = value.as_object();
    for (size_t i = 0; i < members.size(); ++i) {
      out += indent + jcs_serialize(Json(members[i].first)) + ": ";
      pretty(members[i].second, depth + 1, out);
      out += i + 1 < members.size() ? ",\n" : "\n";
    }
    out += std::string(2 * depth, ' ') + "}";
  } else {
    out += jcs_serialize(value);
  }
}

// The headers every page answer carries besides the caching ones.
Response& with_page_headers(Response& r) {
  return r.with("Content-Security-Policy", std::string(kContentSecurityPolicy))
      .with("X-Content-Type-Options", "nosniff")
      .with("Referrer-Policy", "same-origin");
}

}  // namespace

std::string prefix_of(const Request& request) {
  std::string_view full = target_path(request.target);
  if (full.size() < request.path.size()) return "";
  return std::string(full.substr(0, full.size() - request.path.size()));
}

std::string pretty_json(const Json& value) {
  std::string out;
  pretty(value, 0, out);
  return out;
}

void begin_page(html::Writer& w, std::string_view title, const html::Href& alternate) {
  using html::Href;
  w.doctype().open("html", {{"lang", "en"}}).open("head");
  w.empty("meta", {{"charset", "utf-8"}});
  w.empty("meta", {{"name", "viewport"}, {"content", "width=device-width, initial-scale=1"}});
  w.element("title", std::string(title) + " · evledger");
  w.link_tag("stylesheet", Href::path("/assets/app.css"));
  w.link_tag("alternate", alternate, {{"type", "application/json"}});
  w.script(Href::path("/assets/app.js"));
  w.close();  // head
  w.open("body");
  w.open("header", {{"class", "site"}}).open("nav", {{"aria-label", "site"}});
  w.element("span", "evledger", {{"class", "brand"}});
  w.close().close();
  w.open("main");
}

void end_page(html::Writer& w) {
  w.close();  // main
  w.open("footer", {{"class", "site"}});
  w.text("Every number on this page comes from the ledger's projections; the JSON behind it "
         "is linked in this page's head.");
  w.close();
}

Response error_page(const Request& request, int status, std::string_view detail) {
  html::Writer w(prefix_of(request));
  std::string title = std::to_string(status) + " " + std::string(status_reason(status));
  begin_page(w, title, html::Href::path("/api/v1/openapi.json"));
  w.open("section", {{"class", "wide"}}).element("h1", title).element("p", detail).close();
  end_page(w);
  Response r = Response::bytes(status, std::string(kHtmlType), w.finish());
  r.with("Cache-Control", "no-store");
  return std::move(with_page_headers(r));
}

Response page_answer(const Request& request, Context& context,
                     const std::function<Result<std::string>(const ProjectionStore&)>& render,
                     std::string_view content_type) {
  api::LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return std::move(with_page_headers(*unchanged));
  Response r = answer.from_projections(render, content_type);
  if (r.status >= 400) {
    // The problem's detail is the CLI's message; the page says it, and keeps Retry-After.
    std::string detail = r.body ? *r.body : "";
    if (auto problem = parse_json(detail)) {
      if (const Json* d = problem->find("detail"); d && d->is_string()) detail = d->as_string();
    }
    Response page = error_page(request, r.status, detail);
    if (auto retry = r.header("Retry-After")) page.with("Retry-After", std::string(*retry));
    return page;
  }
  return std::move(with_page_headers(r));
}

}  // namespace evl::server::pages
