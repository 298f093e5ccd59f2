// ledger/thread_pool.h — a fixed pool of worker threads for data-parallel checks.
//
// parallel_for hands out [0, n) in small blocks to the workers and the calling thread (a
// kBackground pool: the workers only), and returns when all are done. Used for signature
// verification before the writer and in the audit.
//
// A pool starts what the system lets it: when a thread cannot be started (std::system_error,
// e.g. RLIMIT_NPROC or memory for stacks), it keeps the workers it has, down to none (then the
// calling thread does all the work, whatever the priority), and says so in start_failure().
//
// Thread safety: parallel_for may be called from several threads; calls share the workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "events/status.h"

namespace evl {

// kBackground: the workers run at a lower scheduling priority (nice +10) and do all the work
// of a parallel call, while the calling thread, whose priority is not the pool's to change,
// only waits (inputs small enough to run inline still run on it). For checks that feed a
// thread of normal priority, such as the ledger's writer, which then gets a core as soon as it
// has work instead of sharing one with the checks and falling behind.
enum class PoolPriority { kNormal, kBackground };

// Starts `fn` on a thread of its own, or returns kIo naming `what` when the system will not
// start one (std::thread throws std::system_error: a limit on this user's threads, memory for
// a stack), so that callers report it instead of unwinding past threads they started.
Result<std::thread> start_thread(std::function<void()> fn, const std::string& what);

// The most threads a pool starts; more are not started (a bound for options such as
// `verify --threads`: beyond the cores, threads only wait for them).
inline constexpr unsigned kMaxPoolThreads = 1024;

class ThreadPool {
 public:
  // threads == 0: one per hardware thread (with kNormal, the caller counts as one); at most
  // kMaxPoolThreads. Never throws for threads the system cannot start (see above).
  explicit ThreadPool(unsigned threads = 0, PoolPriority priority = PoolPriority::kNormal);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The threads that work on one call.
  unsigned size() const {
    return static_cast<unsigned>(workers_.size()) + (caller_works_ ? 1u : 0u);
  }

  // Empty when every thread asked for started; otherwise how many did and why the next did not.
  const std::string& start_failure() const { return start_failure_; }

  // Calls fn(i) for every i in [0, n). fn must not throw. With fewer than `min_per_thread` items
  // per thread it uses fewer threads (all inline up to min_per_thread items): waking a worker costs
  // about one signature check, the default item. Give 1 when each item is a large share of work.
  void parallel_for(size_t n, const std::function<void(size_t)>& fn, size_t min_per_thread = 8);

  // parallel_for whose calling thread first runs `own` (other work, independent of fn's) while
  // the workers start on [0, n), then joins them on what is left. Without workers, `own` runs
  // first and then every fn(i). Neither may throw.
  void parallel_for_while(size_t n, const std::function<void(size_t)>& fn,
                          const std::function<void()>& own, size_t min_per_thread = 8);

  // Runs `task` on a worker and returns at once (on this thread, when the pool has no
  // workers). The task must not throw; the destructor runs every task posted before it.
  void post(std::function<void()> task);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  bool caller_works_ = true;
  std::vector<std::thread> workers_;
  std::string start_failure_;
};

}  // namespace evl
