// events/kernelindex.h — the facts KernelIndex derives from manifests: a run's primary
// measurement, its source-native metrics, the correctness and comparison keys, a GPU's product
// and architecture, and whether an implementation's source is available.
//
// Every function reads a manifest's `spec` object (the member, not the whole manifest) and is
// total: a missing or mistyped field is an expected outcome and yields std::nullopt (or false),
// never an exception. Rules: DESIGN.md "KernelIndex manifests and digests".
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "events/json.h"
#include "events/sha256.h"

namespace evl {

struct PrimaryMeasurement {
  std::string metric;     // "latency" for spec.timing
  std::string statistic;  // timing.primaryStatistic, or the measurement's statistic
  std::string unit;       // "ns" for spec.timing
  double value = 0;
  friend bool operator==(const PrimaryMeasurement&, const PrimaryMeasurement&) = default;
};

// A BenchmarkRun's primary measurement. With spec.timing (and a string primaryStatistic):
// latency in ns, the value latencyNs.mean when the statistic is "mean", else latencyNs.median,
// falling back to the other of the two. When timing has neither usable value, or there is no
// timing: the first of spec.measurements, when it has string metric, statistic and unit and a
// numeric value. Otherwise nullopt.
std::optional<PrimaryMeasurement> primary_measurement(const Json& run_spec);

// A latency as the schema writes it, in nanoseconds: a non-negative number, or a string
// "<digits>[.<digits>][one whitespace](ns|us|µs|ms|s)" ("159.8 us", "1.75ms", "2 s"). The
// result is the correctly rounded double of the exact decimal value, so it is exact whenever
// the value is an integer number of ns below 2^53. nullopt for anything else.
std::optional<double> latency_ns(const Json& value);

// "<metric>:<statistic>:<unit>", or "none" without a primary measurement.
std::string comparison_metric(const std::optional<PrimaryMeasurement>& primary);

// SHA-256 of the JCS text of {"correctness": <workload spec.correctness>}; nullopt when the
// workload spec has no correctness member.
std::optional<Digest> correctness_key(const Json& workload_spec);

// What a comparison key covers. Strings are digests in text form ("sha256:<hex>") as the
// manifests carry them; metric is comparison_metric().
struct ComparisonInputs {
  std::string operation;    // workload spec.operationSpecDigest
  std::string workload;     // run spec.workloadDigest
  std::string protocol;     // run spec.protocolDigest
  std::string environment;  // run spec.environmentDigest
  std::string correctness;  // digest_text(correctness_key(workload spec))
  std::string metric;
  friend bool operator==(const ComparisonInputs&, const ComparisonInputs&) = default;
};

// {"v":1,"operation":..,"workload":..,"protocol":..,"environment":..,"correctness":..,
// "metric":..} as a Json object; its JCS text is what comparison_key hashes.
Json comparison_preimage(const ComparisonInputs& inputs);
// jcs_serialize(comparison_preimage(inputs)), written without building the object.
std::string comparison_preimage_text(const ComparisonInputs& inputs);
// SHA-256 of comparison_preimage_text(inputs).
Digest comparison_key(const ComparisonInputs& inputs);

// The inputs from a run spec and its workload's spec; nullopt when a member is missing (the
// run's four digests and the workload's operationSpecDigest must be strings, and the workload
// needs a correctness member).
std::optional<ComparisonInputs> comparison_inputs(const Json& run_spec, const Json& workload_spec);

// spec.sourceNative.metrics as the seed pages show them: SOL score (sol_score), speedup over
// the reference (avg_speedup), cases faster than the reference (fast_1_count of fast_1_total).
struct SourceNativeMetrics {
  std::optional<double> sol_score;
  std::optional<double> speedup;
  std::optional<double> cases_faster;
  std::optional<double> cases_total;
  friend bool operator==(const SourceNativeMetrics&, const SourceNativeMetrics&) = default;
};
SourceNativeMetrics source_native_metrics(const Json& run_spec);

// spec.hardware of an ExecutionEnvironment; nullopt unless product and architecture are
// strings (vendor is empty when absent).
struct Hardware {
  std::string vendor;
  std::string product;
  std::string architecture;
  friend bool operator==(const Hardware&, const Hardware&) = default;
};
std::optional<Hardware> environment_hardware(const Json& environment_spec);

// Whether an ImplementationRevision's source can be fetched: projectRevision has a repository
// and a commit; or source.contentDigest names a mirrored copy; or a build variant installs from
// a repository at a commit.
bool implementation_source_available(const Json& implementation_spec);

// The member at a dotted path of objects ("timing.latencyNs"), or nullptr.
const Json* json_path(const Json& value, std::string_view dotted_path);
// The string at a path, or nullopt when absent or not a string.
std::optional<std::string> json_string(const Json& value, std::string_view dotted_path);

}  // namespace evl
