// The records, /records: the first current records, the records broken lately and the whole
// leadership history across groups; /records/current, the current record of every comparison
// group a page at a time; and /records/feed.xml, the history as an Atom feed (RFC 4287) of its
// newest changes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "events/bytes.h"
#include "events/sha256.h"
#include "projections/query.h"
#include "projections/query_site.h"
#include "tools/json_text.h"
#include "tools/render.h"
#include "tools/run_page.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;
using pages::member;
using pages::number;

constexpr size_t kRecentlyBroken = 20;
// The current records that /records shows before its link to /records/current.
constexpr size_t kCurrentShown = 20;
constexpr size_t kFeedEntries = 50;
constexpr std::string_view kAtomNamespace = "http://www.w3.org/2005/Atom";
constexpr std::string_view kAtomMediaType = "application/atom+xml";
constexpr std::string_view kAtomType = "application/atom+xml; charset=utf-8";

void records_table(Writer& w, const std::vector<Json>& leaders) {
  w.open("table", {{"class", "ranking"}, {"id", "current"}}).open("thead").open("tr");
  for (const char* h : {"Benchmark", "GPU", "Record", "Holder", "Group"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  for (const Json& r : leaders) {
    w.open("tr");
    pages::benchmark_cell(w, r);
    w.element("td", pages::gpu_text(r.find("gpu")));
    w.element("td", cli::primary_text(r));
    w.open("td").link(Href::run(member(r, "run")), member(r, "title")).close();
    const std::string key = member(r, "comparisonKey");
    w.open("td");
    if (html::is_digest_text(key)) {
      w.link(Href::group(key), html::digest_hex(key).substr(0, 8) + " · " +
                                   member(r, "groupSize") + " ranked");
    }
    w.close();
    w.close();
  }
  w.close().close();
}

void changes_list(Writer& w, const std::vector<const Json*>& changes, const char* id) {
  w.open("ol", {{"class", "items"}, {"id", id}});
  for (const Json* change : changes) {
    w.open("li");
    pages::leadership_change(w, *change, true);
    w.close();
  }
  w.close();
}

// The newest changes among which "Recently broken" looks for records broken.
constexpr size_t kBrokenAmong = 1000;

// /records[?group=][&cursor=][&limit=]: the first page has the current records and those
// broken lately; every page a page of the record history, newest first, as
// /api/v1/leaders?order=newest shows it.
Result<std::string> render_records(const Request& request, const ProjectionStore& state,
                                   const std::string& root) {
  auto page = pages::page_request(request);
  if (!page) return page.error();
  std::optional<Digest> group;
  std::string group_hex;
  if (auto text = request.query("group")) {
    auto hex = parse_group_prefix(*text, "group");
    if (!hex) return hex.error();
    auto key = resolve_group(state, *hex, "group");
    if (!key) return key.error();
    group = *key;
    group_hex = html::digest_hex(digest_text(*key));
  }
  auto history = leadership_history_newest_first(state, group, *page);
  if (!history) return history.error();
  std::vector<std::pair<std::string_view, std::string_view>> fixed;
  if (group) fixed.emplace_back("group", group_hex);
  const pages::PageLinks links = pages::page_links(request, "/records", fixed, *history);
  fixed.insert(fixed.begin(), std::pair<std::string_view, std::string_view>("order", "newest"));
  const html::Href alternate =
      pages::listing_href(request, "/api/v1/leaders", fixed, page->cursor);
  const bool first = page->cursor.empty();
  Writer w(root);
  const std::string title = group ? "Records of group " + group_hex.substr(0, 8) : "Records";
  pages::begin_page(w, first ? title : title + " (older changes)", alternate, links);
  w.element("h1", title);
  if (group) {
    w.open("p", {{"class", "subtitle"}}).text("Every change of leadership in comparison group ");
    w.link(Href::group(digest_text(*group)), group_hex.substr(0, 8)).text(", newest first.").close();
  } else if (first) {
    PageRequest shown;
    shown.limit = kCurrentShown;
    auto leaders = current_records(state, shown);
    if (!leaders) return leaders.error();
    PageRequest among;
    among.limit = kBrokenAmong;
    auto newest = leadership_history_newest_first(state, std::nullopt, among);
    if (!newest) return newest.error();
    std::vector<const Json*> broken;
    for (const Json& change : newest->items) {
      if (broken.size() < kRecentlyBroken && html::is_digest_text(member(change, "previous"))) {
        broken.push_back(&change);
      }
    }
    w.open("p", {{"class", "subtitle"}});
    w.text("The record of each comparison group, the records broken lately and every change. "
           "Follow the changes in the ");
    w.link(Href::path("/records/feed.xml"), "Atom feed").text(".").close();
    w.open("section").element("h2", "Current records");
    if (leaders->items.empty()) {
      w.element("p", "No group has a ranked run yet.");
    } else {
      records_table(w, leaders->items);
    }
    if (leaders->next) {
      w.open("p");
      w.text("These are the first " + std::to_string(kCurrentShown) + " groups by key: ");
      w.link(Href::query("/records/current", {{"cursor", *leaders->next}}),
             "more current records");
      w.text(".").close();
    }
    w.close();
    w.open("section").element("h2", "Recently broken");
    if (broken.empty()) {
      w.element("p", "No record has been broken yet.");
    } else {
      changes_list(w, broken, "broken");
    }
    w.close();
  }
  w.open("section").element("h2", "Record history");
  w.element("p", "Every change of leadership, newest first, with its cause and the log entry "
                 "that made it; " + std::to_string(page->limit) + " a page.");
  std::vector<const Json*> shown;
  for (const Json& change : history->items) shown.push_back(&change);
  if (shown.empty()) {
    w.element("p", "No change of leadership yet.");
  } else {
    changes_list(w, shown, "history");
  }
  pages::pager(w, links, "Newer changes", "Older changes");
  w.close();
  pages::end_page(w);
  return w.finish();
}

// /records/current[?cursor=][&limit=]: the current record of every group that has one, a page
// at a time in the order of the groups' keys, with GET /api/v1/groups's cursors.
Result<std::string> render_current(const Request& request, const ProjectionStore& state,
                                   const std::string& root) {
  auto page = pages::page_request(request);
  if (!page) return page.error();
  auto leaders = current_records(state, *page);
  if (!leaders) return leaders.error();
  const pages::PageLinks links = pages::page_links(request, "/records/current", {}, *leaders);
  Writer w(root);
  pages::begin_page(w, "Current records",
                    pages::listing_href(request, "/api/v1/groups", {}, page->cursor), links);
  w.element("h1", "Current records");
  w.open("p", {{"class", "subtitle"}});
  w.text("The leader of each comparison group that has one, by group key; " +
         std::to_string(page->limit) + " a page. Their changes are in the ");
  w.link(Href::path("/records"), "record history").text(".").close();
  if (leaders->items.empty()) {
    w.element("p", "No group has a ranked run yet.");
  } else {
    records_table(w, leaders->items);
  }
  pages::pager(w, links, "", "More current records");
  pages::end_page(w);
  return w.finish();
}

// An entry's claimed time, RFC 3339; "" when it cannot be read.
std::string claimed_time(Context& context, uint64_t index) {
  auto bytes = context.ledger.entry(index);
  if (!bytes) return "";
  auto event = cli::decode_stored_entry(index, *bytes);
  if (!event) return "";
  return cli::format_time_ms(event->body.claimed_time_ms);
}

// Ids that never change: the log (by its origin's digest), the change's entry and group.
std::string feed_id(const std::string& origin) {
  return "urn:evledger:" + hex_encode(sha256(as_bytes(origin))).substr(0, 32) + ":records";
}

Result<std::string> render_feed(Context& context, const ProjectionStore& state,
                                const std::string& root) {
  auto changes = latest_leadership_changes(state, kFeedEntries);
  if (!changes) return changes.error();
  const KeyPolicy keys = context.ledger.policy();
  const std::string origin = keys.genesis() ? keys.genesis()->origin : std::string("evledger");
  std::vector<std::string> times;
  for (const Json& change : *changes) {
    const auto index = number(change, "index");
    times.push_back(index ? claimed_time(context, static_cast<uint64_t>(*index)) : "");
  }
  Writer w(root);
  w.open_xml("feed", kAtomNamespace);
  w.element("title", "Record changes of " + origin);
  w.element("id", feed_id(origin));
  w.element("updated", times.empty() || times.front().empty() ? "1970-01-01T00:00:00.000Z"
                                                               : times.front());
  w.link_tag("self", Href::path("/records/feed.xml"), {{"type", std::string(kAtomMediaType)}});
  w.link_tag("alternate", Href::path("/records"), {{"type", "text/html"}});
  w.open("author").element("name", origin).close();
  for (size_t i = 0; i < changes->size(); ++i) {
    const Json& change = (*changes)[i];
    const std::string run = member(change, "run"), group = member(change, "group");
    const std::string index = member(change, "index");
    if (!html::is_digest_text(group)) continue;
    const std::string group_hex = html::digest_hex(group);
    w.open("entry");
    w.element("title", (html::is_digest_text(run) ? "Run " + html::digest_hex(run).substr(0, 8)
                                                  : std::string("No run")) +
                           " leads group " + group_hex.substr(0, 8) + " (" +
                           member(change, "cause") + ")");
    w.element("id", feed_id(origin) + ":" + index + ":" + group_hex);
    w.element("updated", times[i].empty() ? "1970-01-01T00:00:00.000Z" : times[i]);
    w.link_tag("alternate", html::is_digest_text(run) ? Href::run(run) : Href::group(group),
               {{"type", "text/html"}});
    w.link_tag("related", Href::group(group), {{"type", "text/html"}});
    std::string summary = "Entry " + index + ": " + run + " leads comparison group " + group +
                          " (" + member(change, "cause") + ")";
    if (html::is_digest_text(member(change, "previous"))) {
      summary += ", after " + member(change, "previous");
    }
    w.element("summary", summary + ".");
    w.close();
  }
  return w.finish();
}

}  // namespace

Response handle_page_records(const Request& request, Context& context) {
  return pages::checked_page(request, context, "records", {"group", "cursor", "limit"},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_records(request, state, root);
                             });
}

Response handle_page_records_current(const Request& request, Context& context) {
  return pages::checked_page(request, context, "records/current", {"cursor", "limit"},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_current(request, state, root);
                             });
}

Response handle_page_records_feed(const Request& request, Context& context) {
  return pages::checked_page(
      request, context, "records/feed.xml", {},
      [&](const ProjectionStore& state, const std::string& root) {
        return render_feed(context, state, root);
      },
      kAtomType);
}

}  // namespace evl::server
