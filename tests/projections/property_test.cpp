// Property tests on random event streams: determinism (prefix + rest = all, each prefix folded
// afresh = the incremental state), and each projection against a naive reference computed
// from the generator's own knowledge or from the final run views.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/digest.h"
#include "projections/digested_store.h"
#include "projections/query.h"
#include "tests/projections/projection_fixtures.h"

namespace evl {
namespace {

using test::at;
using test::Built;
using test::EventLog;
using test::World;

const std::vector<double> kValues = {100, 100, 110, 120, 150, 150, 200, 1234.5};
const std::vector<double> kFactors = {0.9, 1.0, 1.03, 1.07, 1.2};  // away from 1.05 and 1.10
const std::vector<std::pair<std::string, std::string>> kRunners = {
    {"a", "h1"}, {"a", "h2"}, {"b", "h1"}, {"c", "h3"}};

struct GeneratedRun {
  Built built;
  test::RunSpec spec;
};

// A random stream over a small catalog, and what the generator knows about it.
struct Stream {
  World w;
  std::vector<const Built*> pool;  // manifests that may be registered
  std::map<std::string, std::pair<std::string, std::string>> gpu;  // env digest → product, arch
  Built unregistered_env;  // referenced but never registered
  std::vector<GeneratedRun> runs;
  EventLog log;

  explicit Stream(uint64_t seed, size_t events) {
    std::mt19937_64 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    auto chance = [&](unsigned percent) { return rng() % 100 < percent; };
    unregistered_env =
        test::build_manifest(test::environment_json("NVIDIA B200", "sm_100", "never"));
    pool = {&w.protocol,    &w.env_b200, &w.env_h100,    &w.env_b200_sm90,
            &w.env_b200_v2, &w.workload, &w.impl_source, &w.impl_plain};
    gpu[w.env_b200.digest_text] = {"NVIDIA B200", "sm_100"};
    gpu[w.env_b200_v2.digest_text] = {"NVIDIA B200", "sm_100"};
    gpu[unregistered_env.digest_text] = {"NVIDIA B200", "sm_100"};
    gpu[w.env_h100.digest_text] = {"NVIDIA H100", "sm_90"};
    gpu[w.env_b200_sm90.digest_text] = {"NVIDIA B200", "sm_90"};
    const std::vector<const Built*> run_envs = {&w.env_b200, &w.env_b200_v2, &w.env_h100};
    for (int i = 0; i < 14; ++i) {
      test::RunSpec s = w.spec("run" + std::to_string(i), kValues[pick(kValues.size())],
                               run_envs[pick(run_envs.size())]);
      if (chance(30)) s.implementation = w.impl_plain.digest_text;
      if (chance(15)) s.status = "runtime_error";
      s.artifacts = chance(40);
      s.source = chance(80) ? "sol-execbench" : "gpumode";
      s.benchmark = chance(50) ? "b1" : "b2";
      s.observed_at = "2026-07-0" + std::to_string(1 + pick(3)) + "T00:00:00Z";
      runs.push_back({test::build_manifest(test::run_json(s)), s});
    }
    for (size_t i = 0; i < events; ++i) add_event(rng, pick, chance);
  }

  template <typename Pick, typename Chance>
  void add_event(std::mt19937_64& rng, Pick pick, Chance chance) {
    std::optional<std::string> void_cause;
    if (chance(7)) void_cause = "key compromised";
    const size_t target_index = pick(runs.size());
    const GeneratedRun& target = runs[target_index];
    const size_t kind = pick(40);
    if (kind < 8) {
      log.manifest(*pool[pick(pool.size())], void_cause);
    } else if (kind < 18 || kind >= 37) {
      // Runs 0 and 1 are only ever observed by a compromised key.
      if (target_index < 2) void_cause = "observed by a compromised key";
      log.observation(target.built, void_cause);
    } else if (kind < 30) {
      test::RunSpec s = target.spec;
      s.source.clear();
      s.mean = Json(target.spec.mean->as_number() * kFactors[pick(kFactors.size())]);
      const std::vector<const Built*> envs = {&w.env_b200, &w.env_b200_v2, &w.env_b200_sm90,
                                              &w.env_h100, &unregistered_env};
      s.environment = envs[pick(envs.size())]->digest_text;
      if (chance(10)) s.status = "timeout";
      const auto& [owner, host] = kRunners[pick(kRunners.size())];
      log.rerun(target.built.digest, test::build_manifest(test::run_json(s)),
                test::runner_actor(owner, host), void_cause);
    } else if (kind < 34) {
      log.attestation(target.built.digest, AttestationType::kReproduced, void_cause);
    } else if (kind == 34) {
      log.retract(target.built.digest, void_cause);
    } else if (kind == 35) {
      log.disqualify(target.built.digest, chance(70) ? "sol-execbench" : "gpumode");
    } else if (void_cause) {
      log.retract(target.built.digest, void_cause);
    } else {
      log.supersede(target.built.digest, runs[pick(runs.size())].built.digest);
    }
    (void)rng;
  }
};

Digest digest_of(const ProjectionStore& store) {
  auto d = projection_digest(store);
  REQUIRE(d.has_value());
  return *d;
}

MemoryProjectionStore copy_of(const MemoryProjectionStore& store) {
  MemoryProjectionStore out;
  for (const auto& [k, v] : store.contents()) REQUIRE(out.put(k, v).is_ok());
  return out;
}

std::vector<Json> all_views(const ProjectionStore& store, const EventLog& log) {
  auto runs = list_runs(store);
  REQUIRE(runs.has_value());
  std::vector<Json> out;
  for (const Json& r : *runs) {
    out.push_back(test::view_of(store, log, parse_digest_text(*json_string(r, "run")).value()));
  }
  return out;
}

bool has_flag(const Json& view, const char* flag) {
  const Json flags = at(view, "flags");
  for (const Json& f : flags.as_array()) {
    if (f.as_string() == flag) return true;
  }
  return false;
}

bool naive_eligible(const Json& v) {
  return at(v, "void").is_null() && at(v, "comparisonKey").is_string() &&
         at(v, "status") == Json("passed") && at(v, "primary").is_object() &&
         !has_flag(v, "retracted") && !has_flag(v, "superseded") && !has_flag(v, "disqualified");
}

int evidence_rank(const Json& v) {
  const std::string e = *json_string(v, "evidence");
  return e == "replicated" ? 3 : e == "verified" ? 2 : e == "reproducible" ? 1 : 0;
}

// Display order: value ascending, higher evidence, newer observation, run digest.
bool display_before(const Json& a, const Json& b) {
  double va = at(a, "primary.value").as_number(), vb = at(b, "primary.value").as_number();
  if (va != vb) return va < vb;
  if (evidence_rank(a) != evidence_rank(b)) return evidence_rank(a) > evidence_rank(b);
  if (at(a, "observedAt") != at(b, "observedAt")) {
    return at(a, "observedAt").as_string() > at(b, "observedAt").as_string();
  }
  return at(a, "run").as_string() < at(b, "run").as_string();
}

std::map<std::string, std::vector<Json>> eligible_by_group(const std::vector<Json>& views) {
  std::map<std::string, std::vector<Json>> groups;
  for (const Json& v : views) {
    if (naive_eligible(v)) groups[at(v, "comparisonKey").as_string()].push_back(v);
  }
  for (auto& [key, members] : groups) std::sort(members.begin(), members.end(), display_before);
  return groups;
}

TEST_CASE("folding a prefix and resuming with the rest equals folding all",
          "[projections][property]") {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    Stream s(seed, 160);
    MemoryProjectionStore all = test::fold_all(s.log);
    const Digest expected = digest_of(all);
    std::mt19937_64 rng(seed * 7919);
    for (int split = 0; split < 4; ++split) {
      size_t k = static_cast<size_t>(rng() % (s.log.size() + 1));
      INFO("seed " << seed << ", split at " << k);
      MemoryProjectionStore prefix;
      test::fold(prefix, s.log, 0, k);
      MemoryProjectionStore resumed = copy_of(prefix);  // as if persisted and reopened
      test::fold(resumed, s.log, k);
      CHECK(resumed.contents() == all.contents());
      CHECK(digest_of(resumed) == expected);
    }
  }
}

TEST_CASE("a batch fold equals applying each event, whatever its flush points",
          "[projections][property][batch]") {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    Stream s(seed, 160);
    MemoryProjectionStore all = test::fold_all(s.log);
    std::mt19937_64 rng(seed * 104729);
    for (int round = 0; round < 4; ++round) {
      // Events [0, k) one at a time (the ledger's appends), then the rest in one batch that
      // flushes, or flushes and forgets, at random points.
      size_t k = round == 0 ? 0 : static_cast<size_t>(rng() % (s.log.size() + 1));
      INFO("seed " << seed << ", round " << round << ", batch from " << k);
      MemoryProjectionStore store;
      test::fold(store, s.log, 0, k);
      ProjectionBatch batch(store);
      for (size_t i = k; i < s.log.size(); ++i) {
        REQUIRE(batch.apply(s.log.events()[i]).is_ok());
        const uint64_t r = rng() % 16;
        if (r == 0) REQUIRE(batch.flush().is_ok());
        if (r == 1) REQUIRE(batch.flush_and_forget().is_ok());
      }
      REQUIRE(batch.flush().is_ok());
      CHECK(store.contents() == all.contents());
      CHECK(digest_of(store) == digest_of(all));
    }
  }
}

TEST_CASE("a batch refuses an event it already applied before any flush",
          "[projections][batch]") {
  Stream s(7, 40);
  MemoryProjectionStore store;
  ProjectionBatch batch(store);
  REQUIRE(batch.apply(s.log.events()[0]).is_ok());
  REQUIRE(batch.apply(s.log.events()[1]).is_ok());
  Status again = batch.apply(s.log.events()[1]);
  CHECK(again.code() == Code::kUsage);
  CHECK(store.size() == 0);  // nothing is written before flush()
}

TEST_CASE("the incremental state equals a fresh fold of every prefix byte for byte",
          "[projections][property]") {
  for (uint64_t seed = 100; seed < 106; ++seed) {
    Stream s(seed, 70);
    MemoryProjectionStore incremental;
    Projector projector;
    for (size_t i = 0; i < s.log.size(); ++i) {
      REQUIRE(projector.apply(incremental, s.log.events()[i]).is_ok());
      all_views(incremental, s.log);  // reads never change the state
      MemoryProjectionStore fresh;
      test::fold(fresh, s.log, 0, i + 1);
      INFO("seed " << seed << ", prefix " << i + 1);
      REQUIRE(fresh.contents() == incremental.contents());
      CHECK(digest_of(fresh) == digest_of(incremental));
    }
  }
}

TEST_CASE("the digest kept through DigestedStore while folding equals a full scan at every "
          "update",
          "[projections][property][digest]") {
  for (uint64_t seed = 150; seed < 160; ++seed) {
    Stream s(seed, 120);
    std::mt19937_64 rng(seed);
    MemoryProjectionStore state;
    DigestTracker tracker(ProjectionAccumulator{});  // the empty store's sums
    Projector projector;
    for (size_t i = 0; i < s.log.size(); ++i) {
      DigestedStore store(state, tracker);
      REQUIRE(projector.apply(store, s.log.events()[i]).is_ok());
      // Updates at random points, as commits of random sizes would make them.
      if (rng() % 5 == 0 || i + 1 == s.log.size()) {
        INFO("seed " << seed << ", after event " << i);
        auto sums = tracker.update(state);
        REQUIRE(sums.has_value());
        CHECK(sums->digest() == digest_of(state));
        CHECK(sums->count() == state.size());
      }
    }
  }
}

TEST_CASE("ranks, ties, group sizes and display order match a naive ranking of the views",
          "[projections][property]") {
  for (uint64_t seed = 200; seed < 230; ++seed) {
    Stream s(seed, 150);
    auto store = test::fold_all(s.log);
    auto views = all_views(store, s.log);
    auto groups = eligible_by_group(views);
    std::map<std::string, std::pair<uint64_t, bool>> expected;  // run → rank, tied
    for (const auto& [key, members] : groups) {
      uint64_t rank = 0;
      for (size_t i = 0; i < members.size(); ++i) {
        double v = at(members[i], "primary.value").as_number();
        if (i == 0 || v != at(members[i - 1], "primary.value").as_number()) ++rank;
        bool tied =
            (i > 0 && v == at(members[i - 1], "primary.value").as_number()) ||
            (i + 1 < members.size() && v == at(members[i + 1], "primary.value").as_number());
        expected[at(members[i], "run").as_string()] = {rank, tied};
      }
      auto listed = list_runs(store, RunFilter{std::nullopt, parse_digest_text(key).value()});
      REQUIRE(listed.has_value());
      REQUIRE(listed->size() >= members.size());
      for (size_t i = 0; i < members.size(); ++i)
        CHECK(at((*listed)[i], "run") == at(members[i], "run"));
    }
    for (const Json& v : views) {
      INFO("seed " << seed << ": " << jcs_serialize(v));
      const std::string run = at(v, "run").as_string();
      auto it = expected.find(run);
      if (it == expected.end()) {
        CHECK(at(v, "rank").is_null());
      } else {
        CHECK(at(v, "rank") == Json(it->second.first));
        CHECK(at(v, "tied") == Json(it->second.second));
      }
      if (at(v, "comparisonKey").is_string() && at(v, "void").is_null()) {
        const std::string key = at(v, "comparisonKey").as_string();
        CHECK(at(v, "groupSize") == Json(groups.count(key) ? groups[key].size() : 0));
        // The leader always holds the group's lowest value.
        if (groups.count(key)) {
          auto leader =
              test::view_of(store, s.log, parse_digest_text(at(v, "leader").as_string()).value());
          CHECK(at(leader, "primary.value") == at(groups[key].front(), "primary.value"));
        } else {
          CHECK(at(v, "leader").is_null());
        }
      }
    }
  }
}

TEST_CASE("verdicts, evidence, flags and void marks match what the generator knows",
          "[projections][property]") {
  for (uint64_t seed = 300; seed < 330; ++seed) {
    Stream s(seed, 150);
    auto store = test::fold_all(s.log);
    std::set<std::string> registered, standing_observations, observed;
    std::map<std::string, std::set<std::string>> corrections;  // run → kinds that apply
    for (const ProjectedEvent& e : s.log.events()) {
      const Payload& p = e.body->payload;
      if (const auto* m = std::get_if<ManifestEvent>(&p); m != nullptr && !e.void_cause) {
        registered.insert(digest_text(sha256(as_bytes(m->manifest.canonical))));
      }
      if (const auto* o = std::get_if<Observation>(&p)) {
        std::string d = digest_text(sha256(as_bytes(o->manifest.canonical)));
        observed.insert(d);
        if (!e.void_cause) standing_observations.insert(d);
      }
      if (const auto* c = std::get_if<Correction>(&p); c != nullptr && !e.void_cause) {
        corrections[digest_text(c->target)].insert(
            c->kind == Correction::Kind::kRetract     ? "retracted"
            : c->kind == Correction::Kind::kSupersede ? "superseded"
                                                      : "disqualify:" + c->source);
      }
    }
    auto views = all_views(store, s.log);
    CHECK(views.size() == observed.size());
    for (const GeneratedRun& run : s.runs) {
      if (!observed.count(run.built.digest_text)) continue;
      Json v = test::view_of(store, s.log, run.built.digest);
      INFO("seed " << seed << ": " << jcs_serialize(v));
      CHECK(at(v, "void").is_null() == (standing_observations.count(run.built.digest_text) > 0));
      const auto& env = run.spec.environment;
      const bool env_known = registered.count(env) > 0;
      std::vector<std::pair<std::string, std::string>> confirming;  // owner, host
      bool contradicted = false, refuted = false;
      const Json reruns = at(v, "reruns");
      for (const Json& r : reruns.as_array()) {
        std::string verdict;
        const std::string renv = *json_string(r, "environmentDigest");
        double ratio = at(r, "primary.value").as_number() / run.spec.mean->as_number();
        if (at(r, "status") != Json("passed")) {
          verdict = "refuted";
        } else if (!env_known || !registered.count(renv)) {
          verdict = "pending";
        } else if (s.gpu[renv] != s.gpu[env]) {
          verdict = "inconclusive";
        } else {
          verdict = ratio <= 1.05 ? "confirmed" : ratio > 1.10 ? "contradicted" : "inconclusive";
        }
        CHECK(at(r, "verdict") == Json(verdict));
        if (!at(r, "void").is_null()) continue;
        if (verdict == "confirmed")
          confirming.push_back({*json_string(r, "owner"), *json_string(r, "host")});
        contradicted |= verdict == "contradicted";
        refuted |= verdict == "refuted";
      }
      std::string evidence = "reported";
      for (size_t i = 0; i < confirming.size(); ++i) {
        for (size_t j = i + 1; j < confirming.size(); ++j) {
          if (confirming[i].first != confirming[j].first &&
              confirming[i].second != confirming[j].second) {
            evidence = "replicated";
          }
        }
      }
      if (evidence == "reported" && !confirming.empty()) evidence = "verified";
      if (evidence == "reported" && run.spec.implementation == s.w.impl_source.digest_text &&
          run.spec.artifacts && registered.count(run.spec.protocol) && env_known &&
          registered.count(run.spec.workload) && registered.count(run.spec.implementation)) {
        evidence = "reproducible";
      }
      CHECK(at(v, "evidence") == Json(evidence));
      const auto& applied = corrections[run.built.digest_text];
      CHECK(has_flag(v, "contradicted") == contradicted);
      CHECK(has_flag(v, "refuted") == refuted);
      CHECK(has_flag(v, "retracted") == (applied.count("retracted") > 0));
      CHECK(has_flag(v, "superseded") == (applied.count("superseded") > 0));
      CHECK(has_flag(v, "disqualified") == (applied.count("disqualify:" + run.spec.source) > 0));
      CHECK(at(v, "comparisonKey").is_string() == (registered.count(run.spec.workload) > 0));
    }
  }
}

TEST_CASE("the leadership history matches a naive replay of the leader rule",
          "[projections][property][leaders]") {
  for (uint64_t seed = 400; seed < 415; ++seed) {
    Stream s(seed, 120);
    MemoryProjectionStore store;
    Projector projector;
    std::map<std::string, std::optional<Json>> leader;  // group → leading view
    std::set<std::string> eligible_before;
    std::vector<std::string> expected;
    for (size_t i = 0; i < s.log.size(); ++i) {
      const ProjectedEvent& e = s.log.events()[i];
      REQUIRE(projector.apply(store, e).is_ok());
      auto groups = eligible_by_group(all_views(store, s.log));
      const char* cause = "new_run";
      if (const auto* c = std::get_if<Correction>(&e.body->payload)) {
        cause = c->kind == Correction::Kind::kRetract     ? "retracted"
                : c->kind == Correction::Kind::kSupersede ? "superseded"
                                                          : "disqualified";
      } else if (e.body->kind() == EventKind::kManifest) {
        cause = "resolved";
      }
      std::set<std::string> eligible_now;
      std::set<std::string> keys;
      for (const auto& [key, members] : groups) keys.insert(key);
      for (const auto& [key, current] : leader) keys.insert(key);
      for (const std::string& key : keys) {
        const auto& members = groups[key];
        std::optional<Json> before = leader[key];
        std::optional<Json> now = before;
        auto still = [&](const Json& run) {
          return std::any_of(members.begin(), members.end(),
                             [&](const Json& m) { return at(m, "run") == at(run, "run"); });
        };
        if (now && !still(*now))
          now = members.empty() ? std::nullopt : std::optional<Json>(members.front());
        std::vector<Json> added;
        for (const Json& m : members) {
          if (!eligible_before.count(at(m, "run").as_string())) added.push_back(m);
        }
        std::sort(added.begin(), added.end(), [](const Json& a, const Json& b) {
          return at(a, "index").as_number() < at(b, "index").as_number();
        });
        for (const Json& m : added) {
          if (!now || at(m, "primary.value").as_number() < at(*now, "primary.value").as_number())
            now = m;
        }
        for (const Json& m : members) eligible_now.insert(at(m, "run").as_string());
        Json b = before ? at(*before, "run") : Json(), n = now ? at(*now, "run") : Json();
        if (b != n) {
          Json r = Json::object();
          r.set("group", key);
          r.set("run", n);
          r.set("previous", b);
          r.set("cause", cause);
          r.set("index", e.index);
          expected.push_back(jcs_serialize(r));
        }
        leader[key] = now;
      }
      eligible_before = eligible_now;
    }
    auto history = leadership_history(store);
    REQUIRE(history.has_value());
    std::vector<std::string> actual;
    for (const Json& h : *history) actual.push_back(jcs_serialize(h));
    INFO("seed " << seed);
    CHECK(actual == expected);
  }
}

TEST_CASE("when manifests arrive does not change what follows from them",
          "[projections][property]") {
  for (uint64_t seed = 500; seed < 520; ++seed) {
    Stream s(seed, 150);
    EventLog manifests_first;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 1; i < s.log.size(); ++i) {  // 0 is the genesis
        const ProjectedEvent& e = s.log.events()[i];
        if ((e.body->kind() == EventKind::kManifest) == (pass == 0)) {
          manifests_first.add(e.body->payload,
                              test::Actor{e.author_name, e.author_roles, e.author_scope},
                              e.void_cause);
        }
      }
    }
    auto late = test::fold_all(s.log);
    auto early = test::fold_all(manifests_first);
    for (const Json& v : all_views(late, s.log)) {
      Json w = test::view_of(early, manifests_first,
                             parse_digest_text(at(v, "run").as_string()).value());
      INFO("seed " << seed << ": " << jcs_serialize(v) << "\n" << jcs_serialize(w));
      for (const char* member : {"comparisonKey", "correctnessKey", "operationDigest", "missing",
                                 "evidence", "flags", "rank", "tied", "groupSize", "void",
                                 "protocol", "environment", "workload", "implementation"}) {
        CHECK(at(v, member) == at(w, member));
      }
      const Json::Array a = at(v, "reruns").as_array();
      const Json::Array b = at(w, "reruns").as_array();
      REQUIRE(a.size() == b.size());
      for (size_t i = 0; i < a.size(); ++i) CHECK(at(a[i], "verdict") == at(b[i], "verdict"));
    }
  }
}

}  // namespace
}  // namespace evl
