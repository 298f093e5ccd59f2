// ledger/append_queue.h — a bounded queue in front of a ledger's single writer, for front ends
// that must never block on it (the HTTP server's POST /add-event).
//
// submit() queues a batch and returns at once: kQueued, or kFull when the entries queued and
// in flight would pass the bound (the server answers 503 with Retry-After; the publisher
// retries, which is safe because events are content-addressed), or kClosed once close() began.
// Worker threads take queued batches in order, as many as fit in one append call, so that
// many small requests share the ledger's group commits, and hand each batch its outcomes on
// the worker thread, after the durable commit: nothing is acknowledged before it is stored.
// With receipts, each stored entry also gets its C2SP tlog-proof of inclusion in the
// checkpoint of the commit that answered it (ledger/proofs.h, one snapshot per commit), unless
// its batch was submitted without: a publisher that keeps no receipts spares the server their
// cost (about a fifth of an import's CPU there).
//
// close() stops taking batches and returns once every queued batch was answered; the
// destructor closes. Every batch submitted with kQueued gets its `done` call exactly once.
//
// Thread safety: submit() and the counters may be called from any thread; `done` runs on a
// worker thread and must not call back into the queue's close() or destructor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "events/bytes.h"
#include "ledger/event_sink.h"
#include "ledger/ledger.h"

namespace evl {

struct AppendQueueOptions {
  size_t max_entries = 65536;      // entries queued or being appended; beyond it, kFull
  unsigned workers = 4;            // concurrent append calls (they share group commits)
  size_t max_call_entries = 4096;  // entries a worker takes into one append call
  bool receipts = true;            // make a tlog-proof receipt for every stored entry
};

// An entry's answer, with its receipt (ledger/event_sink.h).
using QueuedOutcome = SinkOutcome;

class AppendQueue {
 public:
  enum class Admission { kQueued, kFull, kClosed };
  using Done = std::function<void(std::vector<QueuedOutcome>)>;

  // `ledger` must outlive the queue.
  AppendQueue(Ledger& ledger, AppendQueueOptions options = {});
  ~AppendQueue();
  AppendQueue(const AppendQueue&) = delete;
  AppendQueue& operator=(const AppendQueue&) = delete;

  // `receipts` false: this batch's entries get no receipt even when the queue makes them.
  [[nodiscard]] Admission submit(std::vector<Bytes> batch, Done done, bool receipts = true);
  void close();

  size_t queued_entries() const { return entries_.load(std::memory_order_relaxed); }
  size_t capacity() const { return options_.max_entries; }

 private:
  struct Job {
    std::vector<Bytes> batch;
    Done done;
    bool receipts = true;
  };
  void work();
  void answer(std::vector<Job>& jobs, std::vector<AppendOutcome>& outcomes);

  Ledger& ledger_;
  AppendQueueOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool closed_ = false;
  std::atomic<size_t> entries_{0};
  std::vector<std::thread> workers_;
};

}  // namespace evl
