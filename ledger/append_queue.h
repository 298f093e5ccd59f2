// ledger/append_queue.h — a bounded queue in front of a ledger's single writer, for front ends
// that must never block on it (the HTTP server's POST /add-event).
//
// submit() hands a batch to the ledger at once (Ledger::append_async: sequenced on arrival,
// checked on the ledger's pool, so that every request that arrives during a commit can join
// the next one) and returns: kQueued, or kFull when the entries queued and in flight would
// pass the bound (the server answers 503 with Retry-After; the publisher retries, which is
// safe because events are content-addressed), or kClosed once close() began. After the
// durable commit that answered it, each batch gets its outcomes on one of the queue's answer
// threads: nothing is acknowledged before it is stored. With receipts, each stored entry also
// gets its C2SP tlog-proof of inclusion in the checkpoint of the commit that answered it
// (ledger/proofs.h, one snapshot for all the batches answered together), unless its batch was
// submitted without: a publisher that keeps no receipts spares the server their cost (about a
// fifth of an import's CPU there).
//
// close() stops taking batches and returns once every queued batch was answered; the
// destructor closes. Every batch submitted with kQueued gets its `done` call exactly once.
//
// Thread safety: submit() and the counters may be called from any thread; `done` runs on an
// answer thread and must not call back into the queue's close() or destructor.
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
  size_t max_entries = 65536;  // entries queued or being appended; beyond it, kFull
  unsigned answer_threads = 2;  // threads that make receipts and call `done`
  bool receipts = true;         // make a tlog-proof receipt for every stored entry
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
  // A batch the ledger answered, waiting for an answer thread.
  struct Answered {
    std::vector<AppendOutcome> outcomes;
    Done done;
    bool receipts = true;
  };
  void work();
  void answer(std::vector<Answered>& batches);

  Ledger& ledger_;
  AppendQueueOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Answered> answered_;
  size_t in_ledger_ = 0;  // batches submitted and not answered by the ledger yet
  bool closed_ = false;
  std::atomic<size_t> entries_{0};
  std::vector<std::thread> threads_;
};

}  // namespace evl
