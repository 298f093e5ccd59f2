// ledger/internal/lmdb.h — RAII around LMDB for the ledger's .cpp files only.
//
// Lifetimes (from lmdb.h): a value returned by get() or a cursor is valid only until the end of
// its transaction or the next write in it. A Txn aborts in its destructor unless committed.
// Read transactions are MDB_NOTLS-friendly: any thread may use one, one thread at a time.
#pragma once

#include <lmdb.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "events/bytes.h"
#include "events/status.h"

namespace evl::lmdb {

inline Status error(int rc, const std::string& what) {
  if (rc == MDB_PANIC) {
    // Set by a failed write of the meta page (mdb_env_write_meta), for every later transaction
    // of this process, reads included; commit_code() has put the page back.
    return io_error(what + ": an earlier commit of this process failed writing LMDB's meta "
                    "page, and LMDB refuses this environment since (MDB_PANIC); the file is as "
                    "the last commit left it: check the disk, then start the process again");
  }
  return io_error(what + ": " + mdb_strerror(rc));
}

// Below this much free space after a failed write, the file system counts as full: LMDB
// reports a short write (the disk filled up during it) as EIO, not ENOSPC (mdb_page_flush).
inline constexpr uint64_t kFullBelowBytes = 1 << 20;

// The bytes of `dir`'s file system that this process may still write (root may use the
// blocks reserved for it), or nullopt when statvfs fails.
inline std::optional<uint64_t> free_bytes(const std::string& dir) {
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  const uint64_t blocks = ::geteuid() == 0 ? fs.f_bfree : fs.f_bavail;
  return blocks * fs.f_frsize;
}

// A failed write to the LMDB environment in `db_dir`, for the people who must fix it: a full
// disk (ENOSPC, EDQUOT, or EIO with next to no space left) or a failing one (EIO) say so and
// what to do; other codes read as error() does. `what` says what failed ("cannot commit").
inline Status write_error(int rc, const std::string& what, const std::string& db_dir) {
  if (rc != ENOSPC && rc != EDQUOT && rc != EIO) return error(rc, what);
  const auto free = free_bytes(db_dir);
  const bool full = rc != EIO || (free && *free < kFullBelowBytes);
  std::string left = free ? std::to_string(*free) + " bytes free" : "free space unknown";
  if (full) {
    const std::string code = rc == EIO ? "a short write, which LMDB reports as EIO"
                                       : std::string(mdb_strerror(rc));
    return io_error(what + ": the disk is full: " + db_dir + " (" + code + "; " + left +
                    "); nothing of this commit was stored: free space on that file "
                    "system or move the ledger to a larger one, then run the command again");
  }
  return io_error(what + ": the disk failed writing " + db_dir + " (" + mdb_strerror(rc) +
                  "; " + left + "); nothing of this commit was stored: check the system log "
                  "(dmesg) and the disk, then 'evledger verify' the ledger before appending");
}

// Why this process cannot map `bytes` more of address space, or nullopt when it can. LMDB maps
// its whole map size (address space, not memory), so an address-space limit (ulimit -v) bounds
// the map; and a failed mmap in mdb_env_set_mapsize leaves the environment without a map, which
// crashes the next transaction, so a map is grown only after this probe.
inline std::optional<std::string> cannot_map(uint64_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    ::munmap(p, bytes);
    return std::nullopt;
  }
  std::string why = std::string("mmap: ") + std::strerror(errno);
  struct rlimit limit;
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    why += "; ulimit -v is " + std::to_string(limit.rlim_cur / 1024) + " KiB";
  }
  return why;
}

inline MDB_val val(ByteView b) {
  return MDB_val{b.size(), const_cast<uint8_t*>(b.data())};
}
inline MDB_val val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
inline ByteView view(const MDB_val& v) {
  return ByteView(static_cast<const uint8_t*>(v.mv_data), v.mv_size);
}

class Txn {
 public:
  Txn() = default;
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  Txn(Txn&& o) noexcept : txn_(o.txn_), write_(o.write_) { o.txn_ = nullptr; }
  Txn& operator=(Txn&& o) noexcept {
    if (this != &o) {
      abort();
      txn_ = o.txn_;
      write_ = o.write_;
      o.txn_ = nullptr;
    }
    return *this;
  }
  ~Txn() { abort(); }

  static Result<Txn> begin(MDB_env* env, bool write) {
    Txn t;
    int rc = mdb_txn_begin(env, nullptr, write ? 0 : MDB_RDONLY, &t.txn_);
    if (rc != 0) return error(rc, write ? "cannot begin a write transaction"
                                        : "cannot begin a read transaction");
    t.write_ = write;
    return t;
  }

  MDB_txn* get() const { return txn_; }

  // Makes the transaction durable (fsync unless the environment says otherwise).
  Status commit() {
    int rc = commit_code();
    return rc == 0 ? Status::ok() : error(rc, "cannot commit");
  }
  // As commit(), returning the raw LMDB code (MDB_MAP_FULL is worth a retry).
  //
  // A write transaction's failed commit leaves the file as the last commit left it. LMDB 0.9
  // does not, when the write of the meta page fails (mdb_env_write_meta): it then writes the
  // new transaction's trees back into that page under the old transaction id, through the
  // descriptor without O_DSYNC, "to prevent it from being used" on a disk it expects to fail
  // anyway. When that second write succeeds (a fault that passed), the older meta page names
  // pages of a commit that never happened, which the structure check (lmdb_check.h) rightly
  // calls damage. So the page the commit overwrites (transaction id mod 2) is read before it,
  // and written back and synced when the commit fails and the page differs.
  int commit_code() {
    Bytes before;
    off_t at = 0;
    mdb_filehandle_t fd = -1;
    if (write_) {
      MDB_env* env = mdb_txn_env(txn_);
      MDB_stat stat;
      if (mdb_env_stat(env, &stat) == 0 && mdb_env_get_fd(env, &fd) == 0) {
        before.resize(stat.ms_psize);
        at = off_t(mdb_txn_id(txn_) % 2) * stat.ms_psize;
        if (::pread(fd, before.data(), before.size(), at) != ssize_t(before.size())) before.clear();
      }
    }
    int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    if (rc != 0 && !before.empty()) {
      Bytes now(before.size());
      if (::pread(fd, now.data(), now.size(), at) != ssize_t(now.size()) || now != before) {
        if (::pwrite(fd, before.data(), before.size(), at) == ssize_t(before.size())) {
          ::fdatasync(fd);
        }
      }
    }
    return rc;
  }
  void abort() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = nullptr;
  }

  // kNotFound when the key is absent. The view is valid until the transaction ends.
  Result<ByteView> get(MDB_dbi dbi, ByteView key) const {
    MDB_val k = val(key), v;
    int rc = mdb_get(txn_, dbi, &k, &v);
    if (rc == MDB_NOTFOUND) return not_found("no such key");
    if (rc != 0) return error(rc, "read failed");
    return view(v);
  }

  // Puts with MDB_NOOVERWRITE in one descent of the tree: on MDB_KEYEXIST, `existing` views the
  // value already there (valid until the next write in this transaction).
  int put_new(MDB_dbi dbi, ByteView key, ByteView value, ByteView* existing) {
    MDB_val k = val(key), v = val(value);
    int rc = mdb_put(txn_, dbi, &k, &v, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST && existing != nullptr) *existing = view(v);
    return rc;
  }

  int del(MDB_dbi dbi, ByteView key) {
    MDB_val k = val(key);
    return mdb_del(txn_, dbi, &k, nullptr);
  }

  // Returns the raw LMDB code so that the caller can tell MDB_KEYEXIST and MDB_MAP_FULL apart.
  int put(MDB_dbi dbi, ByteView key, ByteView value, unsigned flags) {
    MDB_val k = val(key), v = val(value);
    return mdb_put(txn_, dbi, &k, &v, flags);
  }

 private:
  MDB_txn* txn_ = nullptr;
  bool write_ = false;
};

class Cursor {
 public:
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  ~Cursor() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
  }
  static Result<std::unique_ptr<Cursor>> open(const Txn& txn, MDB_dbi dbi) {
    MDB_cursor* c = nullptr;
    int rc = mdb_cursor_open(txn.get(), dbi, &c);
    if (rc != 0) return error(rc, "cannot open a cursor");
    return std::unique_ptr<Cursor>(new Cursor(c));
  }
  // MDB_SET_RANGE, MDB_NEXT, MDB_LAST...; returns the LMDB code (MDB_NOTFOUND at the end).
  int get(MDB_val& key, MDB_val& value, MDB_cursor_op op) {
    return mdb_cursor_get(cursor_, &key, &value, op);
  }
  // Deletes the record the cursor is at; returns the LMDB code.
  int del() { return mdb_cursor_del(cursor_, 0); }
  // Stores a record (MDB_APPEND...) and leaves the cursor at it; returns the LMDB code.
  int put(ByteView key, ByteView value, unsigned flags) {
    MDB_val k = val(key), v = val(value);
    return mdb_cursor_put(cursor_, &k, &v, flags);
  }

 private:
  explicit Cursor(MDB_cursor* c) : cursor_(c) {}
  MDB_cursor* cursor_;
};

}  // namespace evl::lmdb
