// tests/projections/projection_fixtures.h — KernelIndex manifests and event streams for the
// projection tests, written here (not copied from the shared fixtures).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/event.h"
#include "events/json.h"
#include "projections/internal/prepared.h"
#include "projections/projector.h"
#include "projections/store.h"

namespace evl::test {

// A manifest as the ledger stores it: JCS text of {apiVersion, kind, spec}, JCS metadata.
struct Built {
  std::string canonical;
  std::string metadata;
  Digest digest{};
  std::string digest_text;
};
Built build_manifest(const Json& manifest);  // the manifest must have the covered members

Json protocol_json(const std::string& version);
Json environment_json(const std::string& product, const std::string& architecture,
                      const std::string& stack = "v1");
Json workload_json(const std::string& operation_digest, const std::string& comparator = "allclose",
                   int cases = 4);
Json implementation_json(const std::string& name, bool source_available);

struct RunSpec {
  std::string protocol, environment, workload, implementation;  // digest texts
  std::string status = "passed";
  std::optional<Json> mean = Json(1000);  // latencyNs.mean; nullopt: no timing
  std::string observed_at = "2026-07-01T00:00:00Z";
  std::string source = "sol-execbench";  // empty: no sourceNative (a rerun's manifest)
  std::string benchmark = "bench-a";
  std::string external_id = "1";
  bool artifacts = false;  // evidence.logs and evidence.rawSamples
  std::string title = "a run";
};
Json run_json(const RunSpec& spec);

struct Actor {
  std::string name;
  std::vector<Role> roles;
  std::vector<std::string> scope;
};
Actor importer_actor();
Actor curator_actor();
Actor attestor_actor();
Actor runner_actor(const std::string& owner, const std::string& host);

// Events with log indexes from 0 (a genesis), as the ledger would hand them to the projector.
class EventLog {
 public:
  EventLog();
  uint64_t add(Payload payload, const Actor& author, std::optional<std::string> void_cause = {});
  uint64_t manifest(const Built& m, std::optional<std::string> void_cause = {});
  uint64_t observation(const Built& run, std::optional<std::string> void_cause = {});
  uint64_t rerun(const Digest& target, const Built& run, const Actor& runner,
                 std::optional<std::string> void_cause = {});
  uint64_t attestation(const Digest& target, AttestationType type,
                       std::optional<std::string> void_cause = {});
  uint64_t retract(const Digest& target, std::optional<std::string> void_cause = {});
  uint64_t supersede(const Digest& target, const Digest& replacement);
  uint64_t disqualify(const Digest& target, const std::string& source);

  const std::vector<ProjectedEvent>& events() const { return events_; }
  // What the events register (every event's ProjectedEvent::manifests).
  const ManifestLookup& manifests() const { return *manifests_; }
  size_t size() const { return events_.size(); }
  uint32_t tolerance_milli = 50;

 private:
  std::deque<EventBody> bodies_;  // stable addresses for ProjectedEvent::body
  std::vector<ProjectedEvent> events_;
  // What the events register, for folds that continue a stored state (every event points at
  // it: on the heap, so that it stays where it is when the log moves).
  std::unique_ptr<EventManifests> manifests_ = std::make_unique<EventManifests>();
};

// A small catalog: one protocol, environments on two GPUs (and B200 under another
// architecture name), one workload, implementations with and without available source.
struct World {
  Built protocol, env_b200, env_h100, env_b200_sm90, env_b200_v2, workload, impl_source, impl_plain;
  World();
  // A passed run of mean `mean` ns on `env`, using the other manifests of the world.
  RunSpec spec(const std::string& external_id, double mean, const Built* env = nullptr) const;
  Built run(const std::string& external_id, double mean, const Built* env = nullptr) const;
  // Manifest events for every manifest of the world.
  void register_all(EventLog& log) const;
};

// Folds events [from, to) into the store; REQUIREs every apply to succeed.
void fold(ProjectionStore& store, const EventLog& log, size_t from = 0, size_t to = SIZE_MAX);
MemoryProjectionStore fold_all(const EventLog& log);

// The full view of a run (read_run_view, with the manifests `log` registers); REQUIREs it to
// exist.
Json view_of(const ProjectionStore& store, const EventLog& log, const Digest& run);
// The registration of `digest` by an event that the store's projections cover, or nullopt.
std::optional<Registration> registration_of(const ProjectionStore& store, const EventLog& log,
                                            const Digest& digest);
// A member of a JSON object by dotted path, or null.
Json at(const Json& value, const std::string& dotted_path);

}  // namespace evl::test
