// projections/internal/registry.h — the manifests registry: digest → first registration.
//
// A record keeps the registering event and a summary of the manifest: the members that run
// views show and that the fold needs (FORMAT.md lists them per kind). The manifest itself stays
// in the log.
//
// Thread safety: pure functions over a store the caller owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "events/json.h"
#include "events/kernelindex.h"
#include "events/sha256.h"
#include "projections/store.h"

namespace evl {

struct ManifestRecord {
  Digest digest{};
  std::string kind;
  uint64_t index = 0;
  Digest event{};
  Json summary;  // {digest, kind, name?, title?, ...members of the kind}
  std::string summary_text;  // jcs_serialize(summary) when already known, else empty
};

// The summary of a manifest (apiVersion/kind/spec) and its metadata (an object, or null), as
// a JSON object; the fold writes its text with summarize_manifest() below.
Json manifest_summary(const Digest& digest, const Json& manifest, const Json& metadata);

// The GPU an environment's summary names; members the manifest lacks read as "".
Hardware summary_hardware(const Json& summary);

// What the fold reads of a registered manifest's summary when a run references it.
struct ManifestFacts {
  Hardware hardware;                                   // an environment's GPU
  std::optional<std::string> operation_spec_digest;    // a workload's
  std::optional<std::string> correctness_key;          // a workload's
  bool source_available = false;                       // an implementation's
  friend bool operator==(const ManifestFacts&, const ManifestFacts&) = default;
};
ManifestFacts manifest_facts(const Json& summary);

// Where the fold finds what the events before the state it holds registered, for a manifest
// digest it has not met in that state: the log (the ledger's manifests index and the entry it
// names), or the events of a fold held in memory (EventManifests, prepared.h).
class ManifestLookup {
 public:
  virtual ~ManifestLookup() = default;
  // The facts of `digest` when an event at an index below `before` registers it (the first
  // that does: registered_facts() in prepared.h says which do), else nullopt.
  [[nodiscard]] virtual Result<std::optional<ManifestFacts>> registered(const Digest& digest,
                                                                       uint64_t before) const = 0;
};

// What the fold makes of a new manifest: jcs_serialize(manifest_summary(...)) and
// manifest_facts() of that summary, written without building the summary (the tests compare).
struct ManifestSummary {
  std::string text;
  ManifestFacts facts;
};
ManifestSummary summarize_manifest(const Digest& digest, const Json& manifest,
                                   const Json& metadata);

Result<std::optional<ManifestRecord>> find_manifest(const ProjectionStore& store,
                                                    const Digest& digest);
// The stored form of a record (m/<digest>), and back; kCorrupt when the text is not one.
std::string manifest_record_text(const ManifestRecord& record);
Result<ManifestRecord> parse_manifest_record(const Digest& digest, std::string_view text);

}  // namespace evl
