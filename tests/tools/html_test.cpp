// The server's HTML writer (tools/server/html.h): text and attribute values escaped by
// construction, only the writer's own markup, links only from paths and digests.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "tools/server/html.h"

namespace evl::server::html {
namespace {

const std::string kDigest =
    "sha256:0067a718e8bb7768d94a63cb11c52a8a3c14bea437af0f6a28608446ef705328";

TEST_CASE("escape turns every markup character of hostile text into an entity",
          "[tools][html]") {
  CHECK(escape("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(escape("<img src=x onerror='alert(1)'>") ==
        "&lt;img src=x onerror=&#39;alert(1)&#39;&gt;");
  CHECK(escape("a \"b\" & c") == "a &quot;b&quot; &amp; c");
  CHECK(escape("µs · 10.26×") == "µs · 10.26×");
}

TEST_CASE("escape keeps line breaks and makes other control characters and bad UTF-8 visible",
          "[tools][html]") {
  CHECK(escape("one\ntwo") == "one\ntwo");
  CHECK(escape(std::string("a\x1b[31mb")) == "a\\x1b[31mb");
  CHECK(escape(std::string("x\xff")) == "x\\xff");
}

TEST_CASE("the writer escapes text and attribute values and closes elements in order",
          "[tools][html]") {
  Writer w("/log");
  w.doctype().open("main", {{"class", "a\"><script>"}});
  w.element("h1", "Run <b>1</b>");
  w.open("p").text("x & y");
  CHECK(w.depth() == 2);
  const std::string page = w.finish();
  CHECK(page ==
        "<!doctype html>\n<main class=\"a&quot;&gt;&lt;script&gt;\"><h1>Run &lt;b&gt;1&lt;/b&gt;"
        "</h1><p>x &amp; y</p></main>");
  CHECK(page.find("<script") == std::string::npos);
}

TEST_CASE("links are built from digests and numbers, relative to the page",
          "[tools][html]") {
  Writer w("../");
  w.link(Href::run(kDigest), "run").link(Href::event(185), "event");
  w.link_tag("alternate", Href::path("/api/v1/runs/0067a7"), {{"type", "application/json"}});
  w.link(Href::tlog_proof(185), "proof");
  w.link(Href::compare({kDigest, kDigest}), "compare");
  w.script(Href::path("/assets/app.js"));
  w.open_form(Href::path("/search")).close();
  const std::string page = w.finish();
  CHECK(page.find("<script src=\"../assets/app.js\" defer=\"defer\"></script>") !=
        std::string::npos);
  CHECK(page.find("<form action=\"../search\"></form>") != std::string::npos);
  CHECK(page.find("<a href=\"../runs/0067a718e8bb7768d94a63cb11c52a8a3c14bea437af0f6a28608446ef"
                  "705328\">run</a>") != std::string::npos);
  CHECK(page.find("<a href=\"../events/185\">event</a>") != std::string::npos);
  CHECK(page.find("<link rel=\"alternate\" href=\"../api/v1/runs/0067a7\" "
                  "type=\"application/json\">") != std::string::npos);
  CHECK(page.find("href=\"../api/v1/proofs/inclusion?index=185&amp;format=tlog-proof\"") !=
        std::string::npos);
  CHECK(page.find("../compare?run=0067a7") != std::string::npos);
  // The root itself, from a page at the root and from a prefix's home asked for without '/'.
  CHECK(Writer().link(Href::path("/"), "home").finish() == "<a href=\"./\">home</a>");
  CHECK(Writer("log/").link(Href::path("/runs"), "r").finish() == "<a href=\"log/runs\">r</a>");
}

TEST_CASE("text cannot become a link target, a script, a style or an event handler",
          "[tools][html]") {
  Writer w;
  CHECK_THROWS_AS(w.open("div", {{"onclick", "alert(1)"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("div", {{"ONCLICK", "alert(1)"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("svg", {{"onLoad", "alert(1)"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("div", {{"href", "javascript:alert(1)"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("img", {{"src", "x"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("div", {{"style", "color:red"}}), std::logic_error);
  CHECK_THROWS_AS(w.open("script"), std::logic_error);
  CHECK_THROWS_AS(w.open("div", {{"data x", "1"}}), std::logic_error);
  CHECK_THROWS_AS(Href::run("javascript:alert(1)"), std::logic_error);
  CHECK_THROWS_AS(Href::run(kDigest + "\"><script>"), std::logic_error);
  CHECK_THROWS_AS(Href::path("//evil.example/"), std::logic_error);
  CHECK_THROWS_AS(Href::path("/runs/<x>"), std::logic_error);
  CHECK_THROWS_AS(w.close(), std::logic_error);
}

TEST_CASE("a benchmark's name or any text becomes a link only inside a query value",
          "[tools][html]") {
  CHECK(Href::benchmark("091_fused_gqa.rope-v2").target() == "/benchmarks/091_fused_gqa.rope-v2");
  CHECK(Href::benchmark("a b/c").target() == "/benchmarks?name=a%20b%2Fc");
  CHECK(Href::benchmark("..").target() == "/benchmarks?name=..");
  CHECK(Href::benchmark("\"><script>").target() == "/benchmarks?name=%22%3E%3Cscript%3E");
  CHECK(Href::query("/api/v1/runs", {{"benchmark", "x&y=1#z"}, {"limit", "5"}}).target() ==
        "/api/v1/runs?benchmark=x%26y%3D1%23z&limit=5");
  CHECK(Href::query("/search", {{"q", "µ"}}).target() == "/search?q=%C2%B5");
  CHECK_THROWS_AS(Href::query("/search", {{"Q", "x"}}), std::logic_error);
  CHECK_THROWS_AS(Href::query("//evil.example", {{"q", "x"}}), std::logic_error);
}

TEST_CASE("an XML document has its declaration, its namespace and closed empty elements",
          "[tools][html]") {
  Writer w("../");
  w.open_xml("feed", "http://www.w3.org/2005/Atom");
  w.element("title", "a <b> & 'c'");
  w.link_tag("self", Href::path("/records/feed.xml"));
  w.empty("category", {{"term", "x\"y"}});
  CHECK(w.finish() ==
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
        "<title>a &lt;b&gt; &amp; &#39;c&#39;</title><link rel=\"self\" href=\"../records/feed.xml\"/>"
        "<category term=\"x&quot;y\"/></feed>");
  Writer html;
  html.empty("br");
  CHECK(html.finish() == "<br>");
}

}  // namespace
}  // namespace evl::server::html
