#include "tests/projections/projection_fixtures.h"

#include <catch2/catch.hpp>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "events/manifest_digest.h"
#include "projections/query.h"

namespace evl::test {
namespace {

constexpr const char* kApiVersion = "kernelindex.dev/v1alpha1";

Json manifest(const char* kind, const std::string& name, Json spec) {
  Json metadata = Json::object();
  metadata.set("name", name);
  metadata.set("title", name + " (test fixture)");
  Json out = Json::object();
  out.set("apiVersion", kApiVersion);
  out.set("kind", kind);
  out.set("metadata", std::move(metadata));
  out.set("spec", std::move(spec));
  return out;
}

Json obj(std::initializer_list<std::pair<const char*, Json>> members) {
  Json out = Json::object();
  for (const auto& [k, v] : members) out.set(k, v);
  return out;
}

PublicKey key_of(uint8_t b) {
  PublicKey k{};
  k.fill(b);
  return k;
}

}  // namespace

Built build_manifest(const Json& m) {
  auto canonical = canonical_manifest(m);
  REQUIRE(canonical.has_value());
  Built out;
  out.canonical = canonical->text;
  out.digest = canonical->digest;
  out.digest_text = digest_text(canonical->digest);
  if (const Json* metadata = m.find("metadata")) out.metadata = jcs_serialize(*metadata);
  return out;
}

Json protocol_json(const std::string& version) {
  return manifest(
      "BenchmarkProtocol", "protocol-" + version,
      obj({{"harness", obj({{"name", "test harness"}, {"version", version}})},
           {"measurement", obj({{"timer", "cuda_events"}, {"primaryStatistic", "mean"}})},
           {"correctness", obj({{"reference", "pytorch eager"}, {"comparator", "allclose"}})},
           {"comparability", obj({{"family", "test_family"}})}}));
}

Json environment_json(const std::string& product, const std::string& architecture,
                      const std::string& stack) {
  return manifest(
      "ExecutionEnvironment", "env-" + architecture + "-" + stack,
      obj({{"hardware",
            obj({{"vendor", "nvidia"}, {"product", product}, {"architecture", architecture}})},
           {"software", obj({{"libraries", obj({{"stack", stack}})}})}}));
}

Json workload_json(const std::string& operation_digest, const std::string& comparator, int cases) {
  Json list = Json::array();
  for (int i = 0; i < cases; ++i) {
    list.as_array().push_back(
        obj({{"externalId", std::to_string(i)}, {"axes", obj({{"tokens", 1024 * (i + 1)}})}}));
  }
  return manifest("WorkloadSuite", "suite-" + comparator + "-" + std::to_string(cases),
                  obj({{"operationSpecDigest", operation_digest},
                       {"cases", list},
                       {"correctness",
                        obj({{"comparator", comparator}, {"description", "every case must pass"}})},
                       {"aggregation", obj({{"metric", "latency"}, {"statistic", "mean"}})}}));
}

Json implementation_json(const std::string& name, bool source_available) {
  Json revision = source_available ? obj({{"repository", "https://example.invalid/" + name},
                                          {"commit", "0123456789abcdef0123456789abcdef01234567"}})
                                   : obj({{"version", "1.0"}});
  return manifest(
      "ImplementationRevision", name,
      obj({{"projectRevision", revision},
           {"operation", obj({{"specDigest", digest_text(sha256(as_bytes("op")))}})},
           {"callable", obj({{"language", "triton"}})},
           {"support", obj({{"hardwareArchitectures", Json(Json::Array{Json("sm_100")})},
                            {"dtypes", Json(Json::Array{Json("bf16")})}})},
           {"licensing", obj({{"declared", "MIT"}})}}));
}

Json run_json(const RunSpec& s) {
  Json spec = obj({{"protocolDigest", s.protocol},
                   {"environmentDigest", s.environment},
                   {"workloadDigest", s.workload},
                   {"implementationDigest", s.implementation},
                   {"status", s.status},
                   {"observedAt", s.observed_at}});
  if (s.mean) {
    spec.set("timing",
             obj({{"primaryStatistic", "mean"}, {"latencyNs", obj({{"mean", *s.mean}})}}));
  }
  if (!s.source.empty()) {
    spec.set("sourceNative", obj({{"source", s.source},
                                  {"benchmark", s.benchmark},
                                  {"externalId", s.external_id},
                                  {"metrics", obj({{"sol_score", 0.5},
                                                   {"avg_speedup", 2.25},
                                                   {"fast_1_count", 3},
                                                   {"fast_1_total", 4}})}}));
  }
  if (s.artifacts) {
    std::string d = digest_text(sha256(as_bytes(s.external_id)));
    spec.set("evidence",
             obj({{"logs", obj({{"uri", "https://example.invalid/logs"}, {"digest", d}})},
                  {"rawSamples", obj({{"uri", "https://example.invalid/raw"}, {"digest", d}})}}));
  }
  Json out = manifest("BenchmarkRun", "run-" + s.external_id, spec);
  out.find("metadata")->set("title", s.title);
  return out;
}

Actor importer_actor() {
  return {"importer.example.org", {Role::kImporter}, {"gpumode", "sol-execbench"}};
}
Actor curator_actor() { return {"curator.example.org", {Role::kCurator}, {}}; }
Actor attestor_actor() { return {"attestor.example.org", {Role::kAttestor}, {}}; }
Actor runner_actor(const std::string& owner, const std::string& host) {
  std::vector<std::string> scope = {"host:" + host, "owner:" + owner};
  return {"runner-" + owner + "-" + host, {Role::kRunner}, scope};
}

EventLog::EventLog() {
  Genesis g;
  g.origin = "example.org/test-log";
  add(g, Actor{"admin.example.org", {Role::kAdmin}, {}});
}

uint64_t EventLog::add(Payload payload, const Actor& author,
                       std::optional<std::string> void_cause) {
  EventBody body;
  body.author = key_of(static_cast<uint8_t>(author.name.size()));
  body.claimed_time_ms = 1700000000000 + static_cast<int64_t>(events_.size());
  body.payload = std::move(payload);
  bodies_.push_back(std::move(body));
  ProjectedEvent e;
  e.index = events_.size();
  e.id = event_id(encode_body(bodies_.back()));
  e.body = &bodies_.back();
  e.author_name = author.name;
  e.author_roles = author.roles;
  e.author_scope = author.scope;
  e.void_cause = std::move(void_cause);
  e.rerun_tolerance_milli = tolerance_milli;
  manifests_->add(e.index, bodies_.back(), e.void_cause.has_value());
  e.manifests = manifests_.get();
  events_.push_back(std::move(e));
  return events_.back().index;
}

uint64_t EventLog::manifest(const Built& m, std::optional<std::string> void_cause) {
  return add(ManifestEvent{ManifestText{m.canonical, m.metadata}}, importer_actor(),
             std::move(void_cause));
}

uint64_t EventLog::observation(const Built& run, std::optional<std::string> void_cause) {
  return add(Observation{ManifestText{run.canonical, run.metadata}}, importer_actor(),
             std::move(void_cause));
}

uint64_t EventLog::rerun(const Digest& target, const Built& run, const Actor& runner,
                         std::optional<std::string> void_cause) {
  Rerun r;
  r.target = target;
  r.run = ManifestText{run.canonical, run.metadata};
  return add(std::move(r), runner, std::move(void_cause));
}

uint64_t EventLog::attestation(const Digest& target, AttestationType type,
                               std::optional<std::string> void_cause) {
  Attestation a;
  a.target = target;
  a.type = type;
  a.text = "seen on our machine";
  return add(std::move(a), attestor_actor(), std::move(void_cause));
}

uint64_t EventLog::retract(const Digest& target, std::optional<std::string> void_cause) {
  Correction c;
  c.kind = Correction::Kind::kRetract;
  c.reason = "withdrawn";
  c.target = target;
  return add(c, curator_actor(), std::move(void_cause));
}

uint64_t EventLog::supersede(const Digest& target, const Digest& replacement) {
  Correction c;
  c.kind = Correction::Kind::kSupersede;
  c.reason = "re-imported";
  c.target = target;
  c.replacement = replacement;
  return add(c, curator_actor());
}

uint64_t EventLog::disqualify(const Digest& target, const std::string& source) {
  Correction c;
  c.kind = Correction::Kind::kDisqualify;
  c.reason = "the source disqualified it";
  c.target = target;
  c.source = source;
  c.at_ms = 1700000000000;
  return add(c, importer_actor());
}

World::World()
    : protocol(build_manifest(protocol_json("v1"))),
      env_b200(build_manifest(environment_json("NVIDIA B200", "sm_100"))),
      env_h100(build_manifest(environment_json("NVIDIA H100", "sm_90"))),
      env_b200_sm90(build_manifest(environment_json("NVIDIA B200", "sm_90"))),
      env_b200_v2(build_manifest(environment_json("NVIDIA B200", "sm_100", "v2"))),
      workload(build_manifest(workload_json(digest_text(sha256(as_bytes("operation")))))),
      impl_source(build_manifest(implementation_json("impl-source", true))),
      impl_plain(build_manifest(implementation_json("impl-plain", false))) {}

RunSpec World::spec(const std::string& external_id, double mean, const Built* env) const {
  RunSpec s;
  s.protocol = protocol.digest_text;
  s.environment = (env != nullptr ? *env : env_b200).digest_text;
  s.workload = workload.digest_text;
  s.implementation = impl_source.digest_text;
  s.mean = Json(mean);
  s.external_id = external_id;
  s.title = "run " + external_id;
  return s;
}

Built World::run(const std::string& external_id, double mean, const Built* env) const {
  return build_manifest(run_json(spec(external_id, mean, env)));
}

void World::register_all(EventLog& log) const {
  for (const Built* m : {&protocol, &env_b200, &env_h100, &env_b200_sm90, &env_b200_v2, &workload,
                         &impl_source, &impl_plain}) {
    log.manifest(*m);
  }
}

void fold(ProjectionStore& store, const EventLog& log, size_t from, size_t to) {
  Projector projector;
  to = std::min(to, log.size());
  for (size_t i = from; i < to; ++i) {
    Status s = projector.apply(store, log.events()[i]);
    INFO("event " << i << ": " << s.message());
    REQUIRE(s.is_ok());
  }
}

MemoryProjectionStore fold_all(const EventLog& log) {
  MemoryProjectionStore store;
  fold(store, log);
  return store;
}

Json view_of(const ProjectionStore& store, const EventLog& log, const Digest& run) {
  auto view = read_run_view(store, log.manifests(), run);
  INFO(digest_text(run) << (view ? "" : ": " + view.error().message()));
  REQUIRE(view.has_value());
  REQUIRE(view->has_value());
  return **view;
}

std::optional<Registration> registration_of(const ProjectionStore& store, const EventLog& log,
                                            const Digest& digest) {
  auto covered = projected_size(store);
  REQUIRE(covered.has_value());
  auto registration = log.manifests().registered(digest, *covered);
  INFO((registration ? "" : registration.error().message()));
  REQUIRE(registration.has_value());
  return *registration;
}

Json at(const Json& value, const std::string& dotted_path) {
  const Json* found = json_path(value, dotted_path);
  return found != nullptr ? *found : Json();
}

}  // namespace evl::test
