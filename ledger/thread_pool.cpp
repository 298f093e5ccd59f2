#include "ledger/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <system_error>

#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

namespace evl {

namespace {

constexpr int kBackgroundNice = 10;  // added to the nice value the thread started with
constexpr int kLowestPriority = 19;  // the largest nice value Linux takes

// Lowers the calling thread's priority below the one it inherited (a process started under
// `nice` keeps its workers below its writer too): on Linux, nice values are per thread.
// Raising it back would need a privilege, so only threads that are the pool's own do this.
void lower_own_priority() {
  const auto self = static_cast<id_t>(::gettid());
  errno = 0;  // getpriority may return -1 as a value
  const int inherited = getpriority(PRIO_PROCESS, self);
  if (errno != 0) return;
  // A failure leaves the thread at normal priority, which only costs the writer its head start.
  (void)setpriority(PRIO_PROCESS, self, std::min(inherited + kBackgroundNice, kLowestPriority));
}

}  // namespace

Result<std::thread> start_thread(std::function<void()> fn, const std::string& what) {
  try {
    return std::thread(std::move(fn));
  } catch (const std::system_error& e) {
    return io_error("cannot start " + what + ": " + e.what() + "; the system limits the "
                    "threads of this user (ulimit -u) or of the machine, or is out of memory");
  }
}

ThreadPool::ThreadPool(unsigned threads, PoolPriority priority)
    : caller_works_(priority == PoolPriority::kNormal) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, kMaxPoolThreads);
  const unsigned workers = caller_works_ ? threads - 1 : threads;
  workers_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) {
    auto worker = start_thread([this, priority] {
      if (priority == PoolPriority::kBackground) lower_own_priority();
      run();
    }, "a worker thread");
    if (!worker) {
      // The started workers work on; the destructor joins them as usual.
      start_failure_ = "started " + std::to_string(i) + " of " + std::to_string(workers) +
                       " worker threads: " + worker.error().message();
      break;
    }
    workers_.push_back(std::move(*worker));
  }
  // Without workers, nobody but the caller would run a queued part.
  if (workers_.empty()) caller_works_ = true;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t)>& fn,
                              size_t min_per_thread) {
  parallel_for_while(n, fn, nullptr, min_per_thread);
}

void ThreadPool::parallel_for_while(size_t n, const std::function<void(size_t)>& fn,
                                    const std::function<void()>& own, size_t min_per_thread) {
  min_per_thread = std::max<size_t>(1, min_per_thread);
  // Small inputs run inline: waking a worker costs about one signature check.
  const size_t wanted = (n + min_per_thread - 1) / min_per_thread;
  const size_t parts = std::min<size_t>(size(), wanted);
  if (caller_works_ ? parts <= 1 : wanted <= 1) {
    if (own) own();
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Work is claimed in small blocks so that a slow part does not hold the others back.
  auto next = std::make_shared<std::atomic<size_t>>(0);
  const size_t block = std::min<size_t>(4, min_per_thread);
  auto work = [next, n, block, &fn] {
    for (;;) {
      size_t begin = next->fetch_add(block);
      if (begin >= n) return;
      size_t end = std::min(n, begin + block);
      for (size_t i = begin; i < end; ++i) fn(i);
    }
  };
  const size_t on_workers = caller_works_ ? parts - 1 : parts;
  std::latch done(static_cast<std::ptrdiff_t>(on_workers));
  {
    std::lock_guard lock(mu_);
    for (size_t p = 0; p < on_workers; ++p) {
      tasks_.emplace_back([&work, &done] {
        work();
        done.count_down();
      });
    }
  }
  cv_.notify_all();
  if (own) own();
  if (caller_works_) work();
  done.wait();
}

void ThreadPool::post(std::function<void()> task) {
  if (workers_.empty()) {
    task();
    return;
  }
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

}  // namespace evl
