// tools/gen/activity.h — synthetic activity against the observed runs of a ledger: controlled
// reruns, attestations and corrections, for tests, benchmarks and demos
// (`evledger gen --activity N`).
//
// What plan_activity makes, for a seed, the keys and the runs already in the ledger:
//   - controlled reruns (about 55%) of runs that passed with a latency, each by one of the
//     runner keys: confirming (latency within ±3% of the observed one), contradicting
//     (+15..30%), refuting (status incorrect_numerical) and on another GPU (inconclusive).
//     A rerun's manifest is a BenchmarkRun without spec.sourceNative that reuses the
//     observation's protocol, workload, implementation and environment digests; a rerun on
//     another GPU names a runner lab ExecutionEnvironment instead (NVIDIA H100 sm_90, or NVIDIA
//     B200 sm_100 for a run observed on an H100), registered first as a manifest event by the
//     first runner key. About a third of confirming reruns repeat a run that another runner
//     confirmed already, so that replications occur when runners differ in owner and host.
//     Half of the reruns carry per-case results. Every manifest passes check_manifest.
//   - attestations (about 38%) of all four types by the attestor keys, with text, an https
//     evidence URL, an observed latency and an environment summary where they fit;
//   - retractions (about 4%) and supersessions (about 3%: a later run of the same comparison
//     group replaces an earlier one) by the curator; a run is corrected at most once.
// Bodies are made by events/event_builder.h: a rerun claims its manifest's observedAt (hours
// to weeks after the observation); attestations and corrections claim a simulated clock that
// follows the observed runs, never the real one. The activity comes in claimed-time order
// after the manifests it needs. So the same seed, keys and observed runs give the same bodies,
// byte for byte: a second run finds them present.
//
// Thread safety: read_activity_subjects and plan_activity are pure functions of their inputs
// (the first reads one snapshot); append_activity runs its own thread pool and must be the
// only writer of its Ledger object's caller.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "events/event.h"
#include "events/kernelindex.h"
#include "keys/key.h"
#include "ledger/ledger.h"
#include "tools/cli.h"

namespace evl::gen {

// What the planner needs of one observation: a few members of its BenchmarkRun spec.
struct ObservedRun {
  Digest run{};                    // the manifest digest
  std::string name;                // metadata.name
  std::string status;              // spec.status
  std::string protocol, workload, environment, implementation;  // digest texts
  std::optional<PrimaryMeasurement> primary;
  int64_t observed_at_ms = 0;
  uint64_t cases = 0;  // spec.sourceNative.metrics.fast_1_total, or 0
  // The run's comparison group as the projections key it (its comparisonKey), or empty while
  // it has none (its workload manifest is not in the ledger). Supersessions stay in a group.
  std::string group;
};

struct ActivitySubjects {
  std::vector<ObservedRun> runs;                 // log order
  std::map<std::string, Hardware> environments;  // ExecutionEnvironment manifests by digest text
};

// The planner's view of an observation's manifest; nullopt when it is not a BenchmarkRun
// spec with its four digests.
std::optional<ObservedRun> observed_run(const ManifestText& manifest);

// The observations and ExecutionEnvironment manifests of the whole ledger, in one scan, and
// each run's group from the ledger's projections. Errors: the ledger's read errors; kCorrupt
// when a stored entry does not decode; kRejected when the projections do not cover the log
// (open the ledger for writing, or run 'evledger rebuild').
Result<ActivitySubjects> read_activity_subjects(const Ledger& ledger);

struct ActivityOptions {
  uint64_t events = 0;  // reruns + attestations + corrections
  uint64_t seed = 1;
  std::vector<KeyRef> runners;    // at least one
  std::vector<KeyRef> attestors;  // at least one
  KeyRef curator;
};

struct ActivityStats {
  uint64_t manifests = 0;  // lab environments registered
  uint64_t confirming = 0, contradicting = 0, refuting = 0, other_gpu = 0;
  uint64_t replications = 0;  // of the confirming: repeats of another runner's confirmation
  std::array<uint64_t, 4> attestations{};  // by AttestationType
  uint64_t retractions = 0, supersessions = 0;
};

struct ActivityPlan {
  std::vector<EventBody> events;  // author and claimed time set; unsigned
  ActivityStats stats;
};

// kRejected when the subjects hold no observed run, or a key list is empty.
Result<ActivityPlan> plan_activity(const ActivitySubjects& subjects,
                                   const ActivityOptions& options);

struct ActivityTotals {
  uint64_t added = 0, present = 0, rejected = 0;
  std::vector<std::string> problems;  // the first few rejections, "event N (kind): why"
};

// Signs each body with the key of its author (`keys` must hold every author) on a thread
// pool, and appends them `batch` at a time; `on_batch(done)` after each append. Rejections
// are counted, not fatal; a non-ok Status means a signing key is missing.
Result<ActivityTotals> append_activity(Ledger& ledger, std::span<const EventBody> bodies,
                                       const std::map<PublicKey, const SecretKey*>& keys,
                                       size_t batch,
                                       const std::function<void(uint64_t done)>& on_batch);

}  // namespace evl::gen

namespace evl::cli {

// `evledger gen --activity N ...`: reads the arguments, checks the keys' roles against the
// ledger's policy, plans, signs, appends and prints a summary. Returns the exit code.
int gen_activity(const Args& args);

}  // namespace evl::cli
