// ledger/thread_pool.h — a fixed pool of worker threads for data-parallel checks.
//
// parallel_for splits [0, n) into contiguous ranges, runs them on the workers and the calling
// thread, and returns when all are done. Used for signature verification before the writer and
// in the audit.
//
// Thread safety: parallel_for may be called from several threads; calls share the workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace evl {

class ThreadPool {
 public:
  // threads == 0: one per hardware thread (the caller counts as one).
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, n). fn must not throw. With fewer than `min_per_thread` items
  // per thread it uses fewer threads (all inline up to min_per_thread items): waking a worker costs
  // about one signature check, the default item. Give 1 when each item is a large share of work.
  void parallel_for(size_t n, const std::function<void(size_t)>& fn, size_t min_per_thread = 8);

  // parallel_for whose calling thread first runs `own` (other work, independent of fn's) while
  // the workers start on [0, n), then joins them on what is left. Without workers, `own` runs
  // first and then every fn(i). Neither may throw.
  void parallel_for_while(size_t n, const std::function<void(size_t)>& fn,
                          const std::function<void()>& own, size_t min_per_thread = 8);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace evl
