// projections/run_view.h — the stored view of one observed run, and its JSON codec.
//
// A RunView is everything the projections know about one run (an observation, named by its
// BenchmarkRun manifest's digest): what the manifest says, the referenced manifests once they
// are in the ledger, the reruns, attestations and corrections that name it, and what follows
// from them (keys, verdicts, evidence, flags). The group-derived fields (rank, tied, groupSize,
// leader) are not stored here: projections/query.h adds them when a view is read, because a
// new run would otherwise rewrite every view of its group.
//
// The stored form is the JCS text of run_view_json(); field names are DESIGN.md's. A view keeps
// only the facts it needs from the manifests it references (which are present, the GPU, the
// workload's keys, whether the source is available); projections/query.h adds their summaries
// when a view is read, made from the manifests in the log, so no summary is stored at all.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "events/json.h"
#include "events/kernelindex.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

enum class EvidenceLevel : uint8_t { kReported = 0, kReproducible, kVerified, kReplicated };
enum class Verdict : uint8_t { kPending = 0, kConfirmed, kContradicted, kInconclusive, kRefuted };
// Why a view has no rank (projections/FORMAT.md, "Eligible for ranking"), in this order: the
// first six make it ineligible; the last two leave it without a comparison group, the one
// while its workload manifest is not in the ledger, the other for lack of what the key needs.
enum class RankExclusion : uint8_t {
  kVoid,
  kStatus,          // a status other than passed
  kNoPrimary,       // no primary measurement
  kRetracted,
  kSuperseded,
  kDisqualified,
  kAwaitsWorkload,  // the workload manifest it names is not in the ledger
  kNoComparisonKey,
};

struct RerunRecord {
  uint64_t index = 0;
  Digest event{};
  Digest manifest{};                 // the rerun's BenchmarkRun manifest
  std::string runner;                // the author's key name
  std::optional<std::string> owner;  // the runner's scope entry owner:<id>
  std::optional<std::string> host;   // the runner's scope entry host:<id>
  std::string status;
  std::optional<PrimaryMeasurement> primary;
  std::string environment_digest;    // the rerun manifest's spec.environmentDigest
  std::optional<Hardware> hardware;  // once that environment is in the ledger
  uint32_t tolerance_milli = 50;     // δ × 1000, from the genesis
  std::string cases;
  std::optional<std::string> void_cause;
  // Derived by refresh_run_view.
  Verdict verdict = Verdict::kPending;
  std::optional<double> ratio;  // rerun primary / observed primary
};

struct AttestationRecord {
  uint64_t index = 0;
  Digest event{};
  std::string author;
  std::string type;  // attestation_type_name()
  std::string text;
  std::string evidence_url;
  uint64_t observed_ns = 0;
  std::string environment;
  std::optional<std::string> void_cause;
};

struct CorrectionRecord {
  uint64_t index = 0;
  Digest event{};
  std::string author;
  std::string kind;  // "retract", "supersede", "disqualify"
  std::string role;  // "target", or "replacement" on the new run of a supersede
  std::string reason;
  Digest target{};
  std::optional<Digest> replacement;  // supersede
  std::string source;                 // disqualify
  int64_t at_ms = 0;                  // disqualify
  std::optional<std::string> void_cause;
  std::optional<std::string>
      ignored;  // why it has no effect (a disqualification of another source)
};

struct HistoryItem {
  uint64_t index = 0;
  Digest event{};
  std::string kind;  // event_kind_name()
  std::optional<std::string> void_cause;
};

struct RunView {
  Digest run{};
  Digest event{};  // the observation that counts (or the first, void, one)
  uint64_t index = 0;
  std::optional<std::string> void_cause;
  // From the observed manifest; empty when absent.
  std::string name, title, benchmark, source, external_id, status, observed_at;
  std::string protocol_digest, environment_digest, workload_digest, implementation_digest;
  std::optional<PrimaryMeasurement> primary;
  SourceNativeMetrics source_native;
  Json correctness;                // spec.correctness, or null
  Json artifacts = Json::array();  // [{kind, uri, digest, raw} | {kind, repository, commit, raw}]
  // Facts from the referenced manifests, set when each is in the ledger.
  bool has_protocol = false, has_environment = false, has_workload = false,
       has_implementation = false;
  std::optional<Hardware> gpu;                                   // the environment's hardware
  std::optional<std::string> operation_digest, correctness_key;  // from the workload
  bool source_available = false;                                 // from the implementation
  std::vector<RerunRecord> reruns;
  std::vector<AttestationRecord> attestations;
  std::vector<CorrectionRecord> corrections;
  std::vector<HistoryItem> history;
  // Derived by refresh_run_view.
  std::optional<std::string> comparison_key;
  std::vector<std::string> missing;  // referenced digests not yet in the ledger, sorted
  EvidenceLevel evidence = EvidenceLevel::kReported;
  std::vector<std::string> flags;
  std::optional<Digest> superseded_by;
};

const char* evidence_level_name(EvidenceLevel level);
std::optional<EvidenceLevel> parse_evidence_level(std::string_view name);
const char* verdict_name(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view name);

// The stored JSON object (without rank, tied, groupSize, leader).
Json run_view_json(const RunView& view);
// The stored text: jcs_serialize(run_view_json(view)), written without building the object.
std::string run_view_text(const RunView& view);
// For a caller that encodes views one after another, long after the fold made them: asks the
// CPU to fetch into its cache what run_view_text will read, the view itself (the first) or the
// strings and lists it points to (the second, which reads the view). The views' strings are
// scattered over the heap, and the cache misses otherwise cost more than the encoding: a
// rebuild's 10^4 views encode 25% faster with the next ones fetched ahead.
void prefetch_run_view(const RunView& view);
void prefetch_run_view_contents(const RunView& view);
// Decodes a stored view; kCorrupt when the text is not one.
Result<RunView> parse_run_view(std::string_view text);
// Only the members named in `names` of a stored view, as a JSON object in the stored order:
// each named member's value is parsed, every other one is only stepped over (its strings and
// brackets matched, nothing decoded), for a listing that shows a few members of many views.
// A name the view lacks is absent. kCorrupt when the text is no JSON object.
Result<Json> parse_run_view_members(std::string_view text,
                                    std::span<const std::string_view> names);

Json primary_json(const std::optional<PrimaryMeasurement>& primary);

// The records as they appear in a view's lists (and in records kept for a run not yet seen).
Json rerun_record_json(const RerunRecord& record);
Json attestation_record_json(const AttestationRecord& record);
Json correction_record_json(const CorrectionRecord& record);
Result<RerunRecord> parse_rerun_record(const Json& json);
Result<AttestationRecord> parse_attestation_record(const Json& json);
Result<CorrectionRecord> parse_correction_record(const Json& json);

}  // namespace evl
