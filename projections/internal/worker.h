// projections/internal/worker.h — one job at a time on a thread of its own.
//
// A rebuild's SummingStore hashes the records written last on one while the fold goes on, and
// the projection hook frees a rebuild's last batch on one while the ledger commits. When no
// thread can be started (EAGAIN), each job runs inline in start(), so the work is done either
// way.
//
// Lifetimes: the destructor waits for the running job. Thread safety: start(), busy() and
// wait() from one thread at a time; a job must not call them.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

namespace evl {

class Worker {
 public:
  Worker() {
    try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error&) {  // EAGAIN: the jobs run inline
    }
  }
  ~Worker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts `job` once the previous one has finished.
  void start(std::function<void()> job) {
    wait();
    if (!thread_.joinable()) return job();
    {
      std::lock_guard lock(mu_);
      job_ = std::move(job);
    }
    wake_.notify_all();
  }
  // Whether a job is running (it may end right after).
  bool busy() {
    std::lock_guard lock(mu_);
    return static_cast<bool>(job_);
  }
  // Returns when no job is running.
  void wait() {
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return !job_; });
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || job_; });
      if (!job_) return;
      lock.unlock();
      job_();
      lock.lock();
      job_ = nullptr;
      done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::function<void()> job_;  // set while a job runs
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace evl
