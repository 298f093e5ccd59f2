// tools/server/metrics.h — the server's counters, rendered in Prometheus text format (0.0.4)
// at /metrics: requests by route and status, request latency histograms by route, append
// queue depth and 503s, commit group sizes and latency, the log's size; with a witness
// policy, submissions by witness and outcome and the publication delay (commit to a witnessed
// checkpoint that covers it). A witness server renders the HTTP part and its state's counts.
//
// Recording is a few relaxed atomic increments, cheap enough for every request.
//
// Thread safety: record_* from any thread; render() reads a consistent-enough picture (each
// counter is exact, counters are not read in one instant).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.h"
#include "ledger/witness_state.h"
#include "ledger/witnessing.h"

namespace evl::server {

class Histogram {
 public:
  // Upper bounds of the buckets, ascending; a last +Inf bucket is implied.
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Appends "<name>_bucket{<labels>le=...}" lines, _sum and _count.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<uint64_t> sum_micros_{0};
  std::atomic<uint64_t> count_{0};
};

struct Gauges {
  bool log = true;  // a log server: the append and commit lines; false for a witness
  std::optional<uint64_t> witnessed_size;        // the published witnessed checkpoint's size
  std::optional<WitnessStateStats> witness_state;  // a witness server's
  uint64_t log_size = 0;
  uint64_t queue_entries = 0;
  uint64_t queue_capacity = 0;
  uint64_t connections = 0;
};

class Metrics {
 public:
  // One label value per route, in the router's order; requests no route took count as
  // "none".
  // `witnesses`: the policy's witness names, in its order (serve --policy), for the
  // submission counters.
  explicit Metrics(std::vector<std::string> route_names, std::vector<std::string> witnesses = {});

  void record_request(size_t route, int status, std::chrono::nanoseconds latency);
  void record_commit(const CommitInfo& commit);
  void record_overload() { overloads_.fetch_add(1, std::memory_order_relaxed); }
  void record_submission(size_t witness, SubmissionOutcome outcome);
  void record_publication_delay(std::chrono::nanoseconds delay);

  std::string render(const Gauges& gauges) const;

 private:
  // The statuses counted one by one; any other falls into kOther.
  static constexpr std::array<int, 15> kStatuses = {200, 304, 400, 403, 404, 405, 408, 409,
                                                    413, 415, 422, 431, 500, 503, 504};
  static constexpr size_t kOther = kStatuses.size();
  static size_t status_slot(int status);
  void render_log(std::string& out, const Gauges& gauges) const;

  std::vector<std::string> routes_;  // plus "none" at the end
  std::unique_ptr<std::atomic<uint64_t>[]> requests_;  // routes × (statuses + 1)
  std::vector<std::unique_ptr<Histogram>> latency_;   // per route
  Histogram commit_entries_;
  Histogram commit_seconds_;
  static constexpr size_t kOutcomes = 4;  // SubmissionOutcome's values
  std::vector<std::string> witnesses_;
  std::unique_ptr<std::atomic<uint64_t>[]> submissions_;  // witnesses × outcomes
  Histogram publication_seconds_;
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> overloads_{0};
};

}  // namespace evl::server
