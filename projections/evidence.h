// projections/evidence.h — rerun verdicts, evidence levels and flags (DESIGN.md "Projections").
//
// Tolerance policy v1, with δ = tolerance_milli / 1000 from the genesis:
//   refuted       the rerun's status is not "passed";
//   pending       the GPU of the observation or of the rerun is not known yet (an environment
//                 manifest is not in the ledger); decided when it arrives;
//   inconclusive  the GPU product or architecture differs, or the two primary measurements are
//                 not the same metric/statistic/unit, or either has no value, or the observed
//                 value is not positive;
//   with r = rerun primary / observed primary:
//   confirmed     r ≤ 1 + δ;   contradicted  r > 1 + 2δ;   inconclusive  otherwise.
// The comparisons are exact: rerun·1000 ≤ observed·(1000 + tolerance_milli) in 128-bit integers
// when both values are integers below 2^53, in doubles (no accumulation) otherwise.
//
// Evidence (derived, never asserted; attestations never change it):
//   replicated    two confirming reruns by runners whose owners differ and whose hosts differ
//                 (a runner's key scope holds owner:<id> and host:<id>);
//   verified      one confirming rerun;
//   reproducible  the implementation's source is available, the workload, protocol,
//                 environment and implementation manifests are all in the ledger, and the run
//                 publishes raw evidence (logs or raw samples);
//   reported      otherwise.
// Void reruns never count. Flags, in this order: contradicted, refuted (from the verdicts of
// non-void reruns), retracted, superseded, disqualified (from non-void corrections that name
// the run as their target and are not ignored).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "events/kernelindex.h"
#include "projections/run_view.h"

namespace evl {

struct VerdictOutcome {
  Verdict verdict = Verdict::kPending;
  std::optional<double> ratio;
};

VerdictOutcome rerun_verdict(const std::string& rerun_status,
                             const std::optional<PrimaryMeasurement>& rerun,
                             const std::optional<Hardware>& rerun_hardware,
                             const std::optional<PrimaryMeasurement>& observed,
                             const std::optional<Hardware>& observed_hardware,
                             uint32_t tolerance_milli);

// Whether rerun ≤ observed · (1000 + milli) / 1000, exactly as documented above.
bool within_ratio(double rerun, double observed, uint64_t milli);

struct Confirmation {
  std::optional<std::string> owner;
  std::optional<std::string> host;
};

EvidenceLevel evidence_level(const std::vector<Confirmation>& confirmations, bool source_available,
                             bool identity_complete, bool raw_evidence);

// Recomputes every derived member of a view from its other members: the verdict of each
// rerun, the comparison key, missing references, evidence, flags and supersededBy.
void refresh_run_view(RunView& view);

// The ComparisonInputs of a view, once its workload manifest is known; whether it has them,
// without copying them.
std::optional<ComparisonInputs> view_comparison_inputs(const RunView& view);
bool has_comparison_inputs(const RunView& view);

}  // namespace evl
