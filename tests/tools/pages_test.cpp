// The pages' handlers (tools/server/pages.h), called through the router without a socket over
// a generated catalog: each page against the API's answer for the same resource.
#include <catch2/catch.hpp>

#include <string>

#include "events/json.h"
#include "tests/support/served_catalog.h"
#include "tools/json_text.h"
#include "tools/run_page.h"
#include "tools/server/html.h"
#include "tools/server/pages.h"

namespace evl {
namespace {

using server::Response;
using test::body_of;
using test::Catalog;
using test::json_of;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
std::string member(const Json& v, std::string_view path) { return cli::text_of(json_path(v, path)); }

// The first ranked run with a leader other than itself, from the API's listing.
Json ranked_follower(Catalog& c) {
  // The listing is named: a range-for over json_of(...).find(...) reads a destroyed temporary.
  const Json listing = json_of(c.get("/api/v1/runs?limit=1000"));
  for (const Json& run : listing.find("items")->as_array()) {
    if (member(run, "rank") != "-" && member(run, "rank") != "1" && member(run, "leader") != "-") {
      return json_of(c.get("/api/v1/runs/" + member(run, "run").substr(7)));
    }
  }
  FAIL("the catalog has no ranked run below its leader");
  return Json();
}

TEST_CASE("a run page shows every section of the run view with the API's numbers",
          "[server][pages]") {
  Catalog c(60);
  const Json view = ranked_follower(c);
  const std::string run = member(view, "run");
  Response r = c.get("/runs/" + run.substr(7, 12));
  const std::string page = body_of(r);
  INFO(page);
  REQUIRE(r.status == 200);
  CHECK(r.content_type == server::kHtmlType);
  CHECK(r.header("Content-Security-Policy").value_or("") == server::kContentSecurityPolicy);
  CHECK(has(page, "<link rel=\"alternate\" href=\"/api/v1/runs/" + run.substr(7) +
                      "\" type=\"application/json\">"));
  for (const char* title : {"Primary measurement", "Identity", "Correctness", "Workload",
                            "Measurements", "Protocol", "Environment", "Artifacts",
                            "Controlled reruns", "Replications and notes", "Corrections",
                            "Log events behind this view", "Cite this record",
                            "Canonical manifest"}) {
    CHECK(has(page, std::string("<h2>") + title + "</h2>"));
  }
  CHECK(has(page, "<p class=\"primary\">" + server::html::escape(cli::primary_text(view)) + "</p>"));
  CHECK(has(page, "Rank " + member(view, "rank") + " of " + member(view, "groupSize")));
  CHECK(has(page, server::html::escape(cli::source_native_text(view))));
  CHECK(has(page, "href=\"/compare?run=" + member(view, "leader").substr(7) + "&amp;run=" +
                      run.substr(7) + "\" id=\"compare-leader\">Compare with #1</a>"));
  CHECK(has(page, "href=\"/groups/" + member(view, "comparisonKey").substr(7) + "\""));
  CHECK(has(page, "<dd data-copy=\"\" data-copy-name=\"run\">" + run + "</dd>"));
  CHECK(has(page, "<dd>" + member(view, "event") + "</dd>"));
  const std::string index = member(view, "index");
  CHECK(has(page, "<a href=\"/events/" + index + "\">" + index + "</a>"));
  CHECK(has(page, "href=\"/api/v1/proofs/inclusion?index=" + index + "&amp;format=tlog-proof\""));
  CHECK(has(page, "@misc{evledger-" + run.substr(7, 12)));
  CHECK(has(page, "&quot;kind&quot;: &quot;BenchmarkRun&quot;"));
  // The page's proof link is the API's proof, a tlog-proof.
  Response proof = c.get("/api/v1/proofs/inclusion?index=" + index + "&format=tlog-proof");
  REQUIRE(proof.status == 200);
  CHECK(body_of(proof).rfind("c2sp.org/tlog-proof@v1\n", 0) == 0);
}

TEST_CASE("a run page is cached until the next checkpoint, as the API is", "[server][pages]") {
  Catalog c(20);
  const Json view = ranked_follower(c);
  const std::string target = "/runs/" + member(view, "run").substr(7);
  Response first = c.get(target);
  REQUIRE(first.status == 200);
  const std::string etag(first.header("ETag").value_or(""));
  CHECK(etag == c.get("/api/v1" + target).header("ETag").value_or("-"));
  Response again = c.get(target, {{"If-None-Match", etag}});
  CHECK(again.status == 304);
  CHECK(again.header("Content-Security-Policy").has_value());
  c.import(5, 11);
  CHECK(c.get(target, {{"If-None-Match", etag}}).status == 200);
}

TEST_CASE("a run that is not there, or named badly, is an error page with the CLI's message",
          "[server][pages]") {
  Catalog c(5);
  Response missing = c.get("/runs/ffffffffffff");
  CHECK(missing.status == 404);
  CHECK(missing.content_type == server::kHtmlType);
  CHECK(has(body_of(missing), "<h1>404 Not Found</h1>"));
  CHECK(has(body_of(missing), "ffffffffffff"));
  CHECK(missing.header("Cache-Control").value_or("") == "no-store");
  Response bad = c.get("/runs/xyz");
  CHECK(bad.status == 400);
  CHECK(has(body_of(bad), "run"));
  CHECK(c.get("/runs/" + std::string(64, 'a') + "?x=1").status == 400);
}

TEST_CASE("manifest text holding markup shows as text on the run page", "[server][pages]") {
  Catalog c(1);
  const std::string hostile = "<script>alert(1)</script><img src=x onerror=\"alert(2)\">";
  c.import(3, 21, [&](Json& manifest) {
    if (member(manifest, "kind") != "BenchmarkRun") return;
    manifest.find("metadata")->set("title", hostile);
  });
  const Json listing = json_of(c.get("/api/v1/runs?limit=1000"));
  for (const Json& run : listing.find("items")->as_array()) {
    if (member(run, "title") != hostile) continue;
    const std::string page = body_of(c.get("/runs/" + member(run, "run").substr(7)));
    INFO(page);
    CHECK(has(page, server::html::escape(hostile)));
    CHECK_FALSE(has(page, "<img"));
    CHECK_FALSE(has(page, "<script>"));
    CHECK_FALSE(has(page, "onerror=\""));
    return;
  }
  FAIL("no run took the hostile title");
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_CASE("a group page ranks its runs in the API's order with a chart and its leaders",
          "[server][pages]") {
  Catalog c(60);
  const Json view = ranked_follower(c);
  const std::string key = member(view, "comparisonKey").substr(7);
  Response r = c.get("/groups/" + key.substr(0, 10));
  const std::string page = body_of(r);
  INFO(page);
  REQUIRE(r.status == 200);
  CHECK(has(page, "<link rel=\"alternate\" href=\"/api/v1/groups/" + key + "\""));
  const auto runs = json_of(c.get("/api/v1/runs?group=" + key)).find("items")->as_array();
  REQUIRE(runs.size() > 1);
  size_t at = 0, with_value = 0;
  for (const Json& run : runs) {
    const size_t found = page.find("<a href=\"/runs/" + member(run, "run").substr(7) + "\">", at);
    CHECK(found != std::string::npos);  // each run, after the one ranked above it
    if (found != std::string::npos) at = found;
    if (json_path(run, "primary.value") && json_path(run, "primary.value")->is_number()) ++with_value;
  }
  CHECK(has(page, "<td>1.00×</td>"));
  CHECK(has(page, "<svg viewBox=\"0 0 640 240\""));
  CHECK(count(page, "<circle ") == with_value);
  const auto leaders = json_of(c.get("/api/v1/leaders?group=" + key)).find("items")->as_array();
  CHECK(count(page, " leads (") == leaders.size());
  CHECK(has(page, "<polyline points="));
  CHECK(c.get("/groups/ffffffffffff").status == 404);
}

TEST_CASE("compare puts 2 to 8 runs side by side and exports the same rows as CSV and JSON",
          "[server][pages]") {
  Catalog c(30);
  const Json view = ranked_follower(c);
  const std::string a = member(view, "leader").substr(7), b = member(view, "run").substr(7);
  const std::string target = "/compare?run=" + a.substr(0, 12) + "&run=" + b;
  Response r = c.get(target);
  const std::string page = body_of(r);
  INFO(page);
  REQUIRE(r.status == 200);
  CHECK(has(page, "<a href=\"/runs/" + a + "\">Run " + a.substr(0, 8) + "</a>"));
  CHECK(has(page, "<td>" + server::html::escape(cli::primary_text(view)) + "</td>"));
  CHECK(has(page, "<td>" + member(view, "rank") + " of " + member(view, "groupSize") + "</td>"));
  Response as_json = c.get(target + "&format=json");
  REQUIRE(as_json.status == 200);
  const auto runs = json_of(as_json).find("runs")->as_array();
  REQUIRE(runs.size() == 2);
  CHECK(member(runs[0], "run").substr(7) == a);
  CHECK(runs[1] == json_of(c.get("/api/v1/runs/" + b)));
  Response as_csv = c.get(target + "&format=csv");
  REQUIRE(as_csv.status == 200);
  CHECK(as_csv.content_type == "text/csv; charset=utf-8");
  CHECK(body_of(as_csv).rfind("field,run 1,run 2\r\n\"title\",", 0) == 0);
  CHECK(has(body_of(as_csv), "\"run\",\"sha256:" + a + "\",\"sha256:" + b + "\"\r\n"));
  CHECK(c.get("/compare?run=" + a).status == 400);
  std::string nine = "/compare?run=" + a;
  for (int i = 0; i < 8; ++i) nine += "&run=" + b;
  CHECK(c.get(nine).status == 400);
  CHECK(c.get(target + "&format=xml").status == 400);
  CHECK(c.get(target + "&x=1").status == 400);
  CHECK(c.get("/compare?run=" + a + "&run=ffffffffffff").status == 404);
}

TEST_CASE("the pages' style and script are served from the binary with their digest as ETag",
          "[server][pages]") {
  Catalog c(1);
  Response css = c.get("/assets/app.css");
  REQUIRE(css.status == 200);
  CHECK(css.content_type == "text/css; charset=utf-8");
  CHECK(body_of(css) == server::kAppCss);
  Response js = c.get("/assets/app.js");
  REQUIRE(js.status == 200);
  CHECK(body_of(js) == server::kAppJs);
  CHECK(c.get("/assets/app.js", {{"If-None-Match", std::string(*js.header("ETag"))}}).status == 304);
  CHECK(c.get("/assets/other.js").status == 404);
}

}  // namespace
}  // namespace evl
