#include "tools/server/metrics.h"

#include <cstdio>

namespace evl::server {
namespace {

std::vector<double> latency_bounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
          2.5, 5, 10};
}

std::vector<double> group_bounds() {
  std::vector<double> b;
  for (double v = 1; v <= 16384; v *= 2) b.push_back(v);
  return b;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void line(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + number(value) + "\n";
}

// A label value, escaped as the text format asks (policy names may hold '"' and '\\').
std::string label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

void help(std::string& out, const char* name, const char* type, const char* text) {
  out += std::string("# HELP ") + name + " " + text + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(value * 1e6), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void Histogram::render(std::string& out, const std::string& name,
                       const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    line(out, name + "_bucket", sep + "le=\"" + le + "\"", static_cast<double>(cumulative));
  }
  line(out, name + "_sum", labels, sum_micros_.load(std::memory_order_relaxed) / 1e6);
  line(out, name + "_count", labels, static_cast<double>(count_.load(std::memory_order_relaxed)));
}

Metrics::Metrics(std::vector<std::string> route_names, std::vector<std::string> witnesses)
    : routes_(std::move(route_names)),
      commit_entries_(group_bounds()),
      commit_seconds_(latency_bounds()),
      witnesses_(std::move(witnesses)),
      submissions_(std::make_unique<std::atomic<uint64_t>[]>(witnesses_.size() * kOutcomes)),
      publication_seconds_(latency_bounds()) {
  routes_.push_back("none");
  requests_ = std::make_unique<std::atomic<uint64_t>[]>(routes_.size() * (kStatuses.size() + 1));
  for (size_t i = 0; i < routes_.size(); ++i) {
    latency_.push_back(std::make_unique<Histogram>(latency_bounds()));
  }
}

size_t Metrics::status_slot(int status) {
  for (size_t i = 0; i < kStatuses.size(); ++i) {
    if (kStatuses[i] == status) return i;
  }
  return kOther;
}

void Metrics::record_request(size_t route, int status, std::chrono::nanoseconds latency) {
  if (route >= routes_.size()) route = routes_.size() - 1;
  requests_[route * (kStatuses.size() + 1) + status_slot(status)].fetch_add(
      1, std::memory_order_relaxed);
  latency_[route]->observe(std::chrono::duration<double>(latency).count());
}

void Metrics::record_commit(const CommitInfo& commit) {
  commits_.fetch_add(1, std::memory_order_relaxed);
  commit_entries_.observe(static_cast<double>(commit.entries));
  commit_seconds_.observe(std::chrono::duration<double>(commit.duration).count());
}

void Metrics::record_submission(size_t witness, SubmissionOutcome outcome) {
  if (witness >= witnesses_.size()) return;
  submissions_[witness * kOutcomes + static_cast<size_t>(outcome)].fetch_add(
      1, std::memory_order_relaxed);
}

void Metrics::record_publication_delay(std::chrono::nanoseconds delay) {
  publication_seconds_.observe(std::chrono::duration<double>(delay).count());
}

std::string Metrics::render(const Gauges& gauges) const {
  std::string out;
  out.reserve(16384);
  help(out, "evledger_http_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (size_t r = 0; r < routes_.size(); ++r) {
    for (size_t s = 0; s <= kStatuses.size(); ++s) {
      uint64_t n = requests_[r * (kStatuses.size() + 1) + s].load(std::memory_order_relaxed);
      if (n == 0) continue;
      std::string status = s < kStatuses.size() ? std::to_string(kStatuses[s]) : "other";
      line(out, "evledger_http_requests_total",
           "route=\"" + routes_[r] + "\",status=\"" + status + "\"", static_cast<double>(n));
    }
  }
  help(out, "evledger_http_request_duration_seconds", "histogram",
       "Time from a request's last byte read to its response handed to the socket.");
  for (size_t r = 0; r < routes_.size(); ++r) {
    latency_[r]->render(out, "evledger_http_request_duration_seconds",
                        "route=\"" + routes_[r] + "\"");
  }
  help(out, "evledger_http_connections", "gauge", "Open HTTP connections.");
  line(out, "evledger_http_connections", "", static_cast<double>(gauges.connections));
  if (gauges.witness_state) {
    help(out, "evledger_witness_cosigned_total", "counter",
         "Checkpoints this witness cosigned and stored.");
    line(out, "evledger_witness_cosigned_total", "",
         static_cast<double>(gauges.witness_state->stored));
    help(out, "evledger_witness_commits_total", "counter",
         "Durable commits of the witness's state (updates share them).");
    line(out, "evledger_witness_commits_total", "",
         static_cast<double>(gauges.witness_state->commits));
  }
  if (gauges.log) render_log(out, gauges);
  return out;
}

void Metrics::render_log(std::string& out, const Gauges& gauges) const {
  help(out, "evledger_http_overload_total", "counter",
       "Appends answered 503 because the append queue was full.");
  line(out, "evledger_http_overload_total", "", static_cast<double>(overloads_.load()));
  help(out, "evledger_append_queue_entries", "gauge", "Entries queued or being appended.");
  line(out, "evledger_append_queue_entries", "", static_cast<double>(gauges.queue_entries));
  help(out, "evledger_append_queue_capacity", "gauge", "The append queue's bound, in entries.");
  line(out, "evledger_append_queue_capacity", "", static_cast<double>(gauges.queue_capacity));
  help(out, "evledger_commits_total", "counter", "Durable commits made by this server's writer.");
  line(out, "evledger_commits_total", "", static_cast<double>(commits_.load()));
  help(out, "evledger_commit_entries", "histogram", "Entries appended per commit (group size).");
  commit_entries_.render(out, "evledger_commit_entries", "");
  help(out, "evledger_commit_duration_seconds", "histogram",
       "Time from a commit's transaction start to its durable end.");
  commit_seconds_.render(out, "evledger_commit_duration_seconds", "");
  help(out, "evledger_log_size", "gauge", "Entries in the log (its newest checkpoint's size).");
  line(out, "evledger_log_size", "", static_cast<double>(gauges.log_size));
  if (witnesses_.empty()) return;
  help(out, "evledger_witness_submissions_total", "counter",
       "add-checkpoint submissions to each witness of the policy, by outcome.");
  for (size_t w = 0; w < witnesses_.size(); ++w) {
    for (size_t o = 0; o < kOutcomes; ++o) {
      line(out, "evledger_witness_submissions_total",
           "witness=\"" + label_value(witnesses_[w]) + "\",outcome=\"" +
               std::string(submission_outcome_name(static_cast<SubmissionOutcome>(o))) + "\"",
           static_cast<double>(submissions_[w * kOutcomes + o].load(std::memory_order_relaxed)));
    }
  }
  help(out, "evledger_witness_publication_delay_seconds", "histogram",
       "Time from a commit to the publication of a witnessed checkpoint that covers it.");
  publication_seconds_.render(out, "evledger_witness_publication_delay_seconds", "");
  help(out, "evledger_witnessed_size", "gauge",
       "Entries in the published (witnessed) checkpoint; 0 before the first quorum.");
  line(out, "evledger_witnessed_size", "", static_cast<double>(gauges.witnessed_size.value_or(0)));
}

}  // namespace evl::server
