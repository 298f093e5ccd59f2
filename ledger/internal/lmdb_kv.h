// ledger/internal/lmdb_kv.h — a KeyValueStore over one LMDB database in one transaction.
// Views passed to visitors are valid only during the call (LMDB's rule).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "ledger/append_hook.h"
#include "ledger/internal/lmdb.h"

namespace evl::lmdb {

class TxnKeyValueStore final : public KeyValueStore {
 public:
  // `writable` false makes put/erase fail with kUsage (a read snapshot).
  TxnKeyValueStore(Txn& txn, MDB_dbi dbi, bool writable)
      : txn_(txn), dbi_(dbi), writable_(writable) {}

  // Calls `release` (which drops LMDB's mapped pages) after every kReleaseEvery records read
  // or written: a rebuild writes and then digests the whole state, and every page LMDB reads
  // on the way stays mapped, with the 15 the kernel maps around it, until something drops it.
  void release_pages_with(std::function<void()> release) { release_ = std::move(release); }

  Result<std::optional<std::string>> get(std::string_view key) const override {
    auto v = txn_.get(dbi_, as_bytes(key));
    if (!v) {
      if (v.error().code() == Code::kNotFound) return std::optional<std::string>();
      return v.error();
    }
    return std::optional<std::string>(std::string(as_chars(*v)));
  }

  Status put(std::string_view key, std::string_view value) override {
    EVL_RETURN_IF_ERROR(writable_key(key));
    if (auto appended = append(key, value)) return stored(*appended);
    return stored(txn_.put(dbi_, as_bytes(key), as_bytes(value), 0));
  }

  // One lookup for a new key: MDB_NOOVERWRITE fails on an existing one and shows its value,
  // which `replaced` sees before the second put overwrites it (rarer in a rebuild, which writes
  // most records once).
  Status put_replacing(std::string_view key, std::string_view value,
                       const ReplacedVisitor& replaced) override {
    EVL_RETURN_IF_ERROR(writable_key(key));
    if (auto appended = append(key, value)) return stored(*appended);  // replaces nothing
    ByteView existing;
    int rc = txn_.put_new(dbi_, as_bytes(key), as_bytes(value), &existing);
    if (rc == MDB_KEYEXIST) {
      replaced(as_chars(existing));
      rc = txn_.put(dbi_, as_bytes(key), as_bytes(value), 0);
    }
    return stored(rc);
  }

  Status erase_replacing(std::string_view key, const ReplacedVisitor& replaced) override {
    EVL_RETURN_IF_ERROR(writable_key(std::nullopt));
    auto cursor = Cursor::open(txn_, dbi_);
    if (!cursor) return cursor.error();
    MDB_val k = val(key), v;
    int rc = (*cursor)->get(k, v, MDB_SET_KEY);
    if (rc == 0) {
      replaced(as_chars(view(v)));
      rc = (*cursor)->del();
    }
    return erased(rc);
  }

  Status erase(std::string_view key) override {
    EVL_RETURN_IF_ERROR(writable_key(std::nullopt));
    MDB_val k = val(key);
    return erased(mdb_del(txn_.get(), dbi_, &k, nullptr));
  }

  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return scan_from(prefix, prefix, visit);
  }

  Status scan_from(std::string_view prefix, std::string_view from,
                   const KeyValueVisitor& visit) const override {
    auto cursor = Cursor::open(txn_, dbi_);
    if (!cursor) return cursor.error();
    const std::string_view start = std::max(prefix, from);
    MDB_val k = val(start), v;
    int rc = start.empty() ? (*cursor)->get(k, v, MDB_FIRST)
                           : (*cursor)->get(k, v, MDB_SET_RANGE);
    for (; rc == 0; rc = (*cursor)->get(k, v, MDB_NEXT)) {
      std::string_view key = as_chars(view(k));
      if (key.substr(0, prefix.size()) != prefix) return Status::ok();
      if (!visit(key, as_chars(view(v)))) return Status::ok();
      touched();
    }
    return rc == MDB_NOTFOUND ? Status::ok() : error(rc, "cannot scan projection state");
  }

  // Under the hint, a put above every key of the database appends (append() below).
  void expect_ascending_writes(bool ascending) override {
    ascending_ = ascending;
    if (!ascending) appender_.reset();
  }

  // Whether a put failed with MDB_MAP_FULL (the writer then grows the map and retries).
  bool map_full() const { return last_map_full_; }

 private:
  static constexpr uint64_t kReleaseEvery = 4096;
  // Whether this store may write (and, for a put, whether LMDB takes `key`).
  Status writable_key(std::optional<std::string_view> key) const {
    if (!writable_) return usage_error("the projection state is read-only here");
    if (key && (key->empty() || key->size() > 511)) {
      return usage_error("a projection key must be 1 to 511 bytes (LMDB's key limit)");
    }
    return Status::ok();
  }
  // While writes are expected in ascending order, each put is first tried with MDB_APPEND:
  // no search from the root, and a full page is not split in halves but continued on a new
  // one, so that a state written in key order from nothing (a one-batch rebuild) fills its
  // pages instead of leaving them half empty. LMDB compares the key with the database's last
  // one and refuses a key that is not above it (MDB_KEYEXIST, nothing written): append()
  // returns nullopt then, and for a store without the hint, and the caller puts the usual
  // way; otherwise the LMDB code of the append. One cursor makes the appends, left at the last
  // record, so that LMDB finds the end without searching the tree from its root each time.
  std::optional<int> append(std::string_view key, std::string_view value) {
    if (!ascending_) return std::nullopt;
    if (!appender_) {
      auto cursor = Cursor::open(txn_, dbi_);
      if (!cursor) return std::nullopt;
      appender_ = std::move(*cursor);
    }
    const int rc = appender_->put(as_bytes(key), as_bytes(value), MDB_APPEND);
    if (rc == MDB_KEYEXIST) return std::nullopt;
    return rc;
  }
  // The outcome of a put's LMDB code (noting a full map for the writer to grow).
  Status stored(int rc) {
    if (rc == MDB_MAP_FULL) last_map_full_ = true;
    touched();
    return rc == 0 ? Status::ok() : error(rc, "cannot store projection state");
  }
  // The outcome of an erase's LMDB code: an absent key is erased already.
  static Status erased(int rc) {
    return rc == 0 || rc == MDB_NOTFOUND ? Status::ok()
                                         : error(rc, "cannot erase projection state");
  }
  void touched() const {
    if (release_ && ++touched_ % kReleaseEvery == 0) release_();
  }

  Txn& txn_;
  MDB_dbi dbi_;
  bool writable_;
  bool last_map_full_ = false;
  bool ascending_ = false;            // expect_ascending_writes()
  std::unique_ptr<Cursor> appender_;  // while ascending_, from the first put
  std::function<void()> release_;
  mutable uint64_t touched_ = 0;
};

}  // namespace evl::lmdb
