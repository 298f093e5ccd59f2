// projections/manifests.h — a manifest's registration, as the fold and a run's page read it,
// and where they find the registrations the log holds (projections/internal/registry.h has
// how they are made; projections/ledger_hook.h's log_manifests() finds them in a ledger).
//
// Thread safety: value types; a ManifestLookup is read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "events/kernelindex.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

// What the fold reads of a registered manifest's summary when a run references it.
struct ManifestFacts {
  Hardware hardware;                                   // an environment's GPU
  std::optional<std::string> operation_spec_digest;    // a workload's
  std::optional<std::string> correctness_key;          // a workload's
  bool source_available = false;                       // an implementation's
  friend bool operator==(const ManifestFacts&, const ManifestFacts&) = default;
};

// A manifest's registration: the event that registered it, its facts and its summary.
struct Registration {
  uint64_t index = 0;        // the registering event's log index
  ManifestFacts facts;
  std::string summary_text;  // jcs_serialize(manifest_summary(...))
};

// Where the fold finds what the events before the state it holds registered, for a manifest
// digest it has not met in that state, and where a run's full view finds the summaries of the
// manifests it references: the log (the ledger's manifests index and the entry it names), or
// the events of a fold held in memory (EventManifests, projections/internal/prepared.h).
class ManifestLookup {
 public:
  virtual ~ManifestLookup() = default;
  // The registration of `digest` by the first event at an index below `before` that registers
  // it (registered() in projections/internal/prepared.h says which do), else nullopt.
  [[nodiscard]] virtual Result<std::optional<Registration>> registered(const Digest& digest,
                                                                      uint64_t before) const = 0;
};

}  // namespace evl
