#include "tools/server/page_support.h"

#include <algorithm>

#include "events/jcs.h"
#include "tools/json_text.h"
#include "tools/run_page.h"
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
  // The home page of a server with a prefix: "/log" is its path "/".
  if (request.path == "/" && !full.empty() && full.back() != '/') return std::string(full);
  if (full.size() < request.path.size()) return "";
  return std::string(full.substr(0, full.size() - request.path.size()));
}

std::string root_of(const Request& request) {
  std::string_view full = target_path(request.target);
  if (request.path == "/" && !full.empty() && full.back() != '/') {
    return std::string(full.substr(full.rfind('/') + 1)) + "/";
  }
  const auto depth = std::count(request.path.begin(), request.path.end(), '/') - 1;
  if (depth <= 0) return "./";
  std::string up;
  for (long i = 0; i < depth; ++i) up += "../";
  return up;
}

std::string pretty_json(const Json& value) {
  std::string out;
  pretty(value, 0, out);
  return out;
}

void begin_page(html::Writer& w, std::string_view title, const html::Href& alternate,
                const PageLinks& links) {
  using html::Href;
  w.doctype().open("html", {{"lang", "en"}}).open("head");
  w.empty("meta", {{"charset", "utf-8"}});
  w.empty("meta", {{"name", "viewport"}, {"content", "width=device-width, initial-scale=1"}});
  w.element("title", std::string(title) + " · evledger");
  w.link_tag("stylesheet", Href::path("/assets/app.css"));
  w.link_tag("icon", Href::path("/assets/icon.svg"), {{"type", "image/svg+xml"}});
  w.link_tag("alternate", alternate, {{"type", "application/json"}});
  if (links.previous) w.link_tag("prev", *links.previous);
  if (links.next) w.link_tag("next", *links.next);
  if (links.first) w.link_tag("first", *links.first);
  w.script(Href::path("/assets/app.js"));
  w.close();  // head
  w.open("body");
  w.open("header", {{"class", "site"}}).open("nav", {{"aria-label", "site"}});
  w.link(Href::path("/"), "evledger", {{"class", "brand"}});
  w.link(Href::path("/benchmarks"), "Benchmarks");
  w.link(Href::path("/records"), "Records");
  w.link(Href::path("/keys"), "Keys");
  w.open_form(Href::path("/search"), {{"method", "get"}, {"role", "search"}, {"class", "search"}});
  w.element("label", "Search", {{"for", "site-q"}});
  w.empty("input", {{"type", "search"}, {"id", "site-q"}, {"name", "q"}, {"minlength", "2"},
                    {"maxlength", "200"}, {"placeholder", "benchmark, GPU, digest…"}});
  w.element("button", "Go", {{"type", "submit"}});
  w.close();  // form
  w.close().close();
  w.open("main");
}

Result<PageRequest> page_request(const Request& request) { return api::page_parameters(request); }

html::Href listing_href(const Request& request, std::string_view path,
                        std::vector<std::pair<std::string_view, std::string_view>> fixed,
                        const std::optional<std::string>& cursor) {
  const std::optional<std::string> limit = request.query("limit");
  if (cursor && !cursor->empty()) fixed.emplace_back("cursor", *cursor);
  if (limit) fixed.emplace_back("limit", *limit);
  return fixed.empty() ? html::Href::path(path) : html::Href::query(path, fixed);
}

PageLinks page_links(const Request& request, std::string_view path,
                     std::vector<std::pair<std::string_view, std::string_view>> fixed,
                     const Page& page) {
  PageLinks links;
  if (page.next) links.next = listing_href(request, path, fixed, page.next);
  if (page.previous) {
    links.previous = listing_href(request, path, fixed, page.previous);
  } else if (request.query("cursor").value_or("") != "") {
    links.first = listing_href(request, path, fixed, std::nullopt);
  }
  return links;
}

void pager(html::Writer& w, const PageLinks& links, std::string_view previous_text,
           std::string_view next_text) {
  if (!links.next && !links.previous && !links.first) return;
  w.open("nav", {{"class", "pager"}, {"aria-label", "pages"}});
  if (links.previous) w.link(*links.previous, previous_text, {{"rel", "prev"}});
  if (links.first) w.link(*links.first, "First page", {{"rel", "first"}});
  if (links.next) w.link(*links.next, next_text, {{"rel", "next"}});
  w.close();
}

std::string member(const Json& value, std::string_view path) {
  return cli::text_of(json_path(value, path));
}

std::optional<double> number(const Json& value, std::string_view path) {
  const Json* n = json_path(value, path);
  if (n == nullptr || !n->is_number()) return std::nullopt;
  return n->as_number();
}

std::string gpu_text(const Json* gpu) {
  if (gpu == nullptr || !gpu->is_object()) return "-";
  std::string text = member(*gpu, "product");
  if (const Json* arch = gpu->find("architecture"); arch && arch->is_string() &&
                                                       !arch->as_string().empty()) {
    text += " (" + cli::text_of(arch) + ")";
  }
  return text;
}

void benchmark_cell(html::Writer& w, const Json& view) {
  const Json* benchmark = view.find("benchmark");
  w.open("td");
  if (benchmark != nullptr && benchmark->is_string() && !benchmark->as_string().empty()) {
    w.link(html::Href::benchmark(benchmark->as_string()), cli::text_of(benchmark));
  } else {
    w.text("-");
  }
  w.close();
}

void run_table(html::Writer& w, const std::vector<Json>& runs) {
  using html::Href;
  w.open("table", {{"class", "ranking"}}).open("thead").open("tr");
  for (const char* h : {"Run", "Benchmark", "GPU", "Primary", "Rank", "Evidence"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  for (const Json& r : runs) {
    w.open("tr");
    w.open("td").link(Href::run(member(r, "run")), member(r, "title") == "-"
                                                         ? cli::short_digest(member(r, "run"), 12)
                                                         : member(r, "title")).close();
    benchmark_cell(w, r);
    w.element("td", gpu_text(r.find("gpu")));
    w.element("td", cli::primary_text(r));
    const std::string rank = member(r, "rank");
    w.element("td", rank == "-" ? std::string("not ranked")
                                : rank + " of " + member(r, "groupSize") +
                                      (member(r, "tied") == "true" ? " (tied)" : ""));
    w.open("td").element("span", member(r, "evidence"), {{"class", "badge"}}).close();
    w.close();
  }
  w.close().close();
}

void leadership_change(html::Writer& w, const Json& change, bool with_group) {
  using html::Href;
  const std::string run = member(change, "run"), group = member(change, "group");
  if (html::is_digest_text(run)) {
    w.link(Href::run(run), cli::short_digest(run, 12));
  } else {
    w.text("no run");
  }
  w.text(" leads");
  if (with_group && html::is_digest_text(group)) {
    w.text(" ").link(Href::group(group), "group " + html::digest_hex(group).substr(0, 8));
  }
  w.text(" (" + member(change, "cause") + ")");
  if (html::is_digest_text(member(change, "previous"))) {
    w.text(", after ").link(Href::run(member(change, "previous")),
                            cli::short_digest(member(change, "previous"), 12));
  }
  if (auto index = number(change, "index")) {
    w.text(" · ").link(Href::event(static_cast<uint64_t>(*index)), "entry " + member(change, "index"));
  }
}

void end_page(html::Writer& w) {
  w.close();  // main
  w.open("footer", {{"class", "site"}});
  w.text("Every number on this page comes from the ledger's projections; the JSON behind it "
         "is linked in this page's head.");
  w.close();
}

Response error_page(const Request& request, int status, std::string_view detail) {
  html::Writer w(root_of(request));
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

namespace evl::server::pages {

Response checked_page(const Request& request, Context& context, std::string_view route,
                      std::initializer_list<std::string_view> allowed, const PageRender& render,
                      std::string_view content_type) {
  if (Status s = api::check_parameters(request, route, allowed); !s) {
    return error_page(request, 400, s.message());
  }
  const std::string root = root_of(request);
  return page_answer(
      request, context, [&](const ProjectionStore& state) { return render(state, root); },
      content_type);
}

}  // namespace evl::server::pages
