#include "ledger/append_queue.h"

#include <algorithm>


namespace evl {

AppendQueue::AppendQueue(Ledger& ledger, AppendQueueOptions options)
    : ledger_(ledger), options_(options) {
  const unsigned n = std::max(1u, options_.workers);
  for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
}

AppendQueue::~AppendQueue() { close(); }

AppendQueue::Admission AppendQueue::submit(std::vector<Bytes> batch, Done done, bool receipts) {
  const size_t n = batch.size();
  {
    std::lock_guard lock(mu_);
    if (closed_) return Admission::kClosed;
    // A batch larger than the whole bound is still taken into an empty queue: it can never
    // fit otherwise, and the front end bounds a request's size on its own.
    const size_t held = entries_.load(std::memory_order_relaxed);
    if (held > 0 && held + n > options_.max_entries) return Admission::kFull;
    entries_.fetch_add(n, std::memory_order_relaxed);
    jobs_.push_back({std::move(batch), std::move(done), receipts});
  }
  cv_.notify_one();
  return Admission::kQueued;
}

void AppendQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

void AppendQueue::work() {
  for (;;) {
    std::vector<Job> jobs;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closed_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // closed and drained
      size_t taken = 0;
      while (!jobs_.empty() &&
             (jobs.empty() || taken + jobs_.front().batch.size() <= options_.max_call_entries)) {
        taken += jobs_.front().batch.size();
        jobs.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
      if (!jobs_.empty()) cv_.notify_one();  // more for another worker
    }
    std::vector<Bytes> all;
    for (auto& job : jobs) {
      for (auto& entry : job.batch) all.push_back(std::move(entry));
    }
    std::vector<AppendOutcome> outcomes = ledger_.append(all);
    all.clear();
    answer(jobs, outcomes);
  }
}

void AppendQueue::answer(std::vector<Job>& jobs, std::vector<AppendOutcome>& outcomes) {
  std::vector<QueuedOutcome> results(outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) results[i].outcome = std::move(outcomes[i]);
  if (options_.receipts) {
    // One snapshot per commit for every entry whose batch wants receipts, proven in that
    // commit's checkpoint; the others are set aside meanwhile.
    std::vector<size_t> wanted;
    size_t at = 0;
    for (const auto& job : jobs) {
      for (size_t k = 0; job.receipts && k < job.batch.size(); ++k) wanted.push_back(at + k);
      at += job.batch.size();
    }
    if (wanted.size() == results.size()) {
      attach_receipts(ledger_, results);
    } else if (!wanted.empty()) {
      std::vector<QueuedOutcome> some;
      some.reserve(wanted.size());
      for (size_t i : wanted) some.push_back(std::move(results[i]));
      attach_receipts(ledger_, some);
      for (size_t k = 0; k < wanted.size(); ++k) results[wanted[k]] = std::move(some[k]);
    }
  }
  size_t at = 0;
  for (auto& job : jobs) {
    const size_t n = job.batch.size();
    std::vector<QueuedOutcome> mine(std::make_move_iterator(results.begin() + at),
                                    std::make_move_iterator(results.begin() + at + n));
    at += n;
    entries_.fetch_sub(n, std::memory_order_relaxed);
    if (job.done) job.done(std::move(mine));
  }
}

}  // namespace evl
