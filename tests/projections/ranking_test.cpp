#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/query.h"
#include "tests/projections/projection_fixtures.h"

namespace evl {
namespace {

using test::at;
using test::Built;
using test::EventLog;
using test::view_of;
using test::World;

Built run_at(const World& w, const std::string& id, double mean, const std::string& observed_at,
             const Built* env = nullptr, const std::string& status = "passed") {
  test::RunSpec s = w.spec(id, mean, env);
  s.observed_at = observed_at;
  s.status = status;
  return test::build_manifest(test::run_json(s));
}

std::vector<std::string> run_order(const ProjectionStore& store, const std::string& group) {
  auto runs = list_runs(store, RunFilter{std::nullopt, parse_digest_text(group).value()});
  REQUIRE(runs.has_value());
  std::vector<std::string> out;
  for (const Json& r : *runs) out.push_back(*json_string(r, "run"));
  return out;
}

TEST_CASE("ranks are dense, ties need equal values, and group sizes count eligible runs",
          "[projections][ranking]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built r1 = run_at(w, "1", 100, "2026-07-01T00:00:00Z"),
        r2 = run_at(w, "2", 100, "2026-07-01T00:00:00Z"),
        r3 = run_at(w, "3", 120, "2026-07-01T00:00:00Z"),
        r4 = run_at(w, "4", 150.5, "2026-07-01T00:00:00Z"),
        failed = run_at(w, "5", 90, "2026-07-01T00:00:00Z", nullptr, "runtime_error"),
        other = run_at(w, "6", 50, "2026-07-01T00:00:00Z", &w.env_h100);
  for (const Built* r : {&r1, &r2, &r3, &r4, &failed, &other}) log.observation(*r);
  auto store = test::fold_all(log);
  struct Expect {
    const Built* run;
    Json rank;
    bool tied;
  };
  for (const Expect& e :
       {Expect{&r1, Json(1), true}, Expect{&r2, Json(1), true}, Expect{&r3, Json(2), false},
        Expect{&r4, Json(3), false}, Expect{&failed, Json(), false}}) {
    Json v = view_of(store, log, e.run->digest);
    INFO(jcs_serialize(v));
    CHECK(at(v, "rank") == e.rank);
    CHECK(at(v, "tied") == Json(e.tied));
    CHECK(at(v, "groupSize") == Json(4));
    CHECK(at(v, "leader") == Json(r1.digest_text));  // r2's equal value does not take the lead
  }
  Json vo = view_of(store, log, other.digest);
  CHECK(at(vo, "rank") == Json(1));
  CHECK(at(vo, "groupSize") == Json(1));
  CHECK(at(vo, "comparisonKey") != at(view_of(store, log, r1.digest), "comparisonKey"));
  auto groups = list_groups(store);
  REQUIRE(groups.has_value());
  CHECK(groups->size() == 2);
}

TEST_CASE("read_run_view says why a run has no rank, and nothing for a ranked one",
          "[projections][ranking]") {
  using enum RankExclusion;
  World w;
  EventLog log;
  Built early = w.run("0", 80);  // observed before its workload manifest is in the ledger
  log.observation(early);
  w.register_all(log);
  Built ranked = run_at(w, "1", 100, "2026-07-01T00:00:00Z"),
        failed = run_at(w, "2", 90, "2026-07-01T00:00:00Z", nullptr, "runtime_error"),
        retracted = run_at(w, "3", 95, "2026-07-01T00:00:00Z");
  for (const Built* r : {&ranked, &failed, &retracted}) log.observation(*r);
  log.retract(retracted.digest);
  auto store = test::fold_all(log);
  auto exclusions_of = [&](const Built& run) {
    std::vector<RankExclusion> out{kVoid};  // overwritten
    auto view = read_run_view(store, log.manifests(), run.digest, &out);
    REQUIRE(view.has_value());
    REQUIRE(view->has_value());
    CHECK(out.empty() == !at(**view, "rank").is_null());  // no reason exactly when ranked
    return out;
  };
  CHECK(exclusions_of(ranked).empty());
  CHECK(exclusions_of(failed) == std::vector<RankExclusion>{kStatus});
  CHECK(exclusions_of(retracted) == std::vector<RankExclusion>{kRetracted});

  // Before the manifests arrive, the early run waits for its workload; after, it is ranked.
  EventLog only;
  only.observation(early);
  auto before = test::fold_all(only);
  std::vector<RankExclusion> waiting;
  REQUIRE(read_run_view(before, only.manifests(), early.digest, &waiting).has_value());
  CHECK(waiting == std::vector<RankExclusion>{kAwaitsWorkload});
  CHECK(exclusions_of(early).empty());
}

TEST_CASE("inside a tie, higher evidence, then newer observation, then run digest come first",
          "[projections][ranking]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built old_run = run_at(w, "old", 100, "2026-07-01T00:00:00Z");
  Built new_run = run_at(w, "new", 100, "2026-07-02T00:00:00.5Z");
  Built twin_a = run_at(w, "twin-a", 100, "2026-06-01T00:00Z");
  Built twin_b = run_at(w, "twin-b", 100, "2026-06-01T00:00:00.000Z");  // the same instant
  for (const Built* r : {&old_run, &new_run, &twin_a, &twin_b}) log.observation(*r);
  size_t before_rerun = log.size();
  test::RunSpec rerun = w.spec("rerun", 100, nullptr);
  rerun.source.clear();
  log.rerun(old_run.digest, test::build_manifest(test::run_json(rerun)),
            test::runner_actor("a", "a"));

  MemoryProjectionStore store;
  test::fold(store, log, 0, before_rerun);
  std::string group = *json_string(view_of(store, log, old_run.digest), "comparisonKey");
  auto [first_twin, second_twin] = twin_a.digest_text < twin_b.digest_text
                                       ? std::pair{twin_a.digest_text, twin_b.digest_text}
                                       : std::pair{twin_b.digest_text, twin_a.digest_text};
  CHECK(run_order(store, group) == std::vector<std::string>{new_run.digest_text,
                                                            old_run.digest_text, first_twin,
                                                            second_twin});
  test::fold(store, log, before_rerun);
  CHECK(run_order(store, group) == std::vector<std::string>{old_run.digest_text,
                                                            new_run.digest_text, first_twin,
                                                            second_twin});
  for (const Built* r : {&old_run, &new_run, &twin_a, &twin_b}) {
    Json v = view_of(store, log, r->digest);
    CHECK(at(v, "rank") == Json(1));
    CHECK(at(v, "tied") == Json(true));
    CHECK(at(v, "leader") == Json(old_run.digest_text));
  }
}

TEST_CASE("the leadership history records each change of leader with its cause",
          "[projections][ranking][leaders]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built a = run_at(w, "a", 100, "2026-07-01T00:00:00Z"),
        b = run_at(w, "b", 120, "2026-07-01T00:00:00Z"),
        c = run_at(w, "c", 100, "2026-07-03T00:00:00Z"),
        d = run_at(w, "d", 90, "2026-07-01T00:00:00Z"),
        e = run_at(w, "e", 80, "2026-07-01T00:00:00Z", &w.env_h100);
  Built other_workload =
      test::build_manifest(test::workload_json(w.workload.digest_text, "other", 2));
  test::RunSpec gs = w.spec("g", 500, nullptr);
  gs.workload = other_workload.digest_text;
  Built g = test::build_manifest(test::run_json(gs));

  std::vector<uint64_t> at_index;
  at_index.push_back(log.observation(a));                         // a leads
  log.observation(b);                                             // higher: no change
  log.observation(c);                                             // equal: no change
  at_index.push_back(log.observation(d));                         // strictly lower: d leads
  at_index.push_back(log.retract(d.digest));                      // c (newer than a) leads
  at_index.push_back(log.supersede(c.digest, e.digest));          // a leads
  at_index.push_back(log.disqualify(a.digest, "sol-execbench"));  // b leads
  log.observation(g);                                             // waits for its workload
  at_index.push_back(log.manifest(other_workload));               // g leads a new group
  at_index.push_back(log.observation(e));     // e leads its own group (another GPU)
  at_index.push_back(log.retract(b.digest));  // nobody is left
  auto store = test::fold_all(log);

  const std::string k1 = *json_string(view_of(store, log, a.digest), "comparisonKey");
  const std::string k2 = *json_string(view_of(store, log, g.digest), "comparisonKey");
  const std::string k3 = *json_string(view_of(store, log, e.digest), "comparisonKey");
  auto record = [](const std::string& group, const Json& run, const Json& previous,
                   const char* cause, uint64_t index) {
    Json r = Json::object();
    r.set("group", group);
    r.set("run", run);
    r.set("previous", previous);
    r.set("cause", cause);
    r.set("index", index);
    return jcs_serialize(r);
  };
  std::vector<std::string> expected = {
      record(k1, Json(a.digest_text), Json(), "new_run", at_index[0]),
      record(k1, Json(d.digest_text), Json(a.digest_text), "new_run", at_index[1]),
      record(k1, Json(c.digest_text), Json(d.digest_text), "retracted", at_index[2]),
      record(k1, Json(a.digest_text), Json(c.digest_text), "superseded", at_index[3]),
      record(k1, Json(b.digest_text), Json(a.digest_text), "disqualified", at_index[4]),
      record(k2, Json(g.digest_text), Json(), "resolved", at_index[5]),
      record(k3, Json(e.digest_text), Json(), "new_run", at_index[6]),
      record(k1, Json(), Json(b.digest_text), "retracted", at_index[7]),
  };
  auto history = leadership_history(store);
  REQUIRE(history.has_value());
  std::vector<std::string> actual;
  for (const Json& h : *history) actual.push_back(jcs_serialize(h));
  CHECK(actual == expected);
  auto k1_only = leadership_history(store, parse_digest_text(k1).value());
  REQUIRE(k1_only.has_value());
  CHECK(k1_only->size() == 6);
  CHECK(at(view_of(store, log, b.digest), "leader").is_null());
  CHECK(at(view_of(store, log, b.digest), "groupSize") == Json(0));
}

TEST_CASE("runs list by benchmark and by group", "[projections][ranking]") {
  World w;
  EventLog log;
  w.register_all(log);
  test::RunSpec slash = w.spec("s", 300, nullptr);
  slash.benchmark = "bench/with slash";
  Built s = test::build_manifest(test::run_json(slash));
  test::RunSpec prefix = w.spec("p", 200, nullptr);
  prefix.benchmark = "bench";
  Built p = test::build_manifest(test::run_json(prefix));
  Built a = w.run("a", 100);
  for (const Built* r : {&s, &p, &a}) log.observation(*r);
  auto store = test::fold_all(log);
  auto only = [&](const std::string& benchmark) {
    auto runs = list_runs(store, RunFilter{benchmark, std::nullopt});
    REQUIRE(runs.has_value());
    std::vector<std::string> out;
    for (const Json& r : *runs) out.push_back(*json_string(r, "run"));
    return out;
  };
  CHECK(only("bench/with slash") == std::vector<std::string>{s.digest_text});
  CHECK(only("bench") == std::vector<std::string>{p.digest_text});
  CHECK(only("bench-a") == std::vector<std::string>{a.digest_text});
  CHECK(only("nothing").empty());
  auto all = list_runs(store);
  REQUIRE(all.has_value());
  CHECK(all->size() == 3);
  const std::string group = *json_string(view_of(store, log, a.digest), "comparisonKey");
  CHECK(run_order(store, group) ==
        std::vector<std::string>{a.digest_text, p.digest_text, s.digest_text});
  CHECK(at((*all)[0], "rank").is_number());
}

}  // namespace
}  // namespace evl
