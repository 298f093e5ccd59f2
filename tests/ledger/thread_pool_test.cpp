#include "ledger/thread_pool.h"

#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>

namespace evl {
namespace {

// Runs `body` in a child process that may start no thread (RLIMIT_NPROC of 1, as user nobody
// when root, whom the limit does not bind); returns the child's exit status, or -1 when it
// did not exit (a crash, an abort).
int without_threads(int (*body)()) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::getuid() == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(90);
    }
    rlimit one{1, 1};
    if (::setrlimit(RLIMIT_NPROC, &one) != 0) _exit(91);
    _exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// 0 when a pool of either priority that could start no worker still does every item on the
// calling thread and says why it has no workers; another number names what failed.
int pool_without_workers() {
  if (start_thread([] {}, "a probe")) return 10;  // the limit does not hold here: no test
  for (auto priority : {PoolPriority::kNormal, PoolPriority::kBackground}) {
    ThreadPool pool(8, priority);
    if (pool.start_failure().find("started 0 of") == std::string::npos) return 2;
    if (pool.size() != 1) return 3;
    std::atomic<size_t> sum{0};
    pool.parallel_for(1000, [&](size_t i) { sum += i; });
    if (sum != 999 * 1000 / 2) return 4;
  }
  return 0;
}

int thread_that_cannot_start() {
  auto t = start_thread([] {}, "the test's thread");
  if (t) {
    t->join();
    return 10;
  }
  if (t.error().code() != Code::kIo) return 2;
  return t.error().message().find("cannot start the test's thread") == 0 ? 0 : 3;
}

// Checks that `body` returns 0 where no thread can start (and says so where one still can).
void check_without_threads(int (*body)()) {
  int rc = without_threads(body);
  if (rc == 10 || rc == 90 || rc == 91) {
    WARN("this system lets the test start threads under RLIMIT_NPROC 1; nothing to check");
    return;
  }
  CHECK(rc == 0);
}

TEST_CASE("a pool that the system lets start no thread works on the caller's thread and says so",
          "[ledger][thread_pool]") {
  check_without_threads(pool_without_workers);
}

TEST_CASE("start_thread returns an I/O error instead of throwing when no thread can start",
          "[ledger][thread_pool]") {
  check_without_threads(thread_that_cannot_start);
}

TEST_CASE("a pool never starts more than kMaxPoolThreads threads", "[ledger][thread_pool]") {
  ThreadPool pool(kMaxPoolThreads + 1000);
  CHECK(pool.size() <= kMaxPoolThreads);
  std::atomic<size_t> sum{0};
  pool.parallel_for(10000, [&](size_t i) { sum += i; });
  CHECK(sum == 9999 * 10000 / 2);
}

}  // namespace
}  // namespace evl
