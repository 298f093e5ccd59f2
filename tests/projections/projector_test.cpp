#include "projections/projector.h"

#include <catch2/catch.hpp>
#include <string>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/digest.h"
#include "projections/query.h"
#include "tests/projections/projection_fixtures.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::at;
using test::Built;
using test::EventLog;
using test::view_of;
using test::World;

std::string sha_of(std::string_view text) { return digest_text(sha256(as_bytes(text))); }

Json strings(std::initializer_list<std::string> items) {
  Json out = Json::array();
  for (const auto& s : items) out.as_array().push_back(Json(s));
  return out;
}

Built rerun_manifest(const World& w, double mean, const Built& env,
                     const std::string& status = "passed") {
  test::RunSpec s = w.spec("rerun", mean, &env);
  s.source.clear();
  s.status = status;
  return test::build_manifest(test::run_json(s));
}

TEST_CASE("a seed run's view carries what its KernelIndex page shows", "[projections][seeds]") {
  auto shared = test::shared_dir();
  if (!shared) {
    WARN("../shared is absent: skipping the seed runs (the inline fixtures cover the same rules)");
    return;
  }
  struct Seed {
    const char* file;
    const char* run;
    double mean;
    double sol, speedup, faster;
    const char* version;
  };
  for (const Seed& seed :
       {Seed{"run-17828.manifests.json",
             "sha256:86b55a5fb1e31fa546677f69fc7fd9dc183f3f8b9771ed696e7ae2c0df4b90d6", 159785,
             0.946374, 10.2584, 16, "v1.0"},
        Seed{"run-38823.manifests.json",
             "sha256:7e18c26ca3b60572c4fc8589c4b3b9a86b548ef031df4242ea2483b649bd6a47", 1750693,
             0.559752, 1.1676, 13, "v1.1"}}) {
    auto parsed = parse_json(test::read_file(*shared / "fixtures" / "seeds" / seed.file));
    REQUIRE(parsed.has_value());
    EventLog log;
    Json run_spec;
    for (const Json& m : parsed->as_array()) {
      Built built = test::build_manifest(m);
      if (json_string(m, "kind") == "BenchmarkRun") {
        run_spec = *m.find("spec");
        log.observation(built);
      } else {
        log.manifest(built);
      }
    }
    auto store = test::fold_all(log);
    auto run = parse_digest_text(seed.run);
    REQUIRE(run.has_value());
    Json v = view_of(store, log, *run);
    INFO(jcs_serialize(v));
    CHECK(at(v, "run") == Json(seed.run));
    CHECK(at(v, "index") == Json(3));
    CHECK(at(v, "status") == Json("passed"));
    CHECK(at(v, "source") == Json("sol-execbench"));
    CHECK(at(v, "benchmark") == at(run_spec, "sourceNative.benchmark"));
    CHECK(at(v, "externalId") == at(run_spec, "sourceNative.externalId"));
    CHECK(at(v, "observedAt") == at(run_spec, "observedAt"));
    CHECK(json_string(v, "title").value_or("").find(" · B200") != std::string::npos);
    CHECK(at(v, "primary") ==
          *parse_json(R"({"metric":"latency","statistic":"mean","unit":"ns","value":)" +
                      jcs_number(seed.mean) + "}"));
    CHECK(at(v, "sourceNative.solScore") == Json(seed.sol));
    CHECK(at(v, "sourceNative.speedup") == Json(seed.speedup));
    CHECK(at(v, "sourceNative.casesFaster") == Json(seed.faster));
    CHECK(at(v, "sourceNative.casesTotal") == Json(16));
    for (const char* d :
         {"protocolDigest", "environmentDigest", "workloadDigest", "implementationDigest"}) {
      CHECK(at(v, d) == at(run_spec, d));
    }
    CHECK(at(v, "protocol.harness") == Json("SOL-ExecBench evaluation stack"));
    CHECK(at(v, "protocol.harnessVersion") == Json(seed.version));
    CHECK(at(v, "protocol.timer") == Json("harness_reported"));
    CHECK(at(v, "protocol.primaryStatistic") == Json("mean"));
    CHECK(at(v, "protocol.correctnessReference") == Json("definition reference implementation"));
    CHECK(at(v, "protocol.family") == Json("sol_execbench_leaderboard"));
    CHECK(at(v, "environment.product") == Json("NVIDIA B200"));
    CHECK(at(v, "environment.architecture") == Json("sm_100"));
    CHECK(at(v, "artifacts") == Json::array());
    CHECK(at(v, "attestations") == Json::array());
    CHECK(at(v, "evidence") == Json("reported"));
    CHECK(at(v, "flags") == Json::array());
    // The seeds do not carry their workload and implementation manifests.
    std::string wl = *json_string(run_spec, "workloadDigest"),
                im = *json_string(run_spec, "implementationDigest");
    CHECK(at(v, "missing") == (wl < im ? strings({wl, im}) : strings({im, wl})));
    CHECK(at(v, "comparisonKey").is_null());
    CHECK(at(v, "rank").is_null());
    CHECK(at(v, "void").is_null());
    REQUIRE(at(v, "history").as_array().size() == 1);
    CHECK(at(v, "history").as_array()[0] ==
          *parse_json(R"({"index":3,"event":")" + digest_text(log.events()[3].id) +
                      R"(","kind":"observation","void":null})"));
    auto registration = test::registration_of(store, log, *run);
    REQUIRE(registration.has_value());
    CHECK(registration->index == 3);
  }
}

TEST_CASE("a run whose manifests are all present has its keys, summaries and evidence",
          "[projections]") {
  World w;
  EventLog log;
  w.register_all(log);
  test::RunSpec spec = w.spec("7", 1234, nullptr);
  spec.artifacts = true;
  Built run = test::build_manifest(test::run_json(spec));
  log.observation(run);
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  INFO(jcs_serialize(v));
  const std::string op = sha_of("operation");
  const std::string correctness =
      sha_of(R"({"correctness":{"comparator":"allclose","description":"every case must pass"}})");
  const std::string preimage =
      R"({"correctness":")" + correctness + R"(","environment":")" + w.env_b200.digest_text +
      R"(","metric":"latency:mean:ns","operation":")" + op + R"(","protocol":")" +
      w.protocol.digest_text + R"(","v":1,"workload":")" + w.workload.digest_text + R"("})";
  CHECK(at(v, "operationDigest") == Json(op));
  CHECK(at(v, "correctnessKey") == Json(correctness));
  CHECK(at(v, "comparisonKey") == Json(sha_of(preimage)));
  CHECK(at(v, "missing") == Json::array());
  CHECK(at(v, "workload.cases") == Json(4));
  CHECK(at(v, "implementation.sourceAvailable") == Json(true));
  CHECK(at(v, "implementation.repository") == Json("https://example.invalid/impl-source"));
  CHECK(at(v, "artifacts").as_array().size() == 2);
  CHECK(at(v, "evidence") == Json("reproducible"));
  CHECK(at(v, "rank") == Json(1));
  CHECK(at(v, "tied") == Json(false));
  CHECK(at(v, "groupSize") == Json(1));
  CHECK(at(v, "leader") == Json(run.digest_text));
}

TEST_CASE("reproducible needs available source, complete identity and raw evidence",
          "[projections][evidence]") {
  World w;
  auto level = [&](bool source, bool artifacts, bool implementation_present) {
    EventLog log;
    for (const Built* m : {&w.protocol, &w.env_b200, &w.workload}) log.manifest(*m);
    if (implementation_present) log.manifest(source ? w.impl_source : w.impl_plain);
    test::RunSpec spec = w.spec("1", 1000, nullptr);
    spec.implementation = (source ? w.impl_source : w.impl_plain).digest_text;
    spec.artifacts = artifacts;
    Built run = test::build_manifest(test::run_json(spec));
    log.observation(run);
    auto store = test::fold_all(log);
    return *json_string(view_of(store, log, run.digest), "evidence");
  };
  CHECK(level(true, true, true) == "reproducible");
  CHECK(level(false, true, true) == "reported");
  CHECK(level(true, false, true) == "reported");
  CHECK(level(true, true, false) == "reported");
}

TEST_CASE("manifests that arrive after the run resolve it when they arrive", "[projections]") {
  World w;
  Built run = w.run("9", 1500);
  EventLog late;
  late.observation(run);
  for (const Built* m : {&w.protocol, &w.env_b200, &w.workload, &w.impl_source}) late.manifest(*m);
  EventLog early;
  for (const Built* m : {&w.protocol, &w.env_b200, &w.workload, &w.impl_source}) early.manifest(*m);
  early.observation(run);

  MemoryProjectionStore store;
  test::fold(store, late, 0, 2);
  Json v = view_of(store, late, run.digest);
  CHECK(at(v, "missing").as_array().size() == 4);
  CHECK(at(v, "comparisonKey").is_null());
  test::fold(store, late, 2, 4);  // protocol, environment
  v = view_of(store, late, run.digest);
  CHECK(at(v, "missing") == (w.workload.digest_text < w.impl_source.digest_text
                                 ? strings({w.workload.digest_text, w.impl_source.digest_text})
                                 : strings({w.impl_source.digest_text, w.workload.digest_text})));
  CHECK(at(v, "environment.product") == Json("NVIDIA B200"));
  test::fold(store, late, 4, 5);  // workload
  v = view_of(store, late, run.digest);
  CHECK(at(v, "comparisonKey").is_string());
  CHECK(at(v, "rank") == Json(1));
  test::fold(store, late, 5);
  v = view_of(store, late, run.digest);
  CHECK(at(v, "missing") == Json::array());
  CHECK(at(v, "history").as_array().size() == 5);
  CHECK(at(v, "history").as_array()[4] ==
        *parse_json(R"({"index":5,"event":")" + digest_text(late.events()[5].id) +
                    R"(","kind":"manifest","void":null})"));
  for (const auto& [key, value] : store.contents()) CHECK(key.rfind("w/", 0) != 0);

  Json e = view_of(test::fold_all(early), early, run.digest);
  for (const char* member :
       {"comparisonKey", "correctnessKey", "operationDigest", "evidence", "flags", "protocol",
        "environment", "workload", "implementation", "rank"}) {
    INFO(member);
    CHECK(at(v, member) == at(e, member));
  }
}

// The verdict of one rerun of a run observed at 1000 ns on a B200.
std::string verdict_of(double rerun_mean, const std::string& status = "passed",
                       const std::string& env = "b200", uint32_t tolerance_milli = 50) {
  World w;
  EventLog log;
  log.tolerance_milli = tolerance_milli;
  w.register_all(log);
  Built run = w.run("1", 1000);
  log.observation(run);
  const Built& e = env == "h100" ? w.env_h100 : env == "sm90" ? w.env_b200_sm90 : w.env_b200;
  log.rerun(run.digest, rerun_manifest(w, rerun_mean, e, status), test::runner_actor("a", "a"));
  auto store = test::fold_all(log);
  return *json_string(at(view_of(store, log, run.digest), "reruns").as_array().at(0), "verdict");
}

TEST_CASE("a rerun within 1+δ of the observation confirms it", "[projections][verdict]") {
  CHECK(verdict_of(1000) == "confirmed");
  CHECK(verdict_of(900) == "confirmed");
  CHECK(verdict_of(1050) == "confirmed");  // r = 1 + δ exactly
  CHECK(verdict_of(1049.999) == "confirmed");
  CHECK(verdict_of(1100, "passed", "b200", 100) == "confirmed");  // δ from the genesis
}

TEST_CASE("a rerun beyond 1+2δ contradicts it and in between is inconclusive",
          "[projections][verdict]") {
  CHECK(verdict_of(1051) == "inconclusive");
  CHECK(verdict_of(1100) == "inconclusive");  // r = 1 + 2δ is not beyond it
  CHECK(verdict_of(1100.001) == "contradicted");
  CHECK(verdict_of(1101) == "contradicted");
  CHECK(verdict_of(5000) == "contradicted");
}

TEST_CASE("a rerun that did not pass refutes and one on another GPU is inconclusive",
          "[projections][verdict]") {
  CHECK(verdict_of(1000, "runtime_error") == "refuted");
  CHECK(verdict_of(5000, "incorrect_numerical", "h100") == "refuted");
  CHECK(verdict_of(1000, "passed", "h100") == "inconclusive");
  CHECK(verdict_of(1000, "passed", "sm90") == "inconclusive");
}

TEST_CASE("a rerun waits for its environment manifest before its verdict",
          "[projections][verdict]") {
  World w;
  EventLog log;
  for (const Built* m : {&w.protocol, &w.env_b200, &w.workload, &w.impl_source}) log.manifest(*m);
  Built run = w.run("1", 1000);
  log.observation(run);
  log.rerun(run.digest, rerun_manifest(w, 1000, w.env_b200_v2), test::runner_actor("a", "a"));
  uint64_t env_index = log.manifest(w.env_b200_v2);
  MemoryProjectionStore store;
  test::fold(store, log, 0, env_index);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "reruns").as_array()[0].find("verdict")->as_string() == "pending");
  CHECK(at(v, "missing") == strings({w.env_b200_v2.digest_text}));
  CHECK(at(v, "evidence") == Json("reported"));
  test::fold(store, log, env_index);
  v = view_of(store, log, run.digest);
  CHECK(at(v, "reruns").as_array()[0].find("verdict")->as_string() == "confirmed");
  CHECK(at(v, "reruns").as_array()[0].find("ratio")->as_number() == 1.0);
  CHECK(at(v, "missing") == Json::array());
  CHECK(at(v, "evidence") == Json("verified"));
}

// Evidence after confirming reruns by runners (owner, host).
std::string evidence_with(const std::vector<std::pair<std::string, std::string>>& runners,
                          double rerun_mean = 1000) {
  World w;
  EventLog log;
  w.register_all(log);
  Built run = w.run("1", 1000);
  log.observation(run);
  for (const auto& [owner, host] : runners) {
    log.rerun(run.digest, rerun_manifest(w, rerun_mean, w.env_b200),
              test::runner_actor(owner, host));
  }
  log.attestation(run.digest, AttestationType::kReproduced);
  auto store = test::fold_all(log);
  return *json_string(view_of(store, log, run.digest), "evidence");
}

TEST_CASE("evidence levels follow confirming reruns and their runners", "[projections][evidence]") {
  CHECK(evidence_with({}) == "reported");  // an attestation never raises it
  CHECK(evidence_with({{"a", "h1"}}) == "verified");
  CHECK(evidence_with({{"a", "h1"}, {"b", "h2"}}) == "replicated");
  CHECK(evidence_with({{"a", "h1"}, {"a", "h2"}}) == "verified");  // same owner
  CHECK(evidence_with({{"a", "h1"}, {"b", "h1"}}) == "verified");  // same host
  CHECK(evidence_with({{"a", "h1"}, {"a", "h2"}, {"b", "h1"}, {"c", "h3"}}) == "replicated");
  CHECK(evidence_with({{"a", "h1"}, {"b", "h2"}}, 1200) == "reported");  // contradicting reruns
}

TEST_CASE("a runner without owner and host scope verifies but never replicates",
          "[projections][evidence]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built run = w.run("1", 1000);
  log.observation(run);
  test::Actor bare{"bare-runner", {Role::kRunner}, {}};
  log.rerun(run.digest, rerun_manifest(w, 1000, w.env_b200), bare);
  log.rerun(run.digest, rerun_manifest(w, 1000, w.env_b200), test::runner_actor("b", "h2"));
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "evidence") == Json("verified"));
  CHECK(at(v, "reruns").as_array()[1].find("owner")->as_string() == "b");
  CHECK(at(v, "reruns").as_array()[0].find("owner")->is_null());
}

TEST_CASE("flags record contradicting and refuting reruns and corrections",
          "[projections][flags]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built a = w.run("a", 1000), b = w.run("b", 1000), c = w.run("c", 1000), d = w.run("d", 1000);
  for (const Built* r : {&a, &b, &c, &d}) log.observation(*r);
  log.rerun(a.digest, rerun_manifest(w, 2000, w.env_b200), test::runner_actor("a", "a"));
  log.rerun(a.digest, rerun_manifest(w, 1000, w.env_b200, "timeout"), test::runner_actor("b", "b"));
  log.retract(b.digest);
  log.supersede(c.digest, d.digest);
  log.disqualify(d.digest, "sol-execbench");
  auto store = test::fold_all(log);
  CHECK(at(view_of(store, log, a.digest), "flags") == strings({"contradicted", "refuted"}));
  CHECK(at(view_of(store, log, b.digest), "flags") == strings({"retracted"}));
  Json vc = view_of(store, log, c.digest);
  CHECK(at(vc, "flags") == strings({"superseded"}));
  CHECK(at(vc, "supersededBy") == Json(d.digest_text));
  Json vd = view_of(store, log, d.digest);
  CHECK(at(vd, "flags") == strings({"disqualified"}));
  CHECK(at(vd, "corrections").as_array().size() == 2);
  CHECK(at(vd, "corrections").as_array()[0].find("role")->as_string() == "replacement");
  CHECK(at(vd, "history").as_array().size() == 3);
  CHECK(at(vc, "rank").is_null());
  CHECK(at(view_of(store, log, a.digest), "rank") == Json(1));  // flags from reruns do not unrank
}

TEST_CASE("a disqualification for another source is listed and ignored", "[projections][flags]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built run = w.run("1", 1000);
  log.observation(run);
  log.disqualify(run.digest, "gpumode");
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "flags") == Json::array());
  CHECK(at(v, "corrections").as_array()[0].find("ignored")->is_string());
  CHECK(at(v, "rank") == Json(1));
}

TEST_CASE("void events are listed with their cause and never counted", "[projections][void]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built good = w.run("good", 2000), bad = w.run("bad", 1000);
  log.observation(good);
  uint64_t void_obs = log.observation(bad, "key compromised from index 9");
  log.rerun(good.digest, rerun_manifest(w, 2000, w.env_b200), test::runner_actor("a", "a"),
            "voided");
  log.retract(good.digest, "voided too");
  auto store = test::fold_all(log);

  Json vb = view_of(store, log, bad.digest);
  CHECK(at(vb, "void") == Json("key compromised from index 9"));
  CHECK(at(vb, "rank").is_null());
  CHECK(at(vb, "groupSize").is_null());
  CHECK_FALSE(test::registration_of(store, log, bad.digest).has_value());

  Json vg = view_of(store, log, good.digest);
  CHECK(at(vg, "rank") == Json(1));
  CHECK(at(vg, "groupSize") == Json(1));
  CHECK(at(vg, "leader") == Json(good.digest_text));
  CHECK(at(vg, "evidence") == Json("reported"));
  CHECK(at(vg, "flags") == Json::array());
  CHECK(at(vg, "reruns").as_array()[0].find("void")->as_string() == "voided");
  CHECK(at(vg, "corrections").as_array()[0].find("void")->as_string() == "voided too");
  CHECK(at(vg, "history").as_array().size() == 3);

  auto voids = list_void_events(store);
  REQUIRE(voids.has_value());
  REQUIRE(voids->size() == 3);
  CHECK(at((*voids)[0], "index") == Json(void_obs));
  CHECK(at((*voids)[0], "kind") == Json("observation"));
  CHECK(at((*voids)[0], "target") == Json(bad.digest_text));
}

TEST_CASE("an observation that stands takes over the view of a void one", "[projections][void]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built leader = w.run("leader", 2000), run = w.run("run", 1000);
  log.observation(leader);
  log.observation(run, "voided");
  log.rerun(run.digest, rerun_manifest(w, 1000, w.env_b200), test::runner_actor("a", "a"));
  uint64_t standing = log.observation(run);
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "void").is_null());
  CHECK(at(v, "index") == Json(standing));
  CHECK(at(v, "evidence") == Json("verified"));
  CHECK(at(v, "rank") == Json(1));
  CHECK(at(v, "leader") == Json(run.digest_text));
  CHECK(at(v, "history").as_array().size() == 3);
  auto history = leadership_history(store);
  REQUIRE(history.has_value());
  REQUIRE(history->size() == 2);
  CHECK(at((*history)[1], "cause") == Json("new_run"));
  CHECK(at((*history)[1], "index") == Json(standing));
}

TEST_CASE("a void manifest stays missing and is listed on the runs waiting for it",
          "[projections][void]") {
  World w;
  EventLog log;
  Built run = w.run("1", 1000);
  log.observation(run);
  log.manifest(w.protocol, "voided");
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "protocol").is_null());
  CHECK(at(v, "history").as_array().size() == 2);
  CHECK(at(v, "history").as_array()[1].find("void")->as_string() == "voided");
  CHECK_FALSE(test::registration_of(store, log, w.protocol.digest).has_value());
}

TEST_CASE("events that name a run before it is observed attach when it is", "[projections]") {
  World w;
  EventLog log;
  Built run = w.run("1", 1000);
  uint64_t rerun =
      log.rerun(run.digest, rerun_manifest(w, 1000, w.env_b200), test::runner_actor("a", "a"));
  uint64_t attestation = log.attestation(run.digest, AttestationType::kEnvironmentNote);
  w.register_all(log);
  uint64_t observed = log.observation(run);
  auto store = test::fold_all(log);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "reruns").as_array()[0].find("verdict")->as_string() == "confirmed");
  CHECK(at(v, "attestations").as_array()[0].find("type")->as_string() == "environment_note");
  const Json::Array history = at(v, "history").as_array();
  REQUIRE(history.size() == 3);
  CHECK(history[0].find("index")->as_number() == rerun);
  CHECK(history[1].find("index")->as_number() == attestation);
  CHECK(history[2].find("index")->as_number() == observed);
  CHECK(at(v, "evidence") == Json("verified"));
  for (const auto& [key, value] : store.contents()) CHECK(key.rfind("o/", 0) != 0);
}

TEST_CASE("a digest registered twice keeps its first registration", "[projections]") {
  World w;
  EventLog log;
  uint64_t first = log.manifest(w.protocol);
  log.manifest(w.protocol);
  Built run = w.run("1", 1000);
  uint64_t observed = log.observation(run);
  log.observation(run);
  auto store = test::fold_all(log);
  auto registration = test::registration_of(store, log, w.protocol.digest);
  REQUIRE(registration.has_value());
  CHECK(registration->index == first);
  Json v = view_of(store, log, run.digest);
  CHECK(at(v, "index") == Json(observed));
  CHECK(at(v, "history").as_array().size() == 1);
}

TEST_CASE("a run manifest registered by a manifest event is not observed again", "[projections]") {
  World w;
  EventLog log;
  Built run = w.run("1", 1000);
  log.observation(run, "voided");  // a void view, then the digest is registered, then observed
  log.manifest(run);
  log.observation(run);
  auto store = test::fold_all(log);
  auto registration = test::registration_of(store, log, run.digest);
  REQUIRE(registration.has_value());
  CHECK(registration->index == 2);
  CHECK(at(view_of(store, log, run.digest), "void") == Json("voided"));
}

TEST_CASE("damaged stored values are reported as corrupt, never a crash", "[projections][tamper]") {
  World w;
  EventLog log;
  w.register_all(log);
  Built a = w.run("a", 1000), b = w.run("b", 900);
  log.observation(a);
  log.rerun(a.digest, rerun_manifest(w, 1000, w.env_b200), test::runner_actor("a", "a"));
  log.observation(b);
  log.rerun(b.digest, rerun_manifest(w, 1000, w.env_b200),
            test::runner_actor("a", "a"));  // orphan-free
  log.retract(b.digest);
  const size_t last = log.size() - 1;
  MemoryProjectionStore base;
  test::fold(base, log, 0, last);
  Projector projector;
  for (const auto& [key, value] : base.contents()) {
    for (const std::string& damage :
         {value.substr(0, value.size() / 2), std::string("{}"), std::string("[]"),
          std::string("null"), std::string("1"), std::string("{\"leader\":7,\"size\":-1}")}) {
      MemoryProjectionStore store = base;
      REQUIRE(store.put(key, damage).is_ok());
      INFO(key << " = " << damage);
      Status applied = projector.apply(store, log.events()[last]);
      CHECK(
          (applied.is_ok() || applied.code() == Code::kCorrupt || applied.code() == Code::kUsage));
      for (const Built* run : {&a, &b}) {
        auto view = read_run_view(store, log.manifests(), run->digest);
        CHECK((view.has_value() || view.error().code() == Code::kCorrupt));
      }
      for (auto result : {list_runs(store), list_groups(store), leadership_history(store),
                          list_void_events(store)}) {
        CHECK((result.has_value() || result.error().code() == Code::kCorrupt));
      }
      CHECK(projection_digest(store).has_value());
    }
  }
}

TEST_CASE("events applied out of order or without a body are refused", "[projections]") {
  World w;
  EventLog log;
  log.manifest(w.protocol);
  log.manifest(w.env_b200);
  MemoryProjectionStore store;
  test::fold(store, log);
  Projector projector;
  Status again = projector.apply(store, log.events()[1]);
  CHECK(again.code() == Code::kUsage);
  CHECK(again.message().find("out of order") != std::string::npos);
  ProjectedEvent empty;
  empty.index = 10;
  CHECK(projector.apply(store, empty).code() == Code::kUsage);
  CHECK(projected_size(store).value() == 3);
}

TEST_CASE("an observation whose manifest is not a BenchmarkRun is skipped with why",
          "[projections]") {
  World w;
  EventLog log;
  log.observation(w.protocol);
  auto store = test::fold_all(log);
  auto skipped = list_skipped_events(store);
  REQUIRE(skipped.has_value());
  REQUIRE(skipped->size() == 1);
  CHECK(json_string((*skipped)[0], "reason").value_or("").find("BenchmarkRun") !=
        std::string::npos);
  auto runs = list_runs(store);
  REQUIRE(runs.has_value());
  CHECK(runs->empty());
}

}  // namespace
}  // namespace evl
