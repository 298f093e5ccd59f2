#include "ledger/append_queue.h"

#include <algorithm>

namespace evl {

AppendQueue::AppendQueue(Ledger& ledger, AppendQueueOptions options)
    : ledger_(ledger), options_(options) {
  const unsigned n = std::max(1u, options_.answer_threads);
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
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
    ++in_ledger_;
  }
  // Outside the lock: the ledger may answer on this thread (a ledger that takes no appends).
  ledger_.append_async(std::move(batch), [this, done = std::move(done), receipts](
                                             std::vector<AppendOutcome> outcomes) mutable {
    // Notified under the lock: once the last batch is answered, close() may return and the
    // queue be destroyed as soon as the lock is released.
    std::lock_guard lock(mu_);
    answered_.push_back({std::move(outcomes), std::move(done), receipts});
    --in_ledger_;
    cv_.notify_one();
  });
  return Admission::kQueued;
}

void AppendQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void AppendQueue::work() {
  for (;;) {
    std::vector<Answered> batches;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !answered_.empty() || (closed_ && in_ledger_ == 0); });
      if (answered_.empty()) {
        cv_.notify_all();  // closed and drained: the other threads end too
        return;
      }
      // All that is waiting, so that the batches of one commit share one snapshot's proofs.
      while (!answered_.empty()) {
        batches.push_back(std::move(answered_.front()));
        answered_.pop_front();
      }
    }
    answer(batches);
  }
}

void AppendQueue::answer(std::vector<Answered>& batches) {
  std::vector<QueuedOutcome> results;
  std::vector<size_t> wanted;  // the results that get receipts
  for (auto& batch : batches) {
    for (auto& outcome : batch.outcomes) {
      if (options_.receipts && batch.receipts) wanted.push_back(results.size());
      results.push_back({std::move(outcome), {}, {}});
    }
  }
  if (wanted.size() == results.size()) {
    attach_receipts(ledger_, results);
  } else if (!wanted.empty()) {
    // Proven apart, the others set aside meanwhile.
    std::vector<QueuedOutcome> some;
    some.reserve(wanted.size());
    for (size_t i : wanted) some.push_back(std::move(results[i]));
    attach_receipts(ledger_, some);
    for (size_t k = 0; k < wanted.size(); ++k) results[wanted[k]] = std::move(some[k]);
  }
  size_t at = 0;
  for (auto& batch : batches) {
    const size_t n = batch.outcomes.size();
    std::vector<QueuedOutcome> mine(std::make_move_iterator(results.begin() + at),
                                    std::make_move_iterator(results.begin() + at + n));
    at += n;
    entries_.fetch_sub(n, std::memory_order_relaxed);
    if (batch.done) batch.done(std::move(mine));
  }
}

}  // namespace evl
