// The LMDB projection store (ledger/internal/lmdb_kv.h): what expect_ascending_writes changes
// (how full the pages are) and what it must not (what the store holds, what a write replaces),
// against a std::map that takes the same writes.
#include <catch2/catch.hpp>

#include <lmdb.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "ledger/internal/lmdb.h"
#include "ledger/internal/lmdb_kv.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using Model = std::map<std::string, std::string>;

// An LMDB environment in a temporary directory with two named databases.
class TestEnv {
 public:
  TestEnv() {
    REQUIRE(mdb_env_create(&env_) == 0);
    REQUIRE(mdb_env_set_maxdbs(env_, 4) == 0);
    REQUIRE(mdb_env_set_mapsize(env_, size_t{256} << 20) == 0);
    REQUIRE(mdb_env_open(env_, dir_.str().c_str(), MDB_NOSYNC, 0644) == 0);
  }
  ~TestEnv() { mdb_env_close(env_); }
  TestEnv(const TestEnv&) = delete;
  TestEnv& operator=(const TestEnv&) = delete;

  lmdb::Txn write_txn() {
    auto txn = lmdb::Txn::begin(env_, true);
    REQUIRE(txn.has_value());
    return std::move(*txn);
  }
  MDB_dbi open(lmdb::Txn& txn, const char* name) {
    MDB_dbi dbi = 0;
    REQUIRE(mdb_dbi_open(txn.get(), name, MDB_CREATE, &dbi) == 0);
    return dbi;
  }

 private:
  test::TempDir dir_;
  MDB_env* env_ = nullptr;
};

Model contents(const KeyValueStore& store) {
  Model out;
  REQUIRE(store
              .scan("",
                    [&](std::string_view k, std::string_view v) {
                      out.emplace(k, v);
                      return true;
                    })
              .is_ok());
  return out;
}

size_t leaf_pages(lmdb::Txn& txn, MDB_dbi dbi) {
  MDB_stat stat;
  REQUIRE(mdb_stat(txn.get(), dbi, &stat) == 0);
  return stat.ms_leaf_pages;
}

// What a put_replacing or erase_replacing reported that it replaced.
struct Replaced {
  bool seen = false;
  std::string old;
  KeyValueStore::ReplacedVisitor visitor() {
    return [this](std::string_view value) {
      seen = true;
      old = value;
    };
  }
};

// `replaced` is what the model held at `key` before the write.
void check_replaced(const Replaced& replaced, const Model& model, const std::string& key) {
  auto at = model.find(key);
  CHECK(replaced.seen == (at != model.end()));
  if (at != model.end()) CHECK(replaced.old == at->second);
}

std::string key_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "k/%08d", i);
  return buf;
}

TEST_CASE("a store told to expect ascending writes holds the same records on fuller pages") {
  TestEnv env;
  auto txn = env.write_txn();
  MDB_dbi plain_dbi = env.open(txn, "plain");
  MDB_dbi hinted_dbi = env.open(txn, "hinted");
  lmdb::TxnKeyValueStore plain(txn, plain_dbi, true), hinted(txn, hinted_dbi, true);
  hinted.expect_ascending_writes(true);
  Model model;
  for (int i = 0; i < 4000; ++i) {
    // Like the projections' families, written one after the other in key order: manifest
    // records of about 430 bytes, then run views of about 1.7 KB.
    const size_t size = i < 2000 ? 400 + i % 60 : 1650 + i % 150;
    const std::string value(size, static_cast<char>('a' + i % 26));
    model[key_of(i)] = value;
    REQUIRE(plain.put(key_of(i), value).is_ok());
    bool replaced = false;
    REQUIRE(hinted.put_replacing(key_of(i), value, [&](std::string_view) { replaced = true; })
                .is_ok());
    CHECK_FALSE(replaced);
  }
  CHECK(contents(plain) == model);
  CHECK(contents(hinted) == model);
  // LMDB splits a full page in halves for a put, and starts a new one for an append.
  const size_t plain_pages = leaf_pages(txn, plain_dbi), hinted_pages = leaf_pages(txn, hinted_dbi);
  INFO("leaf pages: " << plain_pages << " written the usual way, " << hinted_pages
                      << " appended");
  CHECK(hinted_pages * 10 < plain_pages * 7);
}

TEST_CASE("under the hint, writes in any order, erases and another handle's writes stay "
          "correct") {
  TestEnv env;
  auto txn = env.write_txn();
  MDB_dbi dbi = env.open(txn, "state");
  lmdb::TxnKeyValueStore store(txn, dbi, true), other(txn, dbi, true);
  store.expect_ascending_writes(true);
  Model model;
  // The other handle appends above this one's last append: this one's next key, between the
  // two, is refused by LMDB as an append and goes in the usual way.
  REQUIRE(store.put("a/1", "1").is_ok());
  REQUIRE(other.put("a/9", "9").is_ok());
  REQUIRE(store.put("a/5", "5").is_ok());
  model = {{"a/1", "1"}, {"a/5", "5"}, {"a/9", "9"}};
  CHECK(contents(store) == model);
  std::mt19937 rng(7);
  for (int step = 0; step < 3000; ++step) {
    const std::string key = key_of(static_cast<int>(rng() % 1000));
    const std::string value = "v" + std::to_string(step);
    switch (rng() % 8) {
      case 0: {  // erase, often the greatest key
        const std::string target =
            (rng() % 2 == 0 && !model.empty()) ? model.rbegin()->first : key;
        Replaced replaced;
        REQUIRE(store.erase_replacing(target, replaced.visitor()).is_ok());
        check_replaced(replaced, model, target);
        model.erase(target);
        break;
      }
      case 1: {  // another handle appends above this one's last append
        const std::string high = "z/" + std::to_string(step);
        REQUIRE(other.put(high, value).is_ok());
        model[high] = value;
        break;
      }
      case 2:
        REQUIRE(store.erase(key).is_ok());
        model.erase(key);
        break;
      default: {
        Replaced replaced;
        REQUIRE(store.put_replacing(key, value, replaced.visitor()).is_ok());
        check_replaced(replaced, model, key);
        model[key] = value;
      }
    }
  }
  CHECK(contents(store) == model);
  // Ascending again after all that: appends above the greatest key, wherever it is now.
  for (int i = 0; i < 50; ++i) {
    const std::string key = "zz/" + std::to_string(1000 + i);
    REQUIRE(store.put(key, "tail").is_ok());
    model[key] = "tail";
  }
  store.expect_ascending_writes(false);
  REQUIRE(store.put(key_of(5), "after").is_ok());
  model[key_of(5)] = "after";
  CHECK(contents(store) == model);
  CHECK(contents(other) == model);
}

// The keys a scan_from visits, in order.
std::vector<std::string> keys_from(const KeyValueStore& store, std::string_view prefix,
                                   std::string_view from) {
  std::vector<std::string> out;
  REQUIRE(store
              .scan_from(prefix, from,
                         [&](std::string_view k, std::string_view) {
                           out.emplace_back(k);
                           return true;
                         })
              .is_ok());
  return out;
}

// A store that has only get and scan: scan_from is KeyValueStore's default, which scans the
// prefix and skips the keys below `from`.
class ScanOnly final : public KeyValueStore {
 public:
  explicit ScanOnly(const KeyValueStore& inner) : inner_(inner) {}
  Result<std::optional<std::string>> get(std::string_view key) const override {
    return inner_.get(key);
  }
  Status put(std::string_view, std::string_view) override { return usage_error("read-only"); }
  Status erase(std::string_view) override { return usage_error("read-only"); }
  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return inner_.scan(prefix, visit);
  }

 private:
  const KeyValueStore& inner_;
};

TEST_CASE("scan_from resumes a prefix scan at a key, as the model's lower_bound does") {
  TestEnv env;
  auto txn = env.write_txn();
  lmdb::TxnKeyValueStore store(txn, env.open(txn, "state"), true);
  Model model;
  for (const char* key : {"a/1", "b/", "b/1", "b/15", "b/2", "b/9", "b0", "c/1"}) {
    REQUIRE(store.put(key, "v").is_ok());
    model[key] = "v";
  }
  const ScanOnly fallback(store);
  for (const std::string prefix : {"", "b/", "b/1", "z/"}) {
    for (const std::string from : {"", "a", "b/", "b/10", "b/15", "b/3", "b0", "zz"}) {
      INFO("prefix '" << prefix << "' from '" << from << "'");
      std::vector<std::string> expected;
      for (auto it = model.lower_bound(std::max(prefix, from)); it != model.end(); ++it) {
        if (it->first.compare(0, prefix.size(), prefix) != 0) break;
        expected.push_back(it->first);
      }
      CHECK(keys_from(store, prefix, from) == expected);
      CHECK(keys_from(fallback, prefix, from) == expected);
    }
  }
}

}  // namespace
}  // namespace evl

namespace evl {
namespace {

TEST_CASE("a failed write says whether the disk is full or failing, with the path and the fix",
          "[ledger][disk]") {
  test::TempDir dir;
  const auto free = lmdb::free_bytes(dir.str());
  REQUIRE(free.has_value());
  REQUIRE(*free >= lmdb::kFullBelowBytes);  // the test's own disk has room
  for (int rc : {ENOSPC, EDQUOT}) {
    INFO(rc);
    const Status full = lmdb::write_error(rc, "cannot commit the entries from index 7", dir.str());
    CHECK(full.code() == Code::kIo);
    CHECK_THAT(full.message(),
               Catch::StartsWith("cannot commit the entries from index 7: the disk is full: " +
                                 dir.str() + " (") &&
                   Catch::Contains("bytes free") && Catch::Contains("nothing of this commit") &&
                   Catch::Contains("free space on that file system or move the ledger"));
  }
  // EIO with room left is a failing disk, not a full one.
  const Status failing = lmdb::write_error(EIO, "cannot commit", dir.str());
  CHECK(failing.code() == Code::kIo);
  CHECK_THAT(failing.message(),
             Catch::StartsWith("cannot commit: the disk failed writing " + dir.str()) &&
                 Catch::Contains("dmesg") && Catch::Contains("evledger verify"));
  CHECK_THAT(failing.message(), !Catch::Contains("full"));
  // Other codes read as LMDB says them.
  CHECK(lmdb::write_error(MDB_MAP_FULL, "cannot commit", dir.str()).message() ==
        std::string("cannot commit: ") + mdb_strerror(MDB_MAP_FULL));
}

TEST_CASE("a short write on a disk with next to no room left reads as a full disk",
          "[ledger][disk]") {
  test::SmallDisk disk(256 << 10);
  if (!disk.mounted()) {
    WARN("skipped: " << disk.why_not());
    return;
  }
  const std::string dir = disk.path().string();
  const Status empty = lmdb::write_error(EIO, "cannot commit", dir);
  CHECK_THAT(empty.message(), Catch::Contains("the disk is full: " + dir) &&
                                  Catch::Contains("a short write, which LMDB reports as EIO"));
}

}  // namespace
}  // namespace evl
