// tools/gen/sol_catalog.h — synthetic KernelIndex catalogs shaped like SOL-ExecBench's
// leaderboard, for tests, benchmarks and demos (`evledger gen`).
//
// A catalog is a stream of manifests in which every reference is the digest of a manifest of
// the same stream:
//   - BenchmarkProtocol per evaluation stack version (v1.0, v1.1) and ExecutionEnvironment per
//     GPU (NVIDIA B200 sm_100, NVIDIA H100 sm_90) and stack version; the B200 ones are exactly
//     the seed manifests' specs, so their digests equal the seeds';
//   - per benchmark (definitions such as "091_fused_gqa_qkv_rope_qk_norm_backward"): an
//     OperationSpec, and a WorkloadSuite of 4..24 cases (a single WorkloadCase for about one
//     benchmark in eight), each with spec.operationSpecDigest and spec.correctness;
//   - a SoftwareProject per team, and an ImplementationRevision per submission (with the
//     team's repository and a commit when the team publishes source, about 40% of teams);
//   - BenchmarkRuns, in observation order, with spec.sourceNative {source "sol-execbench",
//     benchmark, externalId, metrics {sol_score, latency_ms, avg_speedup, fast_1_count,
//     fast_1_total}} and spec.timing {latencyNs {mean}, primaryStatistic mean}.
// Metrics are consistent: per (benchmark, GPU, stack) there is a reference latency R and a
// speed-of-light bound S; a run's avg_speedup a (4 decimals) gives latency_ns = round(R / a),
// latency_ms = latency_ns / 1e6 and sol_score = min(1, S / latency_ns) (6 decimals).
// About 7% of runs do not pass (incorrect_numerical keeps its timing; runtime_error,
// compile_error and timeout have none), about 3% of passed runs tie an earlier run of their
// group exactly, and about one benchmark in ten has its workload manifest emitted only after
// its first two runs (a late manifest).
//
// Deterministic: the same options give the same manifests, byte for byte, on any machine (an
// integer PRNG and IEEE arithmetic only: no std distributions, no libm, no clock).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <functional>

#include "events/json.h"

namespace evl::gen {

struct SolCatalogOptions {
  uint64_t runs = 1000;  // BenchmarkRun manifests to generate
  uint64_t seed = 1;
};

struct SolCatalogStats {
  uint64_t manifests = 0;       // everything emitted
  uint64_t runs = 0;
  uint64_t benchmarks = 0;      // benchmarks with at least one manifest emitted
  uint64_t teams = 0;
  uint64_t non_passed = 0;      // runs whose status is not "passed"
  uint64_t ties = 0;            // passed runs whose latency equals an earlier run of the group
  uint64_t late_workloads = 0;  // workloads emitted after a run that references them
  uint64_t source_available = 0;  // implementations with repository and commit
};

// Calls `emit` once per manifest ({apiVersion, kind, metadata, spec}) in stream order.
SolCatalogStats generate_sol_catalog(const SolCatalogOptions& options,
                                     const std::function<void(const Json&)>& emit);

}  // namespace evl::gen
