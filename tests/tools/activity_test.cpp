// The synthetic activity planner: deterministic, well-formed, and every rerun does what its
// intent says (the verdict bands of tolerance policy v1).
#include "tools/gen/activity.h"

#include <catch2/catch.hpp>
#include <set>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "events/manifest_check.h"
#include "keys/key.h"
#include "tools/gen/sol_catalog.h"

namespace evl::gen {
namespace {

KeyRef key_ref(const std::string& name, uint8_t seed_byte) {
  Bytes seed(32, seed_byte);
  auto key = SecretKey::from_seed(name, seed);
  REQUIRE(key.has_value());
  return KeyRef{key->public_key(), name};
}

struct World {
  ActivitySubjects subjects;
  std::set<std::string> digests;  // every manifest of the catalog
  ActivityOptions options;
};

// The subjects a ledger holding the catalog of `runs` runs would yield; each run's group is
// its comparison key (events/kernelindex.h), which is what the projections list.
World world(uint64_t runs) {
  World w;
  std::map<std::string, Json> workloads;  // workload (case or suite) specs by digest text
  std::vector<Json> run_specs;
  generate_sol_catalog({runs, 3}, [&](const Json& manifest) {
    CheckedManifest checked = check_manifest(manifest, 1);
    REQUIRE(checked.ok());
    w.digests.insert(digest_text(checked.digest));
    if (checked.use == ManifestUse::kObservation) {
      auto run = observed_run(checked.text);
      REQUIRE(run.has_value());
      w.subjects.runs.push_back(*run);
      run_specs.push_back(*manifest.find("spec"));
    } else if (checked.kind == "ExecutionEnvironment") {
      auto hw = environment_hardware(*manifest.find("spec"));
      REQUIRE(hw.has_value());
      w.subjects.environments[digest_text(checked.digest)] = *hw;
    } else if (checked.kind == "WorkloadCase" || checked.kind == "WorkloadSuite") {
      workloads.emplace(digest_text(checked.digest), *manifest.find("spec"));
    }
  });
  for (size_t i = 0; i < run_specs.size(); ++i) {
    ObservedRun& r = w.subjects.runs[i];
    auto workload = workloads.find(r.workload);
    if (workload == workloads.end()) continue;
    if (auto inputs = comparison_inputs(run_specs[i], workload->second)) {
      r.group = digest_text(comparison_key(*inputs));
    }
  }
  w.options.events = 600;
  w.options.seed = 11;
  w.options.runners = {key_ref("runner-a", 1), key_ref("runner-b", 2)};
  w.options.attestors = {key_ref("attestor", 3)};
  w.options.curator = key_ref("curator", 4);
  return w;
}

Json manifest_json(const ManifestText& text) {
  auto canonical = parse_json(text.canonical);
  auto metadata = parse_json(text.metadata);
  REQUIRE(canonical.has_value());
  REQUIRE(metadata.has_value());
  Json out = *canonical;
  out.set("metadata", *metadata);
  return out;
}

std::string bytes_of(const ActivityPlan& plan) {
  std::string out;
  for (const EventBody& body : plan.events) out += as_chars(encode_body(body));
  return out;
}

TEST_CASE("an activity plan is deterministic for a seed", "[gen][activity]") {
  World w = world(120);
  auto a = plan_activity(w.subjects, w.options);
  auto b = plan_activity(w.subjects, w.options);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(bytes_of(*a) == bytes_of(*b));
  w.options.seed = 12;
  auto c = plan_activity(w.subjects, w.options);
  REQUIRE(c.has_value());
  CHECK(bytes_of(*c) != bytes_of(*a));
}

TEST_CASE("activity events have the shape, the authors and the order the ledger needs",
          "[gen][activity]") {
  World w = world(120);
  auto plan = plan_activity(w.subjects, w.options);
  REQUIRE(plan.has_value());
  const ActivityStats& s = plan->stats;
  uint64_t reruns = s.confirming + s.contradicting + s.refuting + s.other_gpu;
  uint64_t attestations = s.attestations[0] + s.attestations[1] + s.attestations[2] +
                          s.attestations[3];
  CHECK(plan->events.size() == s.manifests + w.options.events);
  CHECK(reruns + attestations + s.retractions + s.supersessions == w.options.events);
  for (uint64_t n : s.attestations) CHECK(n > 0);
  CHECK(s.replications > 0);
  CHECK(s.retractions > 0);
  CHECK(s.supersessions > 0);

  std::set<PublicKey> runners = {w.options.runners[0].public_key,
                                 w.options.runners[1].public_key};
  std::set<Digest> corrected;
  std::map<Digest, std::string> group_of;
  for (const ObservedRun& r : w.subjects.runs) group_of[r.run] = r.group;
  bool manifests_done = false;
  int64_t last_time = 0;
  for (const EventBody& body : plan->events) {
    CHECK(check_body_fields(body));
    if (body.kind() == EventKind::kManifest) {
      CHECK_FALSE(manifests_done);  // the lab environments come first
      CHECK(body.author == w.options.runners[0].public_key);
      continue;
    }
    manifests_done = true;
    CHECK(body.claimed_time_ms >= last_time);
    last_time = body.claimed_time_ms;
    if (body.kind() == EventKind::kRerun) CHECK(runners.count(body.author) == 1);
    if (body.kind() == EventKind::kAttestation) {
      CHECK(body.author == w.options.attestors[0].public_key);
      const auto& a = std::get<Attestation>(body.payload);
      CHECK(!a.text.empty());
      CHECK(a.text.size() <= kMaxAttestationText);
    }
    if (const auto* c = std::get_if<Correction>(&body.payload)) {
      CHECK(body.author == w.options.curator.public_key);
      CHECK(corrected.insert(c->target).second);  // a run is corrected at most once
      if (c->kind == Correction::Kind::kSupersede) {  // within one comparison group
        CHECK(!group_of.at(c->target).empty());
        CHECK(group_of.at(c->target) == group_of.at(c->replacement));
      }
    }
  }
}

TEST_CASE("every rerun is a rerun-only BenchmarkRun whose verdict band matches its intent",
          "[gen][activity]") {
  World w = world(200);
  auto plan = plan_activity(w.subjects, w.options);
  REQUIRE(plan.has_value());
  std::map<Digest, const ObservedRun*> observed;
  for (const ObservedRun& r : w.subjects.runs) observed[r.run] = &r;
  std::map<std::string, Hardware> environments = w.subjects.environments;
  ActivityStats counted;
  for (const EventBody& body : plan->events) {
    if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
      Json manifest = manifest_json(m->manifest);
      CheckedManifest checked = check_manifest(manifest, 1);
      REQUIRE(checked.ok());
      auto hw = environment_hardware(*manifest.find("spec"));
      REQUIRE(hw.has_value());
      environments[digest_text(checked.digest)] = *hw;
      w.digests.insert(digest_text(checked.digest));
    }
    const auto* rerun = std::get_if<Rerun>(&body.payload);
    if (rerun == nullptr) continue;
    Json manifest = manifest_json(rerun->run);
    CheckedManifest checked = check_manifest(manifest, 1);
    INFO(rerun->run.canonical);
    REQUIRE(checked.ok());
    CHECK(checked.use == ManifestUse::kRerunOnly);
    CHECK(body.claimed_time_ms == checked.observed_at_ms);  // a rerun claims its observedAt
    const Json& spec = *manifest.find("spec");
    for (const char* member :
         {"implementationDigest", "workloadDigest", "protocolDigest", "environmentDigest"}) {
      CHECK(w.digests.count(spec.find(member)->as_string()) == 1);
    }
    if (!rerun->cases.empty()) CHECK(parse_json(rerun->cases)->is_array());
    REQUIRE(observed.count(rerun->target) == 1);
    const ObservedRun& target = *observed[rerun->target];
    CHECK(spec.find("implementationDigest")->as_string() == target.implementation);
    auto primary = primary_measurement(spec);
    REQUIRE(primary.has_value());
    double ratio = primary->value / target.primary->value;
    const Hardware& mine = environments.at(spec.find("environmentDigest")->as_string());
    const Hardware& theirs = environments.at(target.environment);
    if (spec.find("status")->as_string() != "passed") {
      ++counted.refuting;
    } else if (mine.architecture != theirs.architecture) {
      ++counted.other_gpu;
    } else if (ratio >= 0.969 && ratio <= 1.031) {
      ++counted.confirming;
    } else {
      CHECK(ratio >= 1.149);
      CHECK(ratio <= 1.301);
      ++counted.contradicting;
    }
  }
  CHECK(counted.refuting == plan->stats.refuting);
  CHECK(counted.other_gpu == plan->stats.other_gpu);
  CHECK(counted.confirming == plan->stats.confirming);
  CHECK(counted.contradicting == plan->stats.contradicting);
  CHECK(plan->stats.confirming > 0);
  CHECK(plan->stats.contradicting > 0);
  CHECK(plan->stats.refuting > 0);
  CHECK(plan->stats.other_gpu > 0);
}

TEST_CASE("activity needs observed runs", "[gen][activity]") {
  World w = world(10);
  w.subjects.runs.clear();
  auto plan = plan_activity(w.subjects, w.options);
  REQUIRE_FALSE(plan.has_value());
  CHECK(plan.error().code() == Code::kRejected);
  CHECK_THAT(plan.error().message(), Catch::Contains("import a catalog first"));
}

}  // namespace
}  // namespace evl::gen
