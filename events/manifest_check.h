// events/manifest_check.h — is one KernelIndex manifest fit to enter the ledger, and as what?
//
// check_manifest applies the rules an importer needs before it signs anything (it is not a
// full JSON Schema validator; the rules, each with a stable id used in messages and tests):
//   object           the document is a JSON object
//   top-level        members are exactly apiVersion, kind, metadata, spec (anything else would
//                    silently drop out of the digest)
//   api-version      apiVersion is "kernelindex.dev/v1alpha1"
//   kind             kind is one of the eight KernelIndex benchmark kinds (kKinds). The serving
//                    kinds of KernelIndex's examples (ModelRevision, ServingRun, ...) are
//                    refused on purpose: no evledger projection reads them yet
//   metadata         metadata is an object
//   metadata-name    metadata.name is a string of 1..200 characters matching
//                    ^[a-z0-9][a-z0-9._-]*$ (the schemas' pattern)
//   spec             spec is an object
//   spec-required    spec has the members the kind's schema requires
//   spec-member      spec has no top-level member the kind's schema does not define
//   digest-format    every reference is "sha256:" + 64 lowercase hex digits: any member of spec,
//                    at any depth, whose key ends in "Digest" or is "digest" (artifacts,
//                    evidence), and every element of an array whose key ends in "Digests"
//   run-status       a BenchmarkRun's spec.status is one of kRunStatuses
//   observed-at      a BenchmarkRun's spec.observedAt is an RFC 3339 UTC time ("...Z")
//   source-slug      spec.sourceNative.source matches ^[a-z0-9][a-z0-9-]*$ (at most 100)
//   latency-ns       every spec.timing.latencyNs value is a whole number of nanoseconds: an
//                    integer 0..2^53-1, or a duration text ("159.785 us") that is whole in ns
//   primary-value    a BenchmarkRun's primary measurement (kernelindex.h primary_measurement,
//                    the value it is ranked and rerun by) is positive: 0, -0 or a negative
//                    value would rank first and confirm any rerun. A number that underflows
//                    to 0 (1e-999) never gets here: parse_json refuses it, as one that
//                    overflows
//   entry-size       the canonical text plus the metadata text fit in kMaxManifestTextBytes
//
// Every problem's message names the document (its index, where it was read, kind and
// metadata.name), the member, the rule and the fix, e.g.
//   document 4 (catalog.yaml line 30; WorkloadCase bad-digest-workload): spec.operationSpecDigest
//   is "md5:abc123" [digest-format]; a reference is "sha256:" followed by 64 lowercase hex
//   digits: write the referenced manifest's digest as evledger prints it
//
// Classification (DESIGN.md "Event kinds"): a BenchmarkRun with spec.sourceNative is an
// observation reported by source spec.sourceNative.source; a BenchmarkRun without it is only
// acceptable as a rerun's manifest; every other kind is a manifest event.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "events/json.h"
#include "events/sha256.h"

namespace evl {

inline constexpr std::string_view kManifestApiVersion = "kernelindex.dev/v1alpha1";

// An entry holds at most kMaxEntryBytes (65,535). The manifest's canonical text and its
// metadata text get all of it except kEntryOverheadBytes, which covers the Cap'n Proto framing
// of body and envelope, the author key, the claimed time and kMaxSignatures (16) signatures:
// about 255 bytes with one signature plus 112 per further signature (measured; see
// tests/events/manifest_check_test.cpp). So a manifest that passes can always be signed,
// co-signed to the limit and appended.
inline constexpr size_t kEntryOverheadBytes = 2048;
inline constexpr size_t kMaxManifestTextBytes = kMaxEntryBytes - kEntryOverheadBytes;

// The kinds evledger accepts, and BenchmarkRun's status enum, as the schemas list them.
std::span<const std::string_view> manifest_kinds();
std::span<const std::string_view> run_statuses();

enum class ManifestUse : uint8_t {
  kManifest,     // any kind but BenchmarkRun: a manifest event
  kObservation,  // BenchmarkRun with spec.sourceNative: an observation event
  kRerunOnly,    // BenchmarkRun without spec.sourceNative: only a rerun's manifest
};
const char* manifest_use_name(ManifestUse use);

struct ManifestProblem {
  std::string rule;     // the rule id listed above
  std::string message;  // the whole sentence: document, member, rule, fix
};

struct CheckedManifest {
  // "document 4 (catalog.yaml line 30; WorkloadCase bad-digest-workload)": how messages
  // name this document; callers use it for their own messages about it.
  std::string label;
  std::string kind;  // as given, or empty when it is not a string
  std::string name;  // metadata.name, or empty
  ManifestUse use = ManifestUse::kManifest;
  std::string source;          // kObservation: spec.sourceNative.source
  int64_t observed_at_ms = 0;  // BenchmarkRun: spec.observedAt in ms since the epoch, else 0
  // Filled only when problems is empty.
  ManifestText text;  // canonical: JCS of {apiVersion, kind, spec}; metadata: JCS of metadata
  Digest digest{};    // SHA-256 of text.canonical
  std::vector<ManifestProblem> problems;

  bool ok() const { return problems.empty(); }
};

// Checks one manifest. `index` numbers the document in its input (1-based by convention);
// `where` says where it was read ("catalog.jsonl line 17"), or is empty. Every problem found
// is listed, not only the first; text and digest are computed only when there is none.
CheckedManifest check_manifest(const Json& manifest, uint64_t index, std::string_view where = {});

// RFC 3339 "YYYY-MM-DDTHH:MM[:SS[.fraction]]Z" (the schema's observedAt pattern, calendar
// checked) to milliseconds since the epoch, the fraction truncated; nullopt when malformed.
std::optional<int64_t> parse_utc_time_ms(std::string_view text);

// A latencyNs value that is a whole number of nanoseconds, in ns: an integer 0..2^53-1 or a
// duration text ^\d+(\.\d+)?\s?(ns|us|µs|ms|s)$ whose value is whole in ns; nullopt otherwise.
// (events/kernelindex.h's latency_ns reads any latency; this is the stricter import rule.)
std::optional<uint64_t> whole_latency_ns(const Json& value);

}  // namespace evl
