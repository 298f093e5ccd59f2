// The comparison page, /compare?run=..&run=..: 2 to 8 run views side by side in aligned rows,
// and the same rows as CSV (format=csv) or the views as JSON (format=json).
#include <string>
#include <vector>

#include "events/jcs.h"
#include "projections/ledger_hook.h"
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

constexpr size_t kMinRuns = 2, kMaxRuns = 8;

using pages::member;

struct Row {
  const char* label;
  std::string (*value)(const Json& view);
};

// The rows, in the order the page and the CSV show them.
const std::vector<Row>& rows() {
  static const std::vector<Row> kRows = {
      {"title", [](const Json& v) { return member(v, "title"); }},
      {"primary", [](const Json& v) { return cli::primary_text(v); }},
      {"rank", [](const Json& v) {
         return member(v, "rank") == "-" ? std::string("not ranked")
                                         : member(v, "rank") + " of " + member(v, "groupSize");
       }},
      {"evidence", [](const Json& v) { return member(v, "evidence"); }},
      {"status", [](const Json& v) { return member(v, "status"); }},
      {"source figures", [](const Json& v) { return cli::source_native_text(v); }},
      {"benchmark", [](const Json& v) { return member(v, "benchmark"); }},
      {"gpu", [](const Json& v) { return member(v, "gpu.product"); }},
      {"protocol", [](const Json& v) { return member(v, "protocol.title"); }},
      {"comparison key", [](const Json& v) { return member(v, "comparisonKey"); }},
      {"observed", [](const Json& v) { return member(v, "observedAt"); }},
      {"log index", [](const Json& v) { return member(v, "index"); }},
      {"run", [](const Json& v) { return member(v, "run"); }},
  };
  return kRows;
}

// A CSV field (RFC 4180), with a leading = + - @ made inert for spreadsheets.
std::string csv_field(std::string text) {
  if (!text.empty() && std::string_view("=+-@").find(text[0]) != std::string_view::npos) {
    text = "'" + text;
  }
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv(const std::vector<Json>& views) {
  std::string out = "field";
  for (size_t i = 0; i < views.size(); ++i) out += ",run " + std::to_string(i + 1);
  out += "\r\n";
  for (const Row& row : rows()) {
    out += csv_field(row.label);
    for (const Json& v : views) out += "," + csv_field(row.value(v));
    out += "\r\n";
  }
  return out;
}

std::string json(const std::vector<Json>& views) {
  Json out = Json::object();
  out.set("runs", Json(Json::Array(views.begin(), views.end())));
  return jcs_serialize(out);
}

std::string page(const std::vector<Json>& views, const std::string& root) {
  std::vector<std::string> digests;
  for (const Json& v : views) digests.push_back(member(v, "run"));
  Writer w(root);
  pages::begin_page(w, "Compare " + std::to_string(views.size()) + " runs",
                    Href::compare_as(digests, "json"));
  w.element("h1", "Compare " + std::to_string(views.size()) + " runs");
  w.open("p", {{"class", "actions"}});
  w.link(Href::compare_as(digests, "csv"), "Export CSV", {{"id", "export-csv"}});
  w.link(Href::compare_as(digests, "json"), "Export JSON", {{"id", "export-json"}});
  w.close();
  w.open("table", {{"class", "ranking compare"}}).open("thead").open("tr");
  w.element("th", "field", {{"scope", "col"}});
  for (size_t i = 0; i < views.size(); ++i) {
    w.open("th", {{"scope", "col"}}).link(Href::run(digests[i]), "Run " + digests[i].substr(7, 8)).close();
  }
  w.close().close().open("tbody");
  for (const Row& row : rows()) {
    w.open("tr").element("th", row.label, {{"scope", "row"}});
    for (const Json& v : views) w.element("td", row.value(v));
    w.close();
  }
  w.close().close();
  pages::end_page(w);
  return w.finish();
}

Status check_compare_parameters(const Request& request) {
  size_t formats = 0;
  for (const std::string& name : request.query_names()) {
    if (name == "format") ++formats;
    else if (name != "run") {
      return usage_error("'" + name.substr(0, 100) + "' is not a parameter of compare, which "
                         "takes run (2 to 8 times) and format (html, csv or json)");
    }
  }
  if (formats > 1) return usage_error("format is given twice; give it once");
  const size_t runs = request.query_all("run").size();
  if (runs < kMinRuns || runs > kMaxRuns) {
    return usage_error("compare takes 2 to 8 runs (run=<digest or a unique start>, repeated); "
                       "it was given " + std::to_string(runs));
  }
  const std::string format = request.query("format").value_or("html");
  if (format != "html" && format != "csv" && format != "json") {
    return usage_error("format=" + format.substr(0, 100) + " is not a format of compare: html "
                       "(the default), csv or json");
  }
  return Status::ok();
}

}  // namespace

Response handle_page_compare(const Request& request, Context& context) {
  if (Status s = check_compare_parameters(request); !s) {
    return pages::error_page(request, 400, s.message());
  }
  std::vector<std::string> prefixes;
  for (const std::string& text : request.query_all("run")) {
    auto hex = parse_run_prefix(text, "run=");
    if (!hex) return pages::error_page(request, http_status(hex.error().code()), hex.error().message());
    prefixes.push_back(std::move(*hex));
  }
  const std::string format = request.query("format").value_or("html");
  const std::string root = pages::root_of(request);
  auto manifests = log_manifests(context.ledger);
  std::string type = format == "csv"    ? "text/csv; charset=utf-8"
                     : format == "json" ? std::string(api::kJsonType)
                                        : std::string(kHtmlType);
  Response r = pages::page_answer(
      request, context,
      [&](const ProjectionStore& state) -> Result<std::string> {
        std::vector<Json> views;
        for (const std::string& hex : prefixes) {
          auto view = read_named_run_view(state, *manifests, hex, "run=");
          if (!view) return view.error();
          views.push_back(std::move(*view));
        }
        return format == "csv" ? csv(views) : format == "json" ? json(views) : page(views, root);
      },
      type);
  if (r.status == 200 && format == "csv") {
    r.with("Content-Disposition", "attachment; filename=\"evledger-compare.csv\"");
  }
  return r;
}

}  // namespace evl::server
