// The listings of projections/query.h a page at a time: every page size gives the whole
// listing once and in order, cursors name positions that survive the state's growth, and a
// cursor that is no position is refused with a message naming it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "projections/query.h"
#include "tests/projections/projection_fixtures.h"

namespace evl {
namespace {

using test::at;
using test::Built;
using test::EventLog;
using test::World;

std::vector<std::string> texts(const std::vector<Json>& items) {
  std::vector<std::string> out;
  for (const Json& j : items) out.push_back(jcs_serialize(j));
  return out;
}

// Runs on two GPUs (two groups) of three benchmarks, one with bytes its index escapes; a
// retraction and a faster run that change leaders.
struct Listing {
  World w;
  EventLog log;
  MemoryProjectionStore store;
  Listing() {
    w.register_all(log);
    const char* benchmarks[] = {"bench-a", "bench b/100%", "bench-c"};
    std::vector<Built> runs;
    for (int i = 0; i < 17; ++i) {
      test::RunSpec spec =
          w.spec(std::to_string(i), 1000 + 37 * (i % 7), i % 3 == 0 ? &w.env_h100 : nullptr);
      spec.benchmark = benchmarks[i % 3];
      runs.push_back(test::build_manifest(test::run_json(spec)));
      log.observation(runs.back());
    }
    log.retract(runs[4].digest);
    log.observation(w.run("fast", 10));
    store = test::fold_all(log);
  }
};

// Follows `next` from the first page to the end with pages of `limit`.
template <typename Lister>
std::vector<Json> paged(const Lister& list, size_t limit, size_t* pages = nullptr) {
  std::vector<Json> out;
  PageRequest request;
  request.limit = limit;
  for (size_t n = 1;; ++n) {
    Result<Page> page = list(request);
    REQUIRE(page.has_value());
    REQUIRE(page->items.size() <= limit);
    out.insert(out.end(), page->items.begin(), page->items.end());
    if (!page->next) {
      if (pages != nullptr) *pages = n;
      return out;
    }
    REQUIRE(page->items.size() == limit);
    request.cursor = *page->next;
  }
}

template <typename Lister>
void check_every_limit(const Lister& list, const std::vector<Json>& all) {
  REQUIRE(!all.empty());
  for (size_t limit = 1; limit <= all.size() + 1; ++limit) {
    INFO("limit " << limit);
    size_t pages = 0;
    CHECK(texts(paged(list, limit, &pages)) == texts(all));
    CHECK(pages == std::max<size_t>(1, (all.size() + limit - 1) / limit));
  }
}

TEST_CASE("every page size lists a whole listing once and in order", "[projections][query]") {
  Listing l;
  const auto& s = l.store;
  const auto runs = list_runs(s).value();
  REQUIRE(runs.size() == 18);
  check_every_limit([&](const PageRequest& p) { return list_runs(s, {}, p); }, runs);

  RunFilter bench;
  bench.benchmark = "bench b/100%";
  const auto of_bench = list_runs(s, bench).value();
  REQUIRE(of_bench.size() == 6);
  check_every_limit([&](const PageRequest& p) { return list_runs(s, bench, p); }, of_bench);

  const auto groups = list_groups(s).value();
  REQUIRE(groups.size() == 2);
  check_every_limit([&](const PageRequest& p) { return list_groups(s, p); }, groups);
  RunFilter group;
  group.group = parse_digest_text(json_string(groups[0], "group").value()).value();
  const auto in_group = list_runs(s, group).value();
  check_every_limit([&](const PageRequest& p) { return list_runs(s, group, p); }, in_group);
  // Display order: ranked members first (rank ascending), then the unranked retracted run.
  CHECK(at(in_group.front(), "rank") == Json(1));
  // A group's rows: the same runs in the same order, with the members the rows keep.
  const auto rows = list_group_rows(s, *group.group).value();
  REQUIRE(rows.size() == in_group.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    Json expected = Json::object();
    for (const auto& [name, value] : in_group[i].as_object()) {
      if (std::find(kGroupRowMembers.begin(), kGroupRowMembers.end(), name) !=
              kGroupRowMembers.end() ||
          name == "rank" || name == "tied" || name == "groupSize" || name == "leader") {
        expected.set(name, value);
      }
    }
    CHECK(jcs_serialize(rows[i]) == jcs_serialize(expected));
  }
  group.benchmark = "bench-a";
  const auto both = list_runs(s, group).value();
  REQUIRE(!both.empty());
  for (const Json& r : both) CHECK(json_string(r, "benchmark").value_or("") == "bench-a");
  check_every_limit([&](const PageRequest& p) { return list_runs(s, group, p); }, both);

  const auto history = leadership_history(s).value();
  REQUIRE(history.size() >= 3);
  check_every_limit([&](const PageRequest& p) { return leadership_history(s, std::nullopt, p); },
                    history);
  // Newest first: the same changes reversed, at every page size, and `previous` walks back.
  for (size_t limit = 1; limit <= history.size() + 1; ++limit) {
    INFO("newest first, limit " << limit);
    std::vector<Page> pages;
    PageRequest request;
    request.limit = limit;
    while (true) {
      pages.push_back(leadership_history_newest_first(s, std::nullopt, request).value());
      REQUIRE(pages.back().items.size() <= limit);
      if (!pages.back().next) break;
      request.cursor = *pages.back().next;
    }
    std::vector<Json> all;
    for (const Page& p : pages) all.insert(all.end(), p.items.begin(), p.items.end());
    CHECK(texts(all) == texts(std::vector<Json>(history.rbegin(), history.rend())));
    CHECK_FALSE(pages.front().previous);
    for (size_t i = 1; i < pages.size(); ++i) {
      REQUIRE(pages[i].previous);
      request.cursor = *pages[i].previous;
      CHECK(texts(leadership_history_newest_first(s, std::nullopt, request).value().items) ==
            texts(pages[i - 1].items));
      CHECK((i == 1) == pages[i].previous->empty());
    }
  }
  const auto of_group = leadership_history(s, group.group).value();
  check_every_limit([&](const PageRequest& p) { return leadership_history(s, group.group, p); },
                    of_group);
}

TEST_CASE("benchmarks are listed once each, by name as the runs write it, with their runs",
          "[projections][query]") {
  Listing l;
  std::vector<Json> expected;
  for (const auto& [name, runs] : std::vector<std::pair<const char*, int>>{
           {"bench b/100%", 6}, {"bench-a", 7}, {"bench-c", 5}}) {
    Json b = Json::object();
    b.set("benchmark", name);
    b.set("runs", runs);
    expected.push_back(std::move(b));
  }
  // "fast" is bench-a's too. The index writes ' ' as %20, so "bench b/..." sorts first.
  check_every_limit([&](const PageRequest& p) { return list_benchmarks(l.store, p); }, expected);
}

TEST_CASE("a cursor stays a position as the state grows, and a page starts there",
          "[projections][query]") {
  Listing l;
  PageRequest first;
  first.limit = 5;
  Page page = list_runs(l.store, {}, first).value();
  REQUIRE(page.next);
  const Json named = list_runs(l.store, {}, PageRequest{*page.next, 1}).value().items.at(0);
  // More runs, some of them sorting before the cursor's run.
  const size_t before = l.log.size();
  for (int i = 0; i < 9; ++i) l.log.observation(l.w.run("late-" + std::to_string(i), 500 + i));
  test::fold(l.store, l.log, before);
  Page resumed = list_runs(l.store, {}, PageRequest{*page.next, 1}).value();
  REQUIRE(resumed.items.size() == 1);
  // The same run, seen in the newer state (its group has new members: rank may differ).
  CHECK(at(resumed.items[0], "run") == at(named, "run"));
}

TEST_CASE("a cursor that is no position of its listing is refused, naming it",
          "[projections][query]") {
  Listing l;
  const auto& s = l.store;
  RunFilter group;
  group.group = parse_digest_text(json_string(list_groups(s).value().at(0), "group").value()).value();
  auto refused = [](const Result<Page>& page, const std::string& form) {
    REQUIRE_FALSE(page.has_value());
    CHECK(page.error().code() == Code::kUsage);
    CHECK(page.error().message().find("cursor= '") == 0);
    CHECK(page.error().message().find("is not a position in this listing (" + form + ")") !=
          std::string::npos);
  };
  auto at_cursor = [](std::string cursor) { return PageRequest{std::move(cursor), 10, "cursor="}; };
  refused(list_runs(s, {}, at_cursor("xyz")), "64 hex digits");
  refused(list_runs(s, {}, at_cursor(std::string(64, 'A'))), "64 hex digits");
  refused(list_runs(s, group, at_cursor(std::string(64, 'a'))), "r/<sort key> or u/<64 hex>");
  refused(list_runs(s, group, at_cursor("r/" + std::string(64, 'a'))), "r/<sort key> or u/<64 hex>");
  refused(list_groups(s, at_cursor("g")), "64 hex digits");
  refused(leadership_history(s, std::nullopt, at_cursor("00000000000000000001")),
          "<20 digits>/<64 hex>");
  refused(list_benchmarks(s, at_cursor("a/b")), "a benchmark's name as its index writes it");
  // Well-formed positions that name nothing give what follows them.
  CHECK(list_runs(s, {}, at_cursor(std::string(64, 'f'))).value().items.empty());
  CHECK(list_runs(s, group, at_cursor("u/" + std::string(64, '0'))).has_value());
}

}  // namespace
}  // namespace evl
