#include "ledger/limits.h"

#include <lmdb.h>
#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "events/bytes.h"
#include "ledger/internal/lmdb.h"

namespace evl {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_s(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

struct SignedSamples {
  std::vector<std::array<uint8_t, 32>> pks;
  std::vector<Bytes> messages;
  std::vector<std::array<uint8_t, 64>> sigs;
};

SignedSamples make_samples(size_t n, size_t message_bytes) {
  SignedSamples s;
  for (size_t i = 0; i < n; ++i) {
    std::array<uint8_t, 32> pk;
    std::array<uint8_t, 64> sk;
    crypto_sign_keypair(pk.data(), sk.data());
    Bytes msg(message_bytes);
    randombytes_buf(msg.data(), msg.size());
    std::array<uint8_t, 64> sig;
    crypto_sign_detached(sig.data(), nullptr, msg.data(), msg.size(), sk.data());
    s.pks.push_back(pk);
    s.messages.push_back(std::move(msg));
    s.sigs.push_back(sig);
  }
  return s;
}

}  // namespace

double ed25519_verify_rate(unsigned threads, size_t message_bytes, double seconds) {
  SignedSamples samples = make_samples(64, message_bytes);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  auto start = Clock::now();
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      uint64_t n = 0;
      for (size_t i = t; !stop.load(std::memory_order_relaxed); ++i, ++n) {
        size_t k = i % samples.pks.size();
        if (crypto_sign_verify_detached(samples.sigs[k].data(), samples.messages[k].data(),
                                        samples.messages[k].size(), samples.pks[k].data()) != 0) {
          failures++;
        }
      }
      total += n;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  EVL_ASSERT(failures == 0);
  return static_cast<double>(total) / elapsed_s(start);
}

double ed25519_sign_rate(size_t message_bytes, double seconds) {
  std::array<uint8_t, 32> pk;
  std::array<uint8_t, 64> sk;
  crypto_sign_keypair(pk.data(), sk.data());
  Bytes msg(message_bytes, 0x5a);
  std::array<uint8_t, 64> sig;
  uint64_t n = 0;
  auto start = Clock::now();
  while (elapsed_s(start) < seconds) {
    for (int i = 0; i < 64; ++i, ++n) {
      msg[0] = static_cast<uint8_t>(n);
      crypto_sign_detached(sig.data(), nullptr, msg.data(), msg.size(), sk.data());
    }
  }
  return static_cast<double>(n) / elapsed_s(start);
}

Result<LmdbAppendFigures> lmdb_append_limits(const std::string& dir, uint64_t total,
                                             uint64_t batch, size_t value_bytes,
                                             unsigned single_commits) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create " + dir + ": " + ec.message());
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_mapsize(env, 64ull << 30);
  mdb_env_set_maxdbs(env, 2);
  struct Closer {
    MDB_env* env;
    ~Closer() { mdb_env_close(env); }
  } closer{env};
  int rc = mdb_env_open(env, dir.c_str(), MDB_NOTLS, 0644);
  if (rc != 0) return lmdb::error(rc, "cannot open LMDB in " + dir);
  MDB_dbi dbi;
  {
    auto txn = lmdb::Txn::begin(env, true);
    if (!txn) return txn.error();
    rc = mdb_dbi_open(txn->get(), "values", MDB_CREATE, &dbi);
    if (rc != 0) return lmdb::error(rc, "cannot open a database");
    EVL_RETURN_IF_ERROR(txn->commit());
  }
  Bytes value(value_bytes);
  randombytes_buf(value.data(), value.size());
  uint64_t next = 0;
  auto put_batch = [&](uint64_t n) -> Status {
    auto txn = lmdb::Txn::begin(env, true);
    if (!txn) return txn.error();
    for (uint64_t i = 0; i < n; ++i, ++next) {
      value[0] = static_cast<uint8_t>(next);
      rc = txn->put(dbi, u64_be(next), value, MDB_APPEND);
      if (rc != 0) return lmdb::error(rc, "put failed");
    }
    return txn->commit();
  };
  LmdbAppendFigures figures;
  auto start = Clock::now();
  for (uint64_t done = 0; done < total; done += batch) {
    EVL_RETURN_IF_ERROR(put_batch(std::min(batch, total - done)));
  }
  figures.entries_per_second = static_cast<double>(total) / elapsed_s(start);
  std::vector<double> commits;
  for (unsigned i = 0; i < single_commits; ++i) {
    auto t0 = Clock::now();
    EVL_RETURN_IF_ERROR(put_batch(1));
    commits.push_back(elapsed_s(t0) * 1000);
  }
  if (!commits.empty()) {
    std::sort(commits.begin(), commits.end());
    figures.single_commit_ms = commits[commits.size() / 2];
  }
  return figures;
}

MemoryFigures process_memory() {
  MemoryFigures m;
  std::ifstream in("/proc/self/status");
  std::string line;
  auto kb = [](const std::string& l) {
    std::istringstream s(l.substr(l.find(':') + 1));
    uint64_t v = 0;
    s >> v;
    return v * 1024;
  };
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) m.peak_rss = kb(line);
    if (line.rfind("RssAnon:", 0) == 0) m.rss_anon = kb(line);
    if (line.rfind("RssFile:", 0) == 0) m.rss_file = kb(line);
  }
  return m;
}

}  // namespace evl
