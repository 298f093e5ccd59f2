// tests/support/raw_lmdb.h — the raw LMDB environment of a closed ledger, for tests that damage
// or drop what a ledger stored (tamper and upgrade tests). Header only: just the test binaries
// that link LMDB include it.
#pragma once

#include <lmdb.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>

#include "events/bytes.h"
#include "tests/support/test_support.h"

namespace evl::test {

// Runs `fn(txn)` in one raw write transaction on the ledger in `dir` (closed), then commits.
template <typename Fn>
void with_raw_txn(const TempDir& dir, Fn&& fn) {
  MDB_env* env = nullptr;
  REQUIRE(mdb_env_create(&env) == 0);
  mdb_env_set_maxdbs(env, 16);
  mdb_env_set_mapsize(env, 64ull << 30);
  REQUIRE(mdb_env_open(env, (dir.str() + "/db").c_str(), 0, 0644) == 0);
  MDB_txn* txn = nullptr;
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  fn(txn);
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

// Runs `fn(txn, dbi)` on the database `name` of the ledger in `dir` (closed).
template <typename Fn>
void with_raw_db(const TempDir& dir, const char* name, Fn&& fn) {
  with_raw_txn(dir, [&](MDB_txn* txn) {
    MDB_dbi dbi;
    REQUIRE(mdb_dbi_open(txn, name, 0, &dbi) == 0);
    fn(txn, dbi);
  });
}

inline void put_raw(MDB_txn* txn, MDB_dbi dbi, ByteView key, ByteView value) {
  MDB_val k{key.size(), const_cast<uint8_t*>(key.data())};
  MDB_val v{value.size(), const_cast<uint8_t*>(value.data())};
  REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
}

inline void put_raw(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view value) {
  put_raw(txn, dbi, as_bytes(key), as_bytes(value));
}

// The record under an index key (u64be): an entry, a tree hash, a checkpoint.
inline Bytes read_raw(MDB_txn* txn, MDB_dbi dbi, uint64_t index) {
  auto key = u64_be(index);
  MDB_val k{8, key.data()}, v;
  REQUIRE(mdb_get(txn, dbi, &k, &v) == 0);
  const auto* p = static_cast<const uint8_t*>(v.mv_data);
  return Bytes(p, p + v.mv_size);
}

inline void write_raw(MDB_txn* txn, MDB_dbi dbi, uint64_t index, ByteView value) {
  put_raw(txn, dbi, ByteView(u64_be(index)), value);
}

}  // namespace evl::test
