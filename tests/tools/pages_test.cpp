// The pages' handlers (tools/server/pages.h), called through the router without a socket over
// a generated catalog: each page against the API's answer for the same resource.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
  CHECK(has(page, "<link rel=\"alternate\" href=\"../api/v1/runs/" + run.substr(7) +
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
  CHECK(has(page, "href=\"../compare?run=" + member(view, "leader").substr(7) + "&amp;run=" +
                      run.substr(7) + "\" id=\"compare-leader\">Compare with #1</a>"));
  CHECK(has(page, "href=\"../groups/" + member(view, "comparisonKey").substr(7) + "\""));
  CHECK(has(page, "<dd data-copy=\"\" data-copy-name=\"run\">" + run + "</dd>"));
  CHECK(has(page, "<dd>" + member(view, "event") + "</dd>"));
  const std::string index = member(view, "index");
  CHECK(has(page, "<a href=\"../events/" + index + "\">" + index + "</a>"));
  CHECK(has(page, "href=\"../api/v1/proofs/inclusion?index=" + index + "&amp;format=tlog-proof\""));
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
  CHECK(has(page, "<link rel=\"alternate\" href=\"../api/v1/groups/" + key + "\""));
  const auto runs = json_of(c.get("/api/v1/runs?group=" + key)).find("items")->as_array();
  REQUIRE(runs.size() > 1);
  size_t at = 0, with_value = 0;
  for (const Json& run : runs) {
    const size_t found = page.find("<a href=\"../runs/" + member(run, "run").substr(7) + "\">", at);
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
  CHECK(has(page, "<a href=\"./runs/" + a + "\">Run " + a.substr(0, 8) + "</a>"));
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

// `href` (a path from the server's root) as the page at `target` links it: relative to itself.
std::string relative(const std::string& target, const std::string& href) {
  const std::string path = target.substr(0, target.find('?'));
  const auto depth = std::count(path.begin(), path.end(), '/') - 1;
  std::string up = depth == 0 ? "./" : "";
  for (long i = 0; i < depth; ++i) up += "../";
  return up + href.substr(1);
}

// Each page type's target in a catalog, with the API resource it names as its alternate.
struct PageTarget {
  std::string target, alternate;
};

std::vector<PageTarget> every_page(const Json& view) {
  const std::string run = member(view, "run").substr(7);
  const std::string key = member(view, "comparisonKey").substr(7);
  const std::string benchmark = member(view, "benchmark"), index = member(view, "index");
  return {{"/", "/api/v1/checkpoints"},
          {"/runs/" + run, "/api/v1/runs/" + run},
          {"/groups/" + key, "/api/v1/groups/" + key},
          {"/compare?run=" + member(view, "leader").substr(7) + "&run=" + run, ""},
          {"/events/" + index, "/api/v1/events/" + index},
          {"/benchmarks", "/api/v1/benchmarks"},
          {"/benchmarks/" + benchmark, "/api/v1/runs?benchmark=" + benchmark},
          {"/records", "/api/v1/leaders?order=newest"},
          {"/keys", "/api/v1/keys"},
          {"/search?q=" + benchmark.substr(0, 5), "/api/v1/runs"}};
}

TEST_CASE("every page links its JSON, is cached until the next checkpoint and has its "
          "headings in order", "[server][pages]") {
  Catalog c(40);
  const Json view = ranked_follower(c);
  const std::string etag(c.get("/api/v1/keys").header("ETag").value_or("-"));
  for (const PageTarget& p : every_page(view)) {
    Response r = c.get(p.target);
    const std::string page = body_of(r);
    INFO(p.target << "\n" << page);
    REQUIRE(r.status == 200);
    CHECK(r.content_type == server::kHtmlType);
    CHECK(r.header("Content-Security-Policy").value_or("") == server::kContentSecurityPolicy);
    if (!p.alternate.empty()) {
      CHECK(has(page, "<link rel=\"alternate\" href=\"" + relative(p.target, p.alternate) +
                          "\" type=\"application/json\">"));
    }
    CHECK(r.header("Cache-Control").value_or("") == "public, max-age=2");
    CHECK(r.header("ETag").value_or("") == etag);
    CHECK(c.get(p.target, {{"If-None-Match", etag}}).status == 304);
    // One h1, and no heading level skipped after it.
    CHECK(count(page, "<h1>") == 1);
    int last = 0;
    for (size_t at = page.find("<h"); at != std::string::npos; at = page.find("<h", at + 1)) {
      const char level = page[at + 2];
      if (level < '1' || level > '6' || page[at + 3] != '>') continue;
      CHECK(level - '0' <= last + 1);
      last = level - '0';
    }
    CHECK(has(page, "<label for=\"site-q\">Search</label>"));
  }
}

TEST_CASE("an event page decodes the entry, names its signers and proves it", "[server][pages]") {
  Catalog c(20);
  const Json view = ranked_follower(c);
  const std::string index = member(view, "index"), run = member(view, "run");
  const Json event = json_of(c.get("/api/v1/events/" + index));
  Response r = c.get("/events/" + index);
  const std::string page = body_of(r);
  INFO(page);
  REQUIRE(r.status == 200);
  CHECK(has(page, "<h1>Entry " + index + "</h1>"));
  CHECK(has(page, "<dd data-copy=\"\" data-copy-name=\"event id\">" + member(event, "id") + "</dd>"));
  for (const Json& s : event.find("signatures")->as_array()) {
    CHECK(has(page, "<td>" + server::html::escape(member(s, "signer")) + " (author)</td>"));
    CHECK(has(page, "<code>" + member(s, "publicKey") + "</code>"));
  }
  CHECK(has(page, "<td>importer</td>"));
  CHECK(has(page, "active at entry " + index));
  CHECK(has(page, "<ul class=\"items\" id=\"touched\"><li><a href=\"../runs/" + run.substr(7) + "\">"));
  CHECK(has(page, "href=\"../api/v1/proofs/inclusion?index=" + index + "&amp;format=tlog-proof\""));
  const Json proof = json_of(c.get("/api/v1/proofs/inclusion?index=" + index));
  CHECK(has(page, std::to_string(proof.find("hashes")->as_array().size()) + " hashes"));
  CHECK(has(page, "&quot;kind&quot;: &quot;observation&quot;"));
  // By id too; an entry that is not there is a 404 page, a name that is none a 400.
  CHECK(c.get("/events/" + member(event, "id")).status == 200);
  CHECK(c.get("/events/999999").status == 404);
  CHECK(c.get("/events/xyz").status == 400);
  // A key event touches no run; the genesis has no entry before it.
  const std::string genesis = body_of(c.get("/events/0"));
  CHECK(has(genesis, "None: this event changed no run"));
  CHECK(has(genesis, "<td>admin</td><td>active at entry 0</td>"));
  CHECK(has(genesis, "rel=\"next\""));
  CHECK_FALSE(has(genesis, "rel=\"prev\""));
}

TEST_CASE("the home page shows the log, the statement, counts and what changed lately",
          "[server][pages]") {
  Catalog c(30);
  const std::string page = body_of(c.get("/"));
  INFO(page);
  const auto checkpoints = c.all_pages("/api/v1/checkpoints?limit=1000");
  const Json& newest = checkpoints.back();
  CHECK(has(page, "<h1>" + server::html::escape(member(newest, "origin")) + "</h1>"));
  CHECK(has(page, "<dd>" + member(newest, "size") + " entries</dd>"));
  CHECK(has(page, "<dd>" + member(newest, "root") + "</dd>"));
  const Json statement = json_of(c.get("/api/v1/statement"));
  CHECK(has(page, "<dd>" + member(statement, "digest") + "</dd>"));
  const auto runs = c.all_pages("/api/v1/runs?limit=1000");
  CHECK(has(page, "<dt>runs</dt><dd>" + std::to_string(runs.size()) + "</dd>"));
  const auto benchmarks = c.all_pages("/api/v1/benchmarks?limit=1000");
  CHECK(has(page, "<a href=\"./benchmarks\">" + std::to_string(benchmarks.size()) + "</a>"));
  const auto leaders = c.all_pages("/api/v1/leaders?limit=1000");
  CHECK(has(page, "<a href=\"./records\">" + std::to_string(leaders.size()) + "</a>"));
  const auto size = static_cast<uint64_t>(json_path(newest, "size")->as_number());
  CHECK(has(page, "<li><a href=\"./events/" + std::to_string(size - 1) + "\">"));
  CHECK(count(page, "<li><a href=\"./events/") == 10);
  CHECK(has(page, "id=\"recent-changes\""));
  CHECK(has(page, "href=\"./records/feed.xml\""));
}

TEST_CASE("benchmark pages list every benchmark and each one's groups with their leaders",
          "[server][pages]") {
  Catalog c(40);
  const auto benchmarks = c.all_pages("/api/v1/benchmarks?limit=1000");
  REQUIRE_FALSE(benchmarks.empty());
  const std::string list = body_of(c.get("/benchmarks"));
  for (const Json& b : benchmarks) {
    CHECK(has(list, "<a href=\"./benchmarks/" + member(b, "benchmark") + "\">" +
                        server::html::escape(member(b, "benchmark")) + "</a></td><td>" +
                        member(b, "runs") + "</td>"));
  }
  const std::string name = member(benchmarks.front(), "benchmark");
  Response r = c.get("/benchmarks/" + name);
  const std::string page = body_of(r);
  INFO(page);
  REQUIRE(r.status == 200);
  const auto runs = c.all_pages("/api/v1/runs?benchmark=" + name + "&limit=1000");
  std::set<std::string> keys;
  for (const Json& run : runs) {
    if (member(run, "comparisonKey") != "-") keys.insert(member(run, "comparisonKey"));
  }
  REQUIRE_FALSE(keys.empty());
  for (const std::string& key : keys) {
    const Json group = json_of(c.get("/api/v1/groups/" + key.substr(7)));
    CHECK(has(page, "<a href=\"../groups/" + key.substr(7) + "\">"));
    if (member(group, "leader") != "-") {
      CHECK(has(page, "<a href=\"../runs/" + member(group, "leader").substr(7) + "\">"));
    }
    CHECK(has(page, "<td>" + member(group, "size") + "</td><td>" + member(group, "members") +
                        "</td></tr>"));
  }
  CHECK(count(page, "<tr><td><a href=\"../runs/") == runs.size());
  CHECK(c.get("/benchmarks?name=" + name).status == 200);
  CHECK(c.get("/benchmarks/no-such-benchmark").status == 404);
  CHECK(c.get("/benchmarks?name=a%20b").status == 404);
}

std::optional<std::string> head_link(const std::string& page, const std::string& rel);

TEST_CASE("the records page and its Atom feed show the leadership history", "[server][pages]") {
  Catalog c(40);
  const auto leaders = c.all_pages("/api/v1/leaders?limit=1000");
  const auto groups = c.all_pages("/api/v1/groups?limit=1000");
  REQUIRE_FALSE(leaders.empty());
  const std::string page = body_of(c.get("/records"));
  INFO(page);
  std::vector<std::string> led;  // the groups' leaders, in the order of the groups' keys
  for (const Json& g : groups) {
    if (member(g, "leader") != "-") led.push_back(member(g, "leader").substr(7));
  }
  REQUIRE_FALSE(led.empty());
  const size_t current = page.find("id=\"current\""), history = page.find("id=\"history\"");
  REQUIRE(current != std::string::npos);
  REQUIRE(history != std::string::npos);
  // /records shows the first 20 current records, then links the rest.
  const std::string table = page.substr(current, page.find("</table>", current) - current);
  CHECK(count(table, "<tr><td>") == std::min<size_t>(20, led.size()));
  for (size_t i = 0; i < std::min<size_t>(20, led.size()); ++i) {
    CHECK(has(table, "<a href=\"./runs/" + led[i] + "\">"));
  }
  CHECK(has(page, "more current records</a>") == (led.size() > 20));
  // /records/current walks every group's record, `limit` a page, with the groups' cursors.
  std::vector<std::string> walked;
  size_t pages = 0;
  for (std::string target = "/records/current?limit=2";;) {
    Response r = c.get(target);
    const std::string body = body_of(r);
    INFO(target << "\n" << body);
    REQUIRE(r.status == 200);
    ++pages;
    const std::string rows = body.substr(body.find("<tbody>"), body.find("</tbody>") - body.find("<tbody>"));
    CHECK(count(rows, "<tr><td>") <= 2);
    for (size_t at = rows.find("href=\"../runs/"); at != std::string::npos;
         at = rows.find("href=\"../runs/", at + 1)) {
      walked.push_back(rows.substr(at + 14, 64));
    }
    const auto next = head_link(body, "next");
    if (!next) break;
    CHECK(has(*next, "cursor="));
    REQUIRE(pages <= led.size());
    target = *next;
  }
  CHECK(walked == led);
  CHECK(pages == (led.size() + 1) / 2);
  CHECK(c.get("/records/current?cursor=zz").status == 400);
  CHECK(c.get("/records/current?group=x").status == 400);
  CHECK(count(page.substr(history), " leads ") == leaders.size());
  Response feed = c.get("/records/feed.xml");
  const std::string xml = body_of(feed);
  INFO(xml);
  REQUIRE(feed.status == 200);
  CHECK(feed.content_type == "application/atom+xml; charset=utf-8");
  CHECK(xml.rfind("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                  "<feed xmlns=\"http://www.w3.org/2005/Atom\">", 0) == 0);
  CHECK(count(xml, "<entry>") == std::min<size_t>(50, leaders.size()));
  CHECK(has(xml, "<link rel=\"self\" href=\"../records/feed.xml\" type=\"application/atom+xml\"/>"));
  // The newest change comes first; its id, made of its entry and group, stays in later feeds.
  const Json& newest = leaders.back();
  const std::string id =
      ":" + member(newest, "index") + ":" + member(newest, "group").substr(7) + "</id>";
  REQUIRE(has(xml, id));
  CHECK(xml.find(id) < xml.find("</entry>"));
  c.import(5, 31);
  CHECK(has(body_of(c.get("/records/feed.xml")), id));
}

TEST_CASE("the keys page lists the registry with each key's grant", "[server][pages]") {
  Catalog c(5);
  const auto keys = c.all_pages("/api/v1/keys?limit=1000");
  const std::string page = body_of(c.get("/keys"));
  INFO(page);
  CHECK(count(page, "<code class=\"vkey\">") == keys.size());
  for (const Json& k : keys) {
    CHECK(has(page, server::html::escape(member(k, "verifierKey"))));
    CHECK(has(page, "<a href=\"./events/" + member(k, "grantedAt") + "\">entry " +
                        member(k, "grantedAt") + "</a>"));
  }
  CHECK(has(page, "<h2>Voided ranges</h2>"));
  CHECK(has(page, "None among these keys: none was revoked as compromised."));
}

// The href of the page's <link rel=REL>, unescaped, as a target from the root (for a page at
// the root or one level down: its links start with "./" or "../").
std::optional<std::string> head_link(const std::string& page, const std::string& rel) {
  const std::string start = "<link rel=\"" + rel + "\" href=\"";
  const size_t at = page.find(start);
  if (at == std::string::npos) return std::nullopt;
  const size_t from = at + start.size();
  std::string href = page.substr(from, page.find('"', from) - from);
  href = href.substr(href.rfind("./") + 2);
  for (size_t amp; (amp = href.find("&amp;")) != std::string::npos;) href.replace(amp, 5, "&");
  return "/" + href;
}

TEST_CASE("listing pages are bounded and page with the API's cursors, next and back",
          "[server][pages]") {
  Catalog c(40);
  // /records: the history newest first, `limit` a page, as /api/v1/leaders?order=newest.
  const auto leaders = c.all_pages("/api/v1/leaders?limit=1000");
  REQUIRE(leaders.size() > 3);
  std::vector<std::string> entries;  // the history's entry links, page after page
  std::vector<std::string> targets = {"/records?limit=2"};
  for (std::string target = targets[0];;) {
    Response r = c.get(target);
    const std::string page = body_of(r);
    INFO(target << "\n" << page);
    REQUIRE(r.status == 200);
    const size_t history = page.find("id=\"history\"");
    REQUIRE(history != std::string::npos);
    const std::string list = page.substr(history, page.find("</ol>", history) - history);
    CHECK(count(list, "<li>") <= 2);
    for (size_t at = list.find("\">entry "); at != std::string::npos; at = list.find("\">entry ", at + 1)) {
      entries.push_back(list.substr(at + 8, list.find('<', at) - at - 8));
    }
    // Its JSON is the API's page of the same cursor: the same changes.
    const auto alternate = head_link(page, "alternate");
    REQUIRE(alternate);
    CHECK(json_of(c.get(*alternate)).find("items")->as_array().size() == count(list, "<li>"));
    const auto next = head_link(page, "next");
    CHECK(has(page, next ? "rel=\"next\">Older changes</a>" : "</ol>"));
    if (!next) break;
    targets.push_back(*next);
    target = *next;
  }
  REQUIRE(entries.size() == leaders.size());
  for (size_t i = 0; i < leaders.size(); ++i) {
    CHECK(entries[i] == member(leaders[leaders.size() - 1 - i], "index"));
  }
  CHECK(targets.size() == (leaders.size() + 1) / 2);
  // rel=prev of each later page leads to the page before it.
  for (size_t i = 1; i < targets.size(); ++i) {
    const auto prev = head_link(body_of(c.get(targets[i])), "prev");
    REQUIRE(prev);
    const std::string back = body_of(c.get(*prev)), before = body_of(c.get(targets[i - 1]));
    CHECK(back.substr(back.find("id=\"history\"")) == before.substr(before.find("id=\"history\"")));
  }
  CHECK(c.get("/records?cursor=x").status == 400);
  CHECK(c.get("/records?limit=0").status == 400);
  CHECK(c.get("/api/v1/leaders?order=oldest").status == 400);

  // The forward listings: a page of `limit`, a next link to the rest, a first-page link.
  const Json view = ranked_follower(c);
  const std::string benchmark = member(view, "benchmark");
  for (const std::string& first : std::vector<std::string>{"/benchmarks?limit=1", "/keys?limit=1",
                                   "/benchmarks/" + benchmark + "?limit=1",
                                   "/search?q=" + benchmark.substr(0, 5) + "&limit=1"}) {
    const std::string page = body_of(c.get(first));
    INFO(first << "\n" << page);
    CHECK(count(page, "<tbody><tr>") + count(page, "</tr><tr>") >= 1);
    const auto next = head_link(page, "next");
    REQUIRE(next);
    CHECK(has(*next, "cursor="));
    CHECK(has(*next, "limit=1"));
    const std::string second = body_of(c.get(*next));
    CHECK(head_link(second, "first").value_or("") == first);
    CHECK_FALSE(head_link(page, "first"));
  }
  CHECK(c.get("/keys?cursor=zz").status == 400);
  CHECK(c.get("/search?q=ab&cursor=zz").status == 400);

  // A group's page lists its newest changes and links the whole history.
  const std::string key = member(view, "comparisonKey").substr(7);
  const std::string group = body_of(c.get("/groups/" + key));
  CHECK(has(group, "href=\"../records?group=" + key + "\">The whole history</a>"));
  const std::string of_group = body_of(c.get("/records?group=" + key));
  CHECK(count(of_group, " leads ") ==
        c.all_pages("/api/v1/leaders?group=" + key + "&limit=1000").size());
}

TEST_CASE("search finds runs by benchmark, GPU, external id and digest start", "[server][pages]") {
  Catalog c(30);
  const Json view = ranked_follower(c);
  const std::string run = member(view, "run").substr(7);
  auto found = [&](const std::string& q) {
    Response r = c.get("/search?q=" + q);
    INFO(q << ": " << body_of(r));
    CHECK(r.status == 200);
    return body_of(r);
  };
  const std::string link = "<a href=\"./runs/" + run + "\">";
  CHECK(count(found(run.substr(0, 10)), "<tr><td><a href=\"./runs/") == 1);
  CHECK(has(found("sha256:" + run.substr(0, 10)), link));
  CHECK(has(found(member(view, "externalId")), link));
  const std::string product = member(*json_path(view, "gpu"), "product");
  CHECK(has(found(product.substr(product.size() - 4)), link));
  // Without regard to case, every run of a benchmark.
  const std::string benchmark = member(view, "benchmark");
  std::string upper = benchmark;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const auto of_benchmark = c.all_pages("/api/v1/runs?benchmark=" + benchmark + "&limit=1000");
  CHECK(count(found(upper), "<tr><td><a href=\"./runs/") >= of_benchmark.size());
  CHECK(has(found("zz-nothing-like-this"), "No run matches."));
  CHECK(c.get("/search?q=a").status == 400);
  CHECK(c.get("/search?q=" + std::string(201, 'a')).status == 400);
  CHECK(c.get("/search").status == 200);
  CHECK(c.get("/search?q=ab&x=1").status == 400);
}

TEST_CASE("hostile manifest text stays text on every page that shows it", "[server][pages]") {
  Catalog c(1);
  const std::string hostile = "<script>alert(1)</script><img src=x onerror=\"alert(2)\">";
  c.import(3, 21, [&](Json& manifest) {
    if (member(manifest, "kind") != "BenchmarkRun") return;
    manifest.find("metadata")->set("title", hostile);
  });
  std::optional<Json> evil;
  for (const Json& r : c.all_pages("/api/v1/runs?limit=1000")) {
    if (member(r, "title") == hostile) evil = r;
  }
  REQUIRE(evil.has_value());
  std::vector<std::string> targets = {"/search?q=%3Cscript%3E", "/benchmarks/" + member(*evil, "benchmark"),
                                      "/events/" + member(*evil, "index"), "/records"};
  if (member(*evil, "comparisonKey") != "-") {
    targets.push_back("/groups/" + member(*evil, "comparisonKey").substr(7));
  }
  for (const std::string& target : targets) {
    const std::string page = body_of(c.get(target));
    INFO(target << "\n" << page);
    CHECK_FALSE(has(page, "<img"));
    CHECK_FALSE(has(page, "<script>"));
    CHECK_FALSE(has(page, "onerror=\""));
  }
  CHECK(has(body_of(c.get("/search?q=%3Cscript%3E")), server::html::escape(hostile)));
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
