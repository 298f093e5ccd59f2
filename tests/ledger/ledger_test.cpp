#include "ledger/ledger.h"

#include <lmdb.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "events/event_builder.h"
#include "keys/checkpoint.h"
#include "keys/signer.h"
#include "ledger/audit.h"
#include "ledger/thread_pool.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/raw_lmdb.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::Cast;
using test::TempDir;

using test::open_read_only;
using test::put_raw;
using test::read_raw;
using test::with_raw_db;
using test::write_raw;

std::unique_ptr<Ledger> open_ledger(const TempDir& dir, bool create = true,
                                    uint64_t map_size = 64ull << 30) {
  OpenOptions options;
  options.create = create;
  options.map_size = map_size;
  return test::open_test_ledger(dir, options);
}

std::vector<AppendOutcome> append(Ledger& ledger, std::vector<Bytes> entries) {
  return ledger.append(entries);
}

AppendOutcome append_one(Ledger& ledger, Bytes entry) {
  return append(ledger, {std::move(entry)}).at(0);
}

void append_prologue(Ledger& ledger, const Cast& cast) {
  test::append_all(ledger, cast.prologue_entries());
}

// Signed observations numbered first, first + 1, ... (their external ids).
std::vector<Bytes> observation_batch(const Cast& cast, int first, int n) {
  std::vector<Bytes> batch;
  for (int i = first; i < first + n; ++i) {
    batch.push_back(test::signed_entry(
        cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
  }
  return batch;
}

// The event id of entry `index` of a closed ledger.
Digest event_id_at(const TempDir& dir, uint64_t index) {
  auto entry = open_read_only(dir)->entry(index);
  REQUIRE(entry);
  auto checked = check_entry(*entry);
  REQUIRE(checked);
  return checked->id;
}

TEST_CASE("a pool's parallel_for_while visits every index once and runs the caller's own work "
          "once, on the calling thread",
          "[ledger][pool]") {
  for (unsigned threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    for (size_t n : {0, 1, 7, 1000}) {
      for (size_t min_per_thread : {1, 8}) {
        INFO(threads << " threads, " << n << " items, " << min_per_thread << " per thread");
        std::vector<std::atomic<int>> visits(n);
        std::atomic<int> own_runs{0};
        std::thread::id own_thread;
        pool.parallel_for_while(
            n, [&](size_t i) { ++visits[i]; },
            [&] {
              ++own_runs;
              own_thread = std::this_thread::get_id();
            },
            min_per_thread);
        CHECK(own_runs == 1);
        CHECK(own_thread == std::this_thread::get_id());
        for (size_t i = 0; i < n; ++i) CHECK(visits[i] == 1);
        std::atomic<size_t> total{0};
        pool.parallel_for(n, [&](size_t i) { total += i + 1; }, min_per_thread);
        CHECK(total == n * (n + 1) / 2);
      }
    }
  }
}

TEST_CASE("a background pool does the work on its own threads, at a lower priority, and runs "
          "small inputs on the caller",
          "[ledger][pool]") {
  for (unsigned threads : {1u, 2u, 3u}) {
    ThreadPool pool(threads, PoolPriority::kBackground);
    CHECK(pool.size() == threads);
    const int caller_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    std::vector<std::atomic<int>> visits(1000);
    std::atomic<int> on_caller{0}, at_normal_priority{0};
    const auto caller = std::this_thread::get_id();
    pool.parallel_for(visits.size(), [&](size_t i) {
      ++visits[i];
      if (std::this_thread::get_id() == caller) ++on_caller;
      if (getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) <= caller_nice) {
        ++at_normal_priority;
      }
    });
    for (auto& v : visits) CHECK(v == 1);
    CHECK(on_caller == 0);
    // Below the caller's priority, whatever it is (the suite may run under `nice`), unless the
    // caller already has the lowest there is.
    if (caller_nice < 19) CHECK(at_normal_priority == 0);
    // The caller's own priority is untouched.
    CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == caller_nice);
    // Up to min_per_thread items run inline: waking a worker would cost more.
    pool.parallel_for(3, [&](size_t) { on_caller += std::this_thread::get_id() == caller; });
    CHECK(on_caller == 3);
  }
}

TEST_CASE("a new ledger takes the genesis at index 0 and keeps it across reopening",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  {
    auto ledger = open_ledger(dir);
    CHECK(ledger->size() == 0);
    append_prologue(*ledger, cast);
    CHECK(ledger->size() == 5);
  }
  auto ledger = open_ledger(dir, false);
  CHECK(ledger->size() == 5);
  KeyPolicy policy = ledger->policy();
  REQUIRE(policy.genesis());
  CHECK(policy.genesis()->origin == std::string(test::kTestOrigin));
  REQUIRE(policy.find(cast.importer.public_key()) != nullptr);
  CHECK(policy.find(cast.importer.public_key())->has_role(Role::kImporter));
  auto entry = ledger->entry(0);
  REQUIRE(entry);
  CHECK(*entry == cast.prologue_entries()[0]);
}

TEST_CASE("appending the same event twice returns the first index and writes nothing",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  Bytes obs = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode"));
  auto first = append_one(*ledger, obs);
  REQUIRE(first.status.is_ok());
  CHECK(first.added);
  auto again = append(*ledger, {obs, obs});
  for (const auto& o : again) {
    CHECK(o.status.is_ok());
    CHECK_FALSE(o.added);
    CHECK(o.index == first.index);
  }
  CHECK(ledger->size() == first.index + 1);
  CHECK(ledger->id_count().value() == ledger->size());
}

TEST_CASE("a batch that appends nothing leaves the database file byte for byte as it was",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  SecretKey stranger = test::test_key("stranger.example.org", 0x77);
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  Bytes obs = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode"));
  REQUIRE(append_one(*ledger, obs).status.is_ok());
  const auto file = dir.path() / "db" / "data.mdb";
  const std::string before = test::read_file(file);
  // A stranger's event, one out of the importer's scope, and a duplicate: each claims its
  // id in the transaction and takes it back (or finds it present), so nothing is appended.
  auto out = append(*ledger, {test::signed_entry(stranger, test::attestation_body(
                                  stranger, test::test_digest("run"))),
                              test::signed_entry(cast.importer, test::observation_body(
                                  cast.importer, "flashinfer", "2")),
                              obs});
  CHECK(out[0].status.code() == Code::kDenied);
  CHECK(out[1].status.code() == Code::kDenied);
  CHECK_FALSE(out[2].added);
  CHECK(test::read_file(file) == before);
  // The writer goes on as before.
  auto next = append_one(*ledger, test::signed_entry(
      cast.importer, test::observation_body(cast.importer, "gpumode", "next")));
  REQUIRE(next.status.is_ok());
  CHECK(next.added);
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("the log admits no event claimed more than a year after its clock",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  const uint64_t size = ledger->size();
  auto late = append_one(*ledger, test::signed_entry(cast.attestor, test::attestation_body(
      cast.attestor, test::test_digest("run"), AttestationType::kReproduced, "from 2099", {}, 0, {},
      now + 2 * kMaxClaimAheadMs)));
  CHECK(late.status.code() == Code::kRejected);
  CHECK_THAT(late.status.message(), Catch::Contains("at most 366 days ahead"));
  CHECK(ledger->size() == size);
  // A month ahead (a skewed clock, a generated catalog) is admitted.
  auto skewed = append_one(*ledger, test::signed_entry(cast.attestor, test::attestation_body(
      cast.attestor, test::test_digest("run"), AttestationType::kReproduced, "skewed", {}, 0, {},
      now + 31LL * 24 * 3600 * 1000)));
  CHECK(skewed.status.is_ok());
}

TEST_CASE("a duplicate inside one batch takes the index of its first copy",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  Bytes a = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "1"));
  Bytes b = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "2"));
  auto out = append(*ledger, {a, b, a});
  CHECK(out[0].added);
  CHECK(out[1].added);
  CHECK_FALSE(out[2].added);
  CHECK(out[2].index == out[0].index);
  CHECK(out[1].index == out[0].index + 1);
}

TEST_CASE("rejected entries take no index and the rest of the batch stays dense",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  Bytes good1 = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "1"));
  Bytes out_of_scope =
      test::signed_entry(cast.importer, test::observation_body(cast.importer, "flashinfer", "2"));
  Bytes bad_sig = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "3"));
  bad_sig[bad_sig.size() - 1] ^= 0x01;  // the last byte belongs to the signature
  Bytes good2 = test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "4"));
  auto out = append(*ledger, {good1, out_of_scope, bad_sig, good2});
  REQUIRE(out[0].status.is_ok());
  CHECK(out[1].status.code() == Code::kDenied);  // the signer's scope, not the entry, is at fault
  CHECK_THAT(out[1].status.message(), Catch::Contains("importer.example.org") &&
                                          Catch::Contains("flashinfer") &&
                                          Catch::Contains("gpumode, sol-execbench"));
  CHECK(out[2].status.code() == Code::kRejected);
  CHECK_THAT(out[2].status.message(), Catch::Contains("does not verify"));
  REQUIRE(out[3].status.is_ok());
  CHECK(out[3].index == out[0].index + 1);
  CHECK(ledger->size() == out[3].index + 1);
  CHECK(ledger->id_count().value() == ledger->size());
}

TEST_CASE("a second genesis is rejected and changes nothing", "[ledger][policy]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  auto out = append_one(*ledger, test::signed_entry(
      cast.admin, test::genesis_body(cast.admin, cast.log.public_key(), {}, "other.example/log")));
  CHECK(out.status.code() == Code::kRejected);
  CHECK_THAT(out.status.message(), Catch::Contains("second genesis"));
  CHECK(ledger->size() == 5);
}

TEST_CASE("index 0 takes nothing but a genesis", "[ledger][policy]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  auto out = append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode")));
  CHECK(out.status.code() == Code::kRejected);
  CHECK_THAT(out.status.message(), Catch::Contains("index 0 must hold the genesis"));
  CHECK(ledger->size() == 0);
}

TEST_CASE("events by unknown or revoked keys are rejected with the key's name and the reason",
          "[ledger][policy]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  SecretKey stranger = test::test_key("stranger.example.org", 0x77);
  auto out = append_one(*ledger, test::signed_entry(stranger, test::attestation_body(stranger, test::test_digest("run"))));
  CHECK(out.status.code() == Code::kDenied);
  CHECK_THAT(out.status.message(), Catch::Contains("is not a key of this ledger"));

  auto before = append_one(*ledger, test::signed_entry(cast.attestor, test::attestation_body(cast.attestor, test::test_digest("run"), AttestationType::kReproduced, "before")));
  REQUIRE(before.status.is_ok());
  REQUIRE(append_one(*ledger, test::signed_entry(cast.admin, test::revoke_body(cast.admin, cast.attestor.public_key(), RevokeReason::kRetired))).status.is_ok());
  auto after = append_one(*ledger, test::signed_entry(cast.attestor, test::attestation_body(cast.attestor, test::test_digest("run"), AttestationType::kReproduced, "after")));
  CHECK(after.status.code() == Code::kDenied);
  CHECK_THAT(after.status.message(), Catch::Contains("attestor.example.org") &&
                                         Catch::Contains("was revoked at index") &&
                                         Catch::Contains("retired"));
  // Forward-only: the attestation before the revocation stands.
  CHECK(audit_ledger(*ledger).status.is_ok());
  CHECK_FALSE(ledger->policy().void_cause(cast.attestor.public_key(), before.index));
}

TEST_CASE("an entry over 65,535 bytes is rejected with the limit", "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  EventBody body = test::manifest_body(cast.importer, std::string(70000, 'x'));
  SignedEvent big;
  big.body = encode_body(body);
  big.signatures.push_back({cast.importer.public_key(),
                            cast.importer.sign(pae(kEventPayloadType, big.body))});
  auto out = append_one(*ledger, encode_entry(big));
  CHECK(out.status.code() == Code::kRejected);
  CHECK_THAT(out.status.message(), Catch::Contains("65535"));
  CHECK(ledger->size() == 5);
}

TEST_CASE("a ledger directory of an unknown format version is refused", "[ledger][open]") {
  TempDir dir;
  Cast cast;
  { append_prologue(*open_ledger(dir), cast); }
  with_raw_db(dir, "meta", [](MDB_txn* txn, MDB_dbi dbi) {
    put_raw(txn, dbi, std::string_view("format"), std::string_view("evledger-ledger-v99"));
  });
  OpenOptions options;
  options.dir = dir.str();
  auto ledger = Ledger::open(options);
  REQUIRE_FALSE(ledger);
  CHECK(ledger.error().code() == Code::kRejected);
  CHECK_THAT(ledger.error().message(), Catch::Contains("evledger-ledger-v99") &&
                                           Catch::Contains("evledger-ledger-v1"));
}

TEST_CASE("opening a directory without a ledger says how to create one", "[ledger][open]") {
  TempDir dir;
  OpenOptions options;
  options.dir = dir.str() + "/nothing-here";
  auto ledger = Ledger::open(options);
  REQUIRE_FALSE(ledger);
  CHECK(ledger.error().code() == Code::kIo);
  CHECK_THAT(ledger.error().message(), Catch::Contains("evledger init"));
}

TEST_CASE("only one writer may open a ledger; readers may open it alongside",
          "[ledger][open]") {
  TempDir dir;
  auto writer = open_ledger(dir);
  OpenOptions options;
  options.dir = dir.str();
  auto second = Ledger::open(options);
  REQUIRE_FALSE(second);
  CHECK_THAT(second.error().message(), Catch::Contains("open for writing by another process"));
  options.read_only = true;
  auto reader = Ledger::open(options);
  REQUIRE(reader);
  Cast cast;
  auto out = (*reader)->append(cast.prologue_entries());
  CHECK(out[0].status.code() == Code::kUsage);
}

TEST_CASE("concurrent appenders share commits and get dense, unique indices",
          "[ledger][append][concurrency]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::vector<uint64_t>> indices(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto body = test::observation_body(cast.importer, "gpumode",
                                           std::to_string(t * 1000 + i));
        auto o = append_one(*ledger, test::signed_entry(cast.importer, body));
        if (o.status.is_ok()) indices[t].push_back(o.index);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint64_t> all;
  for (const auto& v : indices) all.insert(v.begin(), v.end());
  CHECK(all.size() == kThreads * kPerThread);
  CHECK(*all.begin() == 5);
  CHECK(*all.rbegin() == 5 + kThreads * kPerThread - 1);
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("batches appended at once keep their entries together and in order, across the "
          "writer's steps and commits",
          "[ledger][append][concurrency]") {
  // The writer stages each batch's entries as the pool checks them and commits at most 16,384
  // in a transaction: batches of 3,000 with rejected entries inside, appended by four threads
  // at once, and one of 17,000.
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  const std::vector<int> sizes = {3000, 3000, 3000, 17000};
  std::vector<std::vector<Bytes>> batches;
  for (size_t b = 0, first = 0; b < sizes.size(); first += sizes[b], ++b) {
    batches.push_back(observation_batch(cast, static_cast<int>(first), sizes[b]));
    for (int i = 0; i < sizes[b]; ++i) {
      Bytes& entry = batches.back()[i];
      if ((static_cast<int>(first) + i) % 500 == 7) entry[entry.size() - 1] ^= 0x01;  // bad
    }
  }
  std::vector<std::vector<AppendOutcome>> outcomes(batches.size());
  std::vector<std::thread> threads;
  for (size_t b = 0; b < batches.size(); ++b) {
    threads.emplace_back([&, b] { outcomes[b] = ledger->append(batches[b]); });
  }
  for (auto& t : threads) t.join();
  uint64_t added = 0;
  std::set<uint64_t> all;
  for (size_t b = 0; b < batches.size(); ++b) {
    REQUIRE(outcomes[b].size() == batches[b].size());
    std::optional<uint64_t> previous;
    for (size_t i = 0; i < outcomes[b].size(); ++i) {
      const auto& o = outcomes[b][i];
      const int number = std::accumulate(sizes.begin(), sizes.begin() + b, 0) + static_cast<int>(i);
      if (number % 500 == 7) {
        CHECK(o.status.code() == Code::kRejected);
        CHECK_FALSE(o.added);
        continue;
      }
      REQUIRE(o.status.is_ok());
      CHECK(o.added);
      if (previous) CHECK(o.index == *previous + 1);  // the batch's entries are dense
      previous = o.index;
      all.insert(o.index);
      ++added;
    }
  }
  CHECK(all.size() == added);
  CHECK(*all.begin() == 5);
  CHECK(ledger->size() == 5 + added);
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("the writer never waits for checks that are already done, whatever the batch sizes",
          "[ledger][append][concurrency]") {
  // Batches of 1 to 400 entries, most of them already present (quick for the writer), so that
  // the writer waits for the last checks of nearly every batch while they finish: one thread
  // appending 250 of them, then three threads 40 each. A lost wake-up hangs here (ctest's
  // timeout fails it).
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  const std::vector<Bytes> entries = observation_batch(cast, 0, 1500);
  std::atomic<int> wrong{0};
  auto append_batches = [&](uint32_t seed, int batches) {
    std::mt19937 random(seed);
    for (int b = 0; b < batches; ++b) {
      const size_t n = 1 + random() % 400, from = random() % (entries.size() - n);
      for (const auto& o : ledger->append(std::span(entries).subspan(from, n))) {
        wrong += !o.status.is_ok();
      }
    }
  };
  append_batches(0, 250);
  std::vector<std::thread> threads;
  for (uint32_t t = 1; t <= 3; ++t) threads.emplace_back(append_batches, t, 40);
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(ledger->size() <= 5 + entries.size());
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("a batch appended once the one before is queued is sequenced after all of it",
          "[ledger][append][concurrency]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  auto batch_of = [&](int first, int n) { return observation_batch(cast, first, n); };
  // Each batch starts on its own thread as soon as the one before says it is queued, while
  // that one still waits for its commits.
  constexpr int kBatches = 6, kEach = 700;
  std::vector<std::vector<AppendOutcome>> outcomes(kBatches);
  std::vector<std::thread> threads;
  for (int b = 0; b < kBatches; ++b) {
    std::promise<void> queued;
    auto all_queued = queued.get_future();
    threads.emplace_back([&, b, batch = batch_of(b * kEach, kEach),
                          queued = std::move(queued)]() mutable {
      int calls = 0;
      outcomes[b] = ledger->append(batch, [&] {
        ++calls;
        queued.set_value();
      });
      CHECK(calls == 1);
    });
    all_queued.wait();
  }
  for (auto& t : threads) t.join();
  uint64_t next = 5;
  for (const auto& batch : outcomes) {
    REQUIRE(batch.size() == kEach);
    for (const auto& o : batch) {
      REQUIRE(o.status.is_ok());
      CHECK(o.index == next++);  // in batch order, each batch dense
    }
  }
  // An empty batch and a read-only ledger call it too (a caller waiting on it never hangs).
  int calls = 0;
  CHECK(ledger->append({}, [&] { ++calls; }).empty());
  ledger.reset();
  auto reader = open_read_only(dir);
  auto refused = reader->append(batch_of(0, 1), [&] { ++calls; });
  CHECK(refused.at(0).status.code() == Code::kUsage);
  CHECK(calls == 2);
}

// An append_async() batch's outcomes, and what the ledger's size was when they came.
struct AsyncAnswer {
  std::vector<AppendOutcome> outcomes;
  uint64_t size_then = 0;
  int calls = 0;
};

TEST_CASE("append_async answers each batch once, after the commit that stored it, in the order "
          "the calls sequenced them",
          "[ledger][append][async][concurrency]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  // Two threads, each calling in turn without waiting, batches of 1 to 9 entries; one entry in
  // ten repeats one stored before (answered with its first index).
  constexpr int kThreads = 2, kBatches = 150;
  std::vector<std::vector<AsyncAnswer>> answers(kThreads, std::vector<AsyncAnswer>(kBatches));
  std::vector<std::vector<size_t>> sizes(kThreads);
  std::atomic<int> answered{0};
  std::mutex mu;
  std::condition_variable all_answered;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        const int n = 1 + (b * 7 + t) % 9;
        std::vector<Bytes> batch = observation_batch(cast, t * 100000 + b * 10, n);
        if (b % 10 == 9) batch.push_back(observation_batch(cast, t * 100000, 1).at(0));
        sizes[t].push_back(batch.size());
        ledger->append_async(std::move(batch), [&, t, b](std::vector<AppendOutcome> outcomes) {
          AsyncAnswer& a = answers[t][b];
          a.outcomes = std::move(outcomes);
          a.size_then = ledger->size();
          ++a.calls;
          if (++answered == kThreads * kBatches) {
            std::lock_guard lock(mu);
            all_answered.notify_all();
          }
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  {
    std::unique_lock lock(mu);
    all_answered.wait(lock, [&] { return answered == kThreads * kBatches; });
  }
  std::set<uint64_t> added;
  for (int t = 0; t < kThreads; ++t) {
    uint64_t last = 0;
    for (int b = 0; b < kBatches; ++b) {
      const AsyncAnswer& a = answers[t][b];
      INFO("thread " << t << " batch " << b);
      CHECK(a.calls == 1);
      REQUIRE(a.outcomes.size() == sizes[t][b]);
      for (const AppendOutcome& o : a.outcomes) {
        REQUIRE(o.status.is_ok());
        CHECK(o.tree_size > o.index);     // in the checkpoint of the commit that answered it
        CHECK(a.size_then >= o.tree_size);  // which was committed before the answer
        if (!o.added) {
          CHECK(o.index == answers[t][0].outcomes[0].index);  // the first copy's index
          continue;
        }
        CHECK(o.index > last);  // one thread's batches in the order it sequenced them
        last = o.index;
        CHECK(added.insert(o.index).second);
      }
    }
  }
  CHECK(added.size() == ledger->size() - 5);  // dense: every index stored was answered
  CHECK(*added.rbegin() == ledger->size() - 1);
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("append_async answers at once when the ledger takes no appends, and every batch in "
          "flight before the ledger closes",
          "[ledger][append][async]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  // In flight when the ledger is closed: each is still checked, committed and answered.
  std::atomic<int> answered{0}, stored{0};
  for (int b = 0; b < 40; ++b) {
    ledger->append_async(observation_batch(cast, b * 10, 10),
                         [&](std::vector<AppendOutcome> outcomes) {
                           for (const auto& o : outcomes) stored += o.status.is_ok() && o.added;
                           ++answered;
                         });
  }
  ledger.reset();
  CHECK(answered == 40);
  CHECK(stored == 400);
  CHECK(open_read_only(dir)->size() == 405);
  // An empty batch, and a read-only ledger: answered on the calling thread, before returning.
  auto reader = open_read_only(dir);
  int calls = 0;
  reader->append_async(observation_batch(cast, 5000, 2), [&](std::vector<AppendOutcome> o) {
    REQUIRE(o.size() == 2);
    CHECK(o[0].status.code() == Code::kUsage);
    ++calls;
  });
  reader->append_async({}, [&](std::vector<AppendOutcome> o) {
    CHECK(o.empty());
    ++calls;
  });
  CHECK(calls == 2);
}

// Records what the ledger hands a hook: prepare() on the checking threads, its result back at
// on_entry() on the writer.
class PreparingHook final : public AppendHook {
 public:
  struct Prepared final : PreparedEntry {
    Digest author{};
  };
  std::unique_ptr<PreparedEntry> prepare(const EventBody& body,
                                         const Digest*) const override {
    ++prepared_;
    auto p = std::make_unique<Prepared>();
    std::copy(body.author.begin(), body.author.end(), p->author.begin());
    return p;
  }
  void begin_transaction() override {}
  Status on_entry(AppendContext& context, uint64_t index, const Digest&, const EventBody& body,
                  PreparedEntry* prepared) override {
    const auto* p = dynamic_cast<Prepared*>(prepared);
    if (p == nullptr || !std::equal(body.author.begin(), body.author.end(), p->author.begin())) {
      return corrupt("entry " + std::to_string(index) + " came without its own preparation");
    }
    ++handed_;
    return context.store.put("next", std::to_string(index + 1));
  }
  Status rebuild(AppendContext& context, uint64_t size) override {
    return context.store.put("next", std::to_string(size));
  }
  Result<uint64_t> applied_size(const KeyValueStore& store) const override {
    auto next = store.get("next");
    if (!next) return next.error();
    return *next ? std::stoull(**next) : 0;
  }
  Result<std::string> seal(AppendContext&, std::string_view origin, uint64_t size) override {
    return std::string(origin) + " " + std::to_string(size) + "\n";
  }
  mutable std::atomic<int> prepared_{0};
  int handed_ = 0;
};

TEST_CASE("a hook gets back at each entry what it prepared for it on the checking threads",
          "[ledger][append][hook]") {
  TempDir dir;
  Cast cast;
  auto hook = std::make_shared<PreparingHook>();
  OpenOptions options;
  options.create = true;
  options.hook = hook;
  auto ledger = test::open_test_ledger(dir, options);
  append_prologue(*ledger, cast);
  std::vector<Bytes> batch;
  for (int i = 0; i < 300; ++i) {
    batch.push_back(test::signed_entry(
        cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
  }
  test::append_all(*ledger, batch);
  CHECK(hook->handed_ == 5 + 300);  // the prologue (genesis and grants) and the batch
  CHECK(hook->prepared_ >= hook->handed_);
}

TEST_CASE("entries of every size around LMDB's overflow threshold read back byte for byte",
          "[ledger][append]") {
  // Entries too big to share a leaf (about 2 KiB and up) are read with pread() from the data
  // file instead of through the map (LedgerImpl::read_out): both kinds, and the boundary, must
  // read back exactly, from a ledger being written to and after reopening.
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  auto manifest = [&](size_t pad) {
    return test::signed_entry(cast.importer,
                              test::manifest_body(cast.importer, "{\"n\":" + std::to_string(pad) +
                                                                     ",\"pad\":\"" +
                                                                     std::string(pad, 'p') + "\"}"));
  };
  std::vector<Bytes> batch;
  std::set<size_t> sizes;
  for (size_t pad = 1700; pad <= 2100; ++pad) {
    Bytes entry = manifest(pad);
    if (sizes.insert(entry.size()).second) batch.push_back(std::move(entry));
  }
  for (size_t pad : {4000, 16000, 60000}) batch.push_back(manifest(pad));
  REQUIRE(sizes.count(2016) + sizes.count(2024) == 2);  // both sides of the threshold
  test::append_all(*ledger, batch);
  auto read_back = [&](const Ledger& l) {
    size_t seen = 0;
    Status s = l.scan(5, 5 + batch.size(), [&](uint64_t index, ByteView bytes) {
      CHECK(Bytes(bytes.begin(), bytes.end()) == batch.at(index - 5));
      ++seen;
      return Status::ok();
    });
    CHECK(s.is_ok());
    CHECK(seen == batch.size());
  };
  read_back(*ledger);
  REQUIRE(append_one(*ledger, manifest(3000)).status.is_ok());
  read_back(*ledger);
  CHECK(audit_ledger(*ledger).status.is_ok());
  ledger.reset();
  read_back(*open_read_only(dir));
}

TEST_CASE("the map grows when it is full and nothing is lost", "[ledger][append]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir, true, 1 << 20);  // 1 MiB: full after a few hundred entries
  append_prologue(*ledger, cast);
  std::vector<Bytes> batch;
  for (int i = 0; i < 3000; ++i) {
    batch.push_back(test::signed_entry(
        cast.importer, test::manifest_body(cast.importer, "{\"n\":" + std::to_string(i) + ",\"pad\":\"" + std::string(400, 'p') + "\"}")));
  }
  test::append_all(*ledger, batch);
  CHECK(ledger->size() == 3005);
  CHECK(audit_ledger(*ledger).status.is_ok());
}

// Manifests of about 600 bytes, numbered from `first`.
std::vector<Bytes> padded_manifests(const Cast& cast, int first, int n) {
  std::vector<Bytes> batch;
  for (int i = first; i < first + n; ++i) {
    batch.push_back(test::signed_entry(
        cast.importer, test::manifest_body(cast.importer, "{\"n\":" + std::to_string(i) +
                                                              ",\"pad\":\"" +
                                                              std::string(400, 'p') + "\"}")));
  }
  return batch;
}

// The outcomes from the first one that is not ok: every one of them commit_failed, none ok.
// Returns the position of the first failure (outcomes.size() when none failed).
size_t check_nothing_stored_after_failure(const std::vector<AppendOutcome>& outcomes) {
  size_t first = 0;
  while (first < outcomes.size() && outcomes[first].status.is_ok()) ++first;
  for (size_t i = first; i < outcomes.size(); ++i) {
    INFO("outcome " << i << " of " << outcomes.size() << ", first failure " << first);
    REQUIRE_FALSE(outcomes[i].status.is_ok());
    REQUIRE(outcomes[i].commit_failed);
  }
  return first;
}

// This process's virtual size (VmSize), in bytes.
uint64_t virtual_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

TEST_CASE("a map that cannot grow fails the commit naming the limit, and reads go on",
          "[ledger][append][disk]") {
  if (std::getenv("EVLEDGER_SANITIZER") != nullptr) {
    WARN("skipped: an address-space limit cannot hold a sanitizer's shadow memory");
    return;
  }
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir, true, 4 << 20);  // a 4 MiB map, full after about 5,000 entries
  append_prologue(*ledger, cast);
  // A first append starts the writer's and the checks' threads (and their malloc arenas), so
  // that the limit below bounds the map's growth and little else.
  test::append_all(*ledger, padded_manifests(cast, 0, 200));
  const std::vector<Bytes> batch = padded_manifests(cast, 1000, 12000);
  struct rlimit old;
  REQUIRE(::getrlimit(RLIMIT_AS, &old) == 0);
  // 3 MiB more than now: the 8 MiB map the growth needs does not fit. Batches of 500, so that
  // what an append allocates is freed for the next (a heap that grows would meet the limit).
  struct rlimit tight = old;
  tight.rlim_cur = virtual_size() + (3 << 20);
  REQUIRE(::setrlimit(RLIMIT_AS, &tight) == 0);
  size_t stored = 0;
  std::vector<AppendOutcome> out;
  while (stored < batch.size()) {
    out = ledger->append(std::span(batch).subspan(stored, 500));
    if (!out.back().status.is_ok()) break;
    stored += out.size();
  }
  REQUIRE(::setrlimit(RLIMIT_AS, &old) == 0);

  REQUIRE(stored < batch.size());
  const size_t failed_at = check_nothing_stored_after_failure(out);
  stored += failed_at;
  CHECK(out[failed_at].status.code() == Code::kIo);
  CHECK_THAT(out[failed_at].status.message(),
             Catch::Contains("cannot grow the LMDB map of " + dir.str() + "/db from 4194304 to "
                             "8388608 bytes: this process may not map that much address space") &&
                 Catch::Contains("ulimit -v is") && Catch::Contains("raise the limit"));
  // The environment keeps its map: reads go on, and the log is what was committed.
  CHECK(ledger->size() == 205 + stored);
  REQUIRE(stored > 0);
  CHECK(ledger->entry(204 + stored).value() == batch[stored - 1]);
  CHECK(audit_ledger(*ledger).status.is_ok());
  ledger.reset();

  // Without the limit the same batch goes in whole, after what the first try stored.
  ledger = open_ledger(dir, false, 4 << 20);
  auto again = ledger->append(batch);
  for (size_t i = 0; i < again.size(); ++i) {
    INFO("entry " << i << ", " << stored << " stored before");
    REQUIRE(again[i].status.is_ok());
    CHECK(again[i].index == 205 + i);
    CHECK(again[i].added == (i >= stored));
  }
  CHECK(audit_ledger(*ledger).status.is_ok());
}

TEST_CASE("a full disk fails a commit naming the disk, and nothing queued after it is stored",
          "[ledger][append][disk]") {
  test::SmallDisk disk(3 << 20);
  if (!disk.mounted()) {
    WARN("skipped: " << disk.why_not());
    return;
  }
  Cast cast;
  const std::string dir = (disk.path() / "L").string();
  OpenOptions options;
  options.dir = dir;
  options.create = true;
  options.log_key = test::test_log_key();
  auto opened = Ledger::open(options);
  REQUIRE_OK(opened);
  auto& ledger = **opened;
  append_prologue(ledger, cast);
  // One batch far larger than the disk, and a second caller's batch queued behind it.
  const std::vector<Bytes> first = padded_manifests(cast, 0, 12000);
  const std::vector<Bytes> second = padded_manifests(cast, 20000, 3000);
  std::promise<void> first_queued;
  std::vector<AppendOutcome> second_out;
  std::thread behind([&] {
    first_queued.get_future().wait();
    second_out = ledger.append(second);
  });
  // And an append_async() batch queued behind both.
  std::promise<std::vector<AppendOutcome>> async_out;
  auto first_out = ledger.append(first, [&] {
    first_queued.set_value();
    ledger.append_async(padded_manifests(cast, 25000, 50), [&](std::vector<AppendOutcome> o) {
      async_out.set_value(std::move(o));
    });
  });
  behind.join();
  const std::vector<AppendOutcome> async_failed = async_out.get_future().get();

  const size_t failed_at = check_nothing_stored_after_failure(first_out);
  REQUIRE(failed_at < first.size());
  const Status& cause = first_out[failed_at].status;
  CHECK(cause.code() == Code::kIo);
  CHECK_THAT(cause.message(), Catch::Contains("the disk is full") && Catch::Contains(dir + "/db") &&
                                  Catch::Contains("free space"));
  CHECK(check_nothing_stored_after_failure(second_out) == 0);
  CHECK(check_nothing_stored_after_failure(async_failed) == 0);
  CHECK_THAT(async_failed.back().status.message(),
             Catch::StartsWith("not stored because an earlier commit failed: "));
  CHECK_THAT(second_out.back().status.message(),
             Catch::StartsWith("not stored because an earlier commit failed: ") &&
                 Catch::Contains("the disk is full"));
  // A later append is refused the same way, unchecked and unqueued.
  auto later = ledger.append(padded_manifests(cast, 30000, 1));
  CHECK(later.at(0).commit_failed);
  CHECK_THAT(later.at(0).status.message(), Catch::Contains("the disk is full"));
  CHECK(ledger.size() == 5 + failed_at);
  opened->reset();

  // What was committed is the input's prefix, in order, and audits clean.
  OpenOptions reading;
  reading.dir = dir;
  reading.read_only = true;
  auto reader = Ledger::open(reading);
  REQUIRE_OK(reader);
  REQUIRE((*reader)->size() == 5 + failed_at);
  for (size_t i = 0; i < failed_at; i += 97) {
    CHECK((*reader)->entry(5 + i).value() == first[i]);
  }
  CHECK(audit_ledger(**reader).status.is_ok());
}

TEST_CASE("a killed appender never leaves half an entry and loses nothing acknowledged",
          "[ledger][crash]") {
  TempDir dir;
  Cast cast;
  { append_prologue(*open_ledger(dir), cast); }
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    OpenOptions options;
    options.dir = dir.str();
    options.log_key = test::test_log_key();
    auto ledger = Ledger::open(options);
    if (!ledger) ::_exit(3);
    for (uint64_t i = 0;; ++i) {
      std::vector<Bytes> batch;
      for (int j = 0; j < 50; ++j) {
        batch.push_back(test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i * 50 + j))));
      }
      uint64_t last = 0;
      for (const auto& o : (*ledger)->append(batch)) {
        if (!o.status.is_ok()) ::_exit(4);
        last = o.index;
      }
      // Acknowledged: tell the parent the highest index that is durable.
      if (::write(pipe_fds[1], &last, sizeof last) != sizeof last) ::_exit(5);
    }
  }
  ::close(pipe_fds[1]);
  uint64_t acknowledged = 0, value = 0;
  for (int reads = 0; reads < 20 && ::read(pipe_fds[0], &value, sizeof value) == sizeof value;
       ++reads) {
    acknowledged = value;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  while (::read(pipe_fds[0], &value, sizeof value) == sizeof value) acknowledged = value;
  ::close(pipe_fds[0]);
  REQUIRE(acknowledged > 5);

  auto ledger = open_ledger(dir, false);
  CHECK(ledger->size() > acknowledged);
  AuditReport report = audit_ledger(*ledger);
  CHECK(report.status.is_ok());
  CHECK(report.entries == ledger->size());
}

TEST_CASE("the audit names the index of a tampered entry", "[ledger][audit][tamper]") {
  TempDir dir;
  Cast cast;
  {
    auto ledger = open_ledger(dir);
    append_prologue(*ledger, cast);
    for (int i = 0; i < 10; ++i) {
      REQUIRE(append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i)))).status.is_ok());
    }
  }
  SECTION("a flipped byte in an entry's body") {
    with_raw_db(dir, "entries", [](MDB_txn* txn, MDB_dbi dbi) {
      Bytes e = read_raw(txn, dbi, 9);
      e[e.size() / 2] ^= 0x20;
      write_raw(txn, dbi, 9, e);
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    REQUIRE(report.failed_index);
    CHECK(*report.failed_index == 9);
  }
  SECTION("two entries swapped") {
    with_raw_db(dir, "entries", [](MDB_txn* txn, MDB_dbi dbi) {
      Bytes a = read_raw(txn, dbi, 7), b = read_raw(txn, dbi, 8);
      write_raw(txn, dbi, 7, b);
      write_raw(txn, dbi, 8, a);
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    REQUIRE(report.failed_index);
    CHECK(*report.failed_index == 7);
    CHECK_THAT(report.status.message(), Catch::Contains("stored tree hash of node (level 0, 7)"));
  }
  SECTION("two id records swapped") {
    Digest id7 = event_id_at(dir, 7), id8 = event_id_at(dir, 8);
    with_raw_db(dir, "ids", [&](MDB_txn* txn, MDB_dbi dbi) {
      put_raw(txn, dbi, id7, u64_be(8));
      put_raw(txn, dbi, id8, u64_be(7));
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    REQUIRE(report.failed_index);
    CHECK((*report.failed_index == 7 || *report.failed_index == 8));
    CHECK_THAT(report.status.message(), Catch::Contains("the id index says event"));
  }
  SECTION("an id record removed") {
    Digest id5 = event_id_at(dir, 5);
    with_raw_db(dir, "ids", [&](MDB_txn* txn, MDB_dbi dbi) {
      MDB_val k{id5.size(), id5.data()};
      REQUIRE(mdb_del(txn, dbi, &k, nullptr) == 0);
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    REQUIRE(report.failed_index);
    CHECK(*report.failed_index == 5);
    CHECK_THAT(report.status.message(), Catch::Contains("has no id record pointing at it"));
  }
  SECTION("a stored signature replaced by zeros") {
    with_raw_db(dir, "entries", [](MDB_txn* txn, MDB_dbi dbi) {
      Bytes e = read_raw(txn, dbi, 12);
      std::fill(e.end() - 64, e.end(), 0);
      write_raw(txn, dbi, 12, e);
    });
    auto report = audit_ledger(*open_read_only(dir));
    REQUIRE(report.failed_index);
    CHECK(*report.failed_index == 12);
    CHECK_THAT(report.status.message(), Catch::Contains("does not verify"));
  }
}

// A ledger of 5 + 10 observations, committed one entry at a time (a checkpoint each).
void build_tamper_ledger(const TempDir& dir, const Cast& cast) {
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i)))).status.is_ok());
  }
}

TEST_CASE("every commit stores a signed checkpoint consistent with the one before",
          "[ledger][tree]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  auto ledger = open_ledger(dir, false);
  auto key = ledger->log_verifier();
  REQUIRE(key);
  CHECK(key->name == std::string(test::kTestOrigin));
  std::vector<Checkpoint> seen;
  REQUIRE(ledger->scan_checkpoints([&](uint64_t size, std::string_view note) {
    auto c = open_checkpoint(note, *key);
    REQUIRE(c);
    CHECK(c->size == size);
    seen.push_back(*c);
    return Status::ok();
  }));
  REQUIRE(seen.size() == 11);  // the prologue batch, then one per single append
  CHECK(seen.front().size == 5);
  CHECK(seen.back().size == 15);
  MemoryHashStore reference;
  for (uint64_t i = 0; i < 15; ++i) reference.append(leaf_hash(ledger->entry(i).value()));
  CHECK(seen.back().root == reference.root());
  CHECK(ledger->root(15).value() == reference.root());
  for (size_t k = 1; k < seen.size(); ++k) {
    auto proof = ledger->consistency_proof(seen[k - 1].size, seen[k].size);
    REQUIRE(proof);
    CHECK(verify_consistency(seen[k - 1].size, seen[k].size, *proof, seen[k - 1].root,
                             seen[k].root));
  }
  auto inclusion = ledger->inclusion_proof(7, 15);
  REQUIRE(inclusion);
  CHECK(verify_inclusion(7, 15, leaf_hash(ledger->entry(7).value()), *inclusion, seen.back().root));
  CHECK(ledger->checkpoint().value() == ledger->checkpoint(15).value());
  CHECK(ledger->checkpoint(14).has_value());
  CHECK(ledger->checkpoint(3).error().code() == Code::kNotFound);
}

TEST_CASE("a scan of the checkpoints from a size starts at the first of at least that size",
          "[ledger][tree]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  auto ledger = open_ledger(dir, false);
  auto sizes_from = [&](uint64_t from) {
    std::vector<uint64_t> sizes;
    REQUIRE(ledger->scan_checkpoints(from, [&](uint64_t size, std::string_view note) {
      CHECK(note == ledger->checkpoint(size).value());
      sizes.push_back(size);
      return Status::ok();
    }));
    return sizes;
  };
  CHECK(sizes_from(0) == std::vector<uint64_t>{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(sizes_from(3) == sizes_from(0));
  CHECK(sizes_from(12) == std::vector<uint64_t>{12, 13, 14, 15});
  CHECK(sizes_from(16).empty());
}

TEST_CASE("find_entry takes an index or an event id and names what is neither",
          "[ledger][read]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  auto ledger = open_ledger(dir, false);
  const Digest id = check_entry(ledger->entry(7).value()).value().id;
  CHECK(find_entry(*ledger, "7").value() == 7);
  CHECK(find_entry(*ledger, "99").value() == 99);  // entry() says there is none
  CHECK(find_entry(*ledger, digest_text(id)).value() == 7);
  CHECK(find_entry(*ledger, "sha256:" + std::string(64, '0')).error().code() == Code::kNotFound);
  auto neither = find_entry(*ledger, "seven");
  CHECK(neither.error().code() == Code::kUsage);
  CHECK(neither.error().message() == "'seven' is neither an event id (sha256:<hex>) nor an index");
  CHECK(find_entry(*ledger, "sha256:77").error().code() == Code::kUsage);
  CHECK(ledger->entry(99).error().message() == "no entry at index 99 (the log has 15 entries)");
}

TEST_CASE("the log refuses to sign a checkpoint inconsistent with the last one",
          "[ledger][tree]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  // Damage a stored hash on the tree's right edge: the next root would fork from checkpoint 15.
  with_raw_db(dir, "tree", [](MDB_txn* txn, MDB_dbi dbi) {
    uint64_t last = stored_hash_index(0, 14);
    Bytes h = read_raw(txn, dbi, last);
    h[0] ^= 0x80;
    write_raw(txn, dbi, last, h);
  });
  auto ledger = open_ledger(dir, false);
  auto out = append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "after")));
  CHECK_FALSE(out.status.is_ok());
  CHECK_THAT(out.status.message(), Catch::Contains("refusing to sign checkpoint 16") &&
                                       Catch::Contains("not consistent"));
  CHECK(ledger->size() == 15);
  CHECK(ledger->checkpoint().value() == ledger->checkpoint(15).value());
}

TEST_CASE("after a commit fails the ledger appends nothing more, even once the cause is gone",
          "[ledger][append]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  uint64_t last = stored_hash_index(0, 14);
  Bytes good_hash;
  with_raw_db(dir, "tree", [&](MDB_txn* txn, MDB_dbi dbi) {
    good_hash = read_raw(txn, dbi, last);
    Bytes h = good_hash;
    h[0] ^= 0x80;
    write_raw(txn, dbi, last, h);
  });
  auto ledger = open_ledger(dir, false);
  auto failed = append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", "a")));
  CHECK(failed.commit_failed);
  CHECK(failed.status.code() == Code::kCorrupt);
  auto later = append(*ledger, observation_batch(cast, 100, 3));
  for (const auto& o : later) {
    CHECK(o.commit_failed);
    CHECK_THAT(o.status.message(),
               Catch::StartsWith("not stored because an earlier commit failed: ") &&
                   Catch::Contains("refusing to sign checkpoint 16"));
  }
  CHECK(ledger->size() == 15);
  ledger.reset();
  // Repaired and opened again, the ledger appends.
  with_raw_db(dir, "tree", [&](MDB_txn* txn, MDB_dbi dbi) { write_raw(txn, dbi, last, good_hash); });
  ledger = open_ledger(dir, false);
  auto again = append(*ledger, observation_batch(cast, 100, 3));
  for (const auto& o : again) CHECK(o.status.is_ok());
  CHECK(ledger->size() == 18);
}

TEST_CASE("a ledger needs its own log key to append", "[ledger][tree]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  OpenOptions options;
  options.dir = dir.str();
  options.log_key = std::make_shared<const SecretKey>(test::test_key("example.org/test-log", 0x44));
  auto ledger = Ledger::open(options);
  REQUIRE_FALSE(ledger);
  CHECK_THAT(ledger.error().message(), Catch::Contains("is not this ledger's log key"));
  options.log_key = nullptr;  // and no keys/log.key in the directory
  ledger = Ledger::open(options);
  REQUIRE_FALSE(ledger);
  CHECK_THAT(ledger.error().message(), Catch::Contains("log key"));
}

TEST_CASE("the audit catches tampered tree hashes, checkpoints, truncation and rewrites",
          "[ledger][audit][tamper]") {
  TempDir dir;
  Cast cast;
  build_tamper_ledger(dir, cast);
  std::string saved = open_ledger(dir, false)->checkpoint().value();
  SECTION("a flipped byte in a stored tree hash") {
    with_raw_db(dir, "tree", [](MDB_txn* txn, MDB_dbi dbi) {
      Bytes h = read_raw(txn, dbi, 9);
      h[3] ^= 0x01;
      write_raw(txn, dbi, 9, h);
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    CHECK_THAT(report.status.message(), Catch::Contains("stored tree hash of node"));
    REQUIRE(report.failed_index);
  }
  SECTION("a flipped byte in a stored checkpoint's signature") {
    with_raw_db(dir, "checkpoints", [](MDB_txn* txn, MDB_dbi dbi) {
      Bytes note = read_raw(txn, dbi, 12);
      note[note.size() - 5] ^= 0x01;
      write_raw(txn, dbi, 12, note);
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    CHECK_THAT(report.status.message(), Catch::Contains("checkpoint"));
  }
  SECTION("a checkpoint re-signed over another root") {
    with_raw_db(dir, "checkpoints", [&](MDB_txn* txn, MDB_dbi dbi) {
      Checkpoint forged{std::string(test::kTestOrigin), 12, test::test_digest("forged"), {}};
      std::string note = sign_checkpoint(forged, cast.log);
      write_raw(txn, dbi, 12, Bytes(note.begin(), note.end()));
    });
    auto report = audit_ledger(*open_read_only(dir));
    CHECK(report.status.code() == Code::kCorrupt);
    CHECK_THAT(report.status.message(), Catch::Contains("signed checkpoint at size 12"));
  }
  SECTION("the last entries dropped, checkpoints and all") {
    with_raw_db(dir, "entries", [](MDB_txn* txn, MDB_dbi dbi) {
      for (uint64_t i = 13; i < 15; ++i) {
        auto key = u64_be(i);
        MDB_val k{8, key.data()};
        REQUIRE(mdb_del(txn, dbi, &k, nullptr) == 0);
      }
    });
    with_raw_db(dir, "checkpoints", [](MDB_txn* txn, MDB_dbi dbi) {
      for (uint64_t i = 13; i < 15 + 1; ++i) {
        auto key = u64_be(i);
        MDB_val k{8, key.data()};
        mdb_del(txn, dbi, &k, nullptr);
      }
    });
    auto ledger = open_read_only(dir);
    AuditOptions options;
    options.saved_checkpoint = saved;
    auto report = audit_ledger(*ledger, options);
    CHECK(report.status.code() == Code::kCorrupt);
    CHECK_THAT(report.status.message(), Catch::Contains("truncated"));
  }
  SECTION("a pinned log key that is not the log's") {
    AuditOptions options;
    options.log_key = test::test_key("example.org/test-log", 0x44).verifier();
    auto report = audit_ledger(*open_read_only(dir), options);
    CHECK(report.status.code() == Code::kRejected);
    CHECK_THAT(report.status.message(), Catch::Contains("is not this log's key"));
  }
  SECTION("an entry by a revoked key swapped in") {
    // A second ledger where the attestor is retired at index 5; its attestation, validly
    // signed, is then spliced in at index 8, after the revocation.
    TempDir other;
    {
      auto ledger = open_ledger(other);
      append_prologue(*ledger, cast);
      REQUIRE(append_one(*ledger, test::signed_entry(cast.admin, test::revoke_body(cast.admin, cast.attestor.public_key(), RevokeReason::kRetired))).status.is_ok());
      for (int i = 0; i < 5; ++i) {
        REQUIRE(append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i)))).status.is_ok());
      }
    }
    Bytes late = test::signed_entry(cast.attestor, test::attestation_body(cast.attestor, test::test_digest("run"), AttestationType::kReproduced, "after my revocation"));
    with_raw_db(other, "entries", [&](MDB_txn* txn, MDB_dbi dbi) { write_raw(txn, dbi, 8, late); });
    with_raw_db(other, "ids", [&](MDB_txn* txn, MDB_dbi dbi) {
      put_raw(txn, dbi, event_id(decode_entry(late).value().body), u64_be(8));
    });
    auto report = audit_ledger(*open_read_only(other));
    REQUIRE(report.failed_index);
    CHECK(*report.failed_index == 8);
    CHECK(report.status.code() == Code::kRejected);
    CHECK_THAT(report.status.message(), Catch::Contains("attestor.example.org") &&
                                            Catch::Contains("was revoked at index 5"));
  }
  SECTION("an untouched ledger passes, and so does its saved checkpoint") {
    AuditOptions options;
    options.saved_checkpoint = saved;
    options.log_key = cast.log.verifier();
    auto report = audit_ledger(*open_read_only(dir), options);
    CHECK(report.status.is_ok());
    CHECK(report.checkpoints == 11);
    CHECK(report.entries == 15);
    CHECK(report.tree_nodes == stored_hash_count(15));
  }
}

TEST_CASE("a compromised key's events from --void-from on are void, not failures",
          "[ledger][audit][policy]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_prologue(*ledger, cast);
  uint64_t first_void = 0;
  for (int i = 0; i < 6; ++i) {
    auto o = append_one(*ledger, test::signed_entry(cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
    REQUIRE(o.status.is_ok());
    if (i == 3) first_void = o.index;
  }
  auto revoke = append_one(*ledger, test::signed_entry(cast.admin, test::revoke_body(cast.admin, cast.importer.public_key(), RevokeReason::kCompromised, first_void)));
  REQUIRE(revoke.status.is_ok());
  AuditReport report = audit_ledger(*ledger);
  REQUIRE(report.status.is_ok());
  CHECK(report.voided == 3);
  REQUIRE_FALSE(report.voided_examples.empty());
  CHECK(report.voided_examples[0].first == first_void);
  CHECK_THAT(report.voided_examples[0].second, Catch::Contains("compromised"));
}

}  // namespace
}  // namespace evl
