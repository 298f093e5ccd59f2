// projections/internal/registry.h — the manifests registry: digest → first registration.
//
// The registry is not kept in the projection state: the log holds it. The ledger appends one
// event per manifest digest (its manifests index names it), and that event registers the
// manifest when the fold takes it (registered: prepared.h). What the fold reads of a registered
// manifest (its facts) and what a run's page shows of it (its summary: the members FORMAT.md
// lists per kind) are functions of the manifest, made here.
//
// Thread safety: pure functions; a ManifestLookup is read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "events/json.h"
#include "events/kernelindex.h"
#include "events/sha256.h"
#include "projections/manifests.h"

namespace evl {

// The summary of a manifest (apiVersion/kind/spec) and its metadata (an object, or null), as
// a JSON object; the fold writes its text with summarize_manifest() below.
Json manifest_summary(const Digest& digest, const Json& manifest, const Json& metadata);

// The facts a summary gives (an environment's GPU, members the manifest lacks reading as "";
// a workload's keys; an implementation's source availability).
ManifestFacts manifest_facts(const Json& summary);

// What the fold makes of a new manifest: jcs_serialize(manifest_summary(...)) and
// manifest_facts() of that summary, written without building the summary (the tests compare).
struct ManifestSummary {
  std::string text;
  ManifestFacts facts;
};
// Without `with_text`, only the facts (the text stays empty).
ManifestSummary summarize_manifest(const Digest& digest, const Json& manifest,
                                   const Json& metadata, bool with_text = true);

}  // namespace evl
