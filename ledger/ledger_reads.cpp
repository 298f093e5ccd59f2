#include "ledger/internal/ledger_impl.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "ledger/internal/lmdb_kv.h"
#include "ledger/internal/tree_store.h"

namespace evl::ledger_internal {

namespace {

// Visits the values under the dense 8-byte big-endian keys [from, to) of `dbi` in order;
// a missing key is corruption, named as `what` and its index.
Status scan_dense(const lmdb::Txn& txn, MDB_dbi dbi, uint64_t from, uint64_t to,
                  const char* what, const std::function<Status(uint64_t, ByteView)>& visit) {
  auto cursor = lmdb::Cursor::open(txn, dbi);
  if (!cursor) return cursor.error();
  auto start = u64_be(from);
  MDB_val k = lmdb::val(ByteView(start)), v;
  uint64_t expected = from;
  for (int rc = (*cursor)->get(k, v, MDB_SET_RANGE); expected < to;
       rc = (*cursor)->get(k, v, MDB_NEXT)) {
    auto name = [&] { return std::string(what) + " " + std::to_string(expected); };
    if (rc == MDB_NOTFOUND) return corrupt(name() + " is missing: the database ends early");
    if (rc != 0) return lmdb::error(rc, "cannot read " + name());
    uint64_t index = k.mv_size == 8 ? get_u64_be(static_cast<const uint8_t*>(k.mv_data)) : ~0ull;
    if (index != expected) {
      return corrupt(name() + " is missing: found key " + hex_encode(lmdb::view(k)) +
                     " in its place");
    }
    EVL_RETURN_IF_ERROR(visit(index, lmdb::view(v)));
    ++expected;
  }
  return Status::ok();
}

// The log index stored under `key` in one of the digest indexes (ids, manifests), or nullopt
// when there is none; kCorrupt naming the `record` when it is not 8 bytes.
Result<std::optional<uint64_t>> index_under(const lmdb::Txn& txn, MDB_dbi dbi, const Digest& key,
                                            std::string_view record) {
  auto v = txn.get(dbi, ByteView(key));
  if (!v) {
    if (v.error().code() == Code::kNotFound) return std::optional<uint64_t>();
    return v.error();
  }
  if (v->size() != 8) {
    return corrupt(std::string(record) + " of " + digest_text(key) + " is not 8 bytes");
  }
  return std::optional<uint64_t>(get_u64_be(v->data()));
}

}  // namespace

uint64_t LedgerImpl::commit_id() const {
  MDB_envinfo info;
  if (mdb_env_info(env_, &info) != 0) return 0;
  return static_cast<uint64_t>(info.me_last_txnid);
}

Result<Bytes> LedgerImpl::entry(uint64_t index) const {
  return with_read([&](lmdb::Txn& txn) -> Result<Bytes> {
    auto v = txn.get(entries_, u64_be(index));
    if (!v) {
      if (v.error().code() == Code::kNotFound) {
        auto size = log_size(txn);  // this snapshot's: another process may write the ledger
        return not_found("no entry at index " + std::to_string(index) + " (the log has " +
                         (size ? std::to_string(*size) : std::string("fewer")) + " entries)");
      }
      return v.error();
    }
    return Bytes(v->begin(), v->end());
  });
}

Result<uint64_t> LedgerImpl::find(const Digest& id) const {
  return with_read([&](lmdb::Txn& txn) -> Result<uint64_t> {
    auto index = index_under(txn, ids_, id, "id record");
    if (!index) return index.error();
    if (!*index) return not_found("no event " + digest_text(id) + " in this ledger");
    return **index;
  });
}

Result<uint64_t> LedgerImpl::find_manifest(const Digest& manifest) const {
  return with_read([&](lmdb::Txn& txn) -> Result<uint64_t> {
    auto index = index_under(txn, manifests_, manifest, "manifest record");
    if (!index) return index.error();
    if (!*index) return not_found("no event carries manifest " + digest_text(manifest));
    return **index;
  });
}

Status LedgerImpl::scan(uint64_t from, uint64_t to, const EntryVisitor& visit) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    Bytes copy;
    return scan_dense(txn, entries_, from, to, "entry", [&](uint64_t index, ByteView bytes) {
      return visit(index, read_out(bytes, copy));
    });
  });
}

ByteView LedgerImpl::read_out(ByteView value, Bytes& copy) const {
  const auto at = reinterpret_cast<uintptr_t>(value.data());
  if (value.size() < overflow_from_ || data_fd_ < 0 || at < map_begin_ ||
      at + value.size() > map_begin_ + map_length_) {
    return value;
  }
  copy.resize(value.size());
  for (size_t done = 0; done < value.size();) {
    ssize_t n = ::pread(data_fd_, copy.data() + done, value.size() - done,
                        static_cast<off_t>(at - map_begin_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return value;  // read it through the map after all
    done += static_cast<size_t>(n);
  }
  return copy;
}

Result<Hash> LedgerImpl::root(uint64_t size) const {
  return with_read([&](lmdb::Txn& txn) -> Result<Hash> {
    return tree_hash(size, tree_store::TxnHashReader(txn, tree_));
  });
}

Result<std::vector<Hash>> LedgerImpl::inclusion_proof(uint64_t index, uint64_t size) const {
  return with_read([&](lmdb::Txn& txn) -> Result<std::vector<Hash>> {
    return prove_record(size, index, tree_store::TxnHashReader(txn, tree_));
  });
}

Result<std::vector<Hash>> LedgerImpl::consistency_proof(uint64_t from, uint64_t to) const {
  return with_read([&](lmdb::Txn& txn) -> Result<std::vector<Hash>> {
    return prove_tree(to, from, tree_store::TxnHashReader(txn, tree_));
  });
}

Status LedgerImpl::read_tree(
    const std::function<Status(const HashReader&, uint64_t)>& fn) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto size = tree_store::tree_size(txn, tree_);
    if (!size) return size.error();
    return fn(tree_store::TxnHashReader(txn, tree_), *size);
  });
}

Status LedgerImpl::scan_stored_hashes(
    uint64_t from, uint64_t to, const std::function<Status(uint64_t, const Hash&)>& visit) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    return scan_dense(txn, tree_, from, to, "stored tree hash",
                      [&](uint64_t index, ByteView value) -> Status {
                        auto hash = tree_store::stored_hash(value, index);
                        return hash ? visit(index, *hash) : hash.error();
                      });
  });
}

Result<std::string> LedgerImpl::checkpoint(std::optional<uint64_t> size) const {
  return with_read([&](lmdb::Txn& txn) -> Result<std::string> {
    if (size) {
      auto v = txn.get(checkpoints_, u64_be(*size));
      if (!v) {
        return not_found("no checkpoint was signed at size " + std::to_string(*size) +
                         " (one is signed at the end of every commit)");
      }
      return std::string(as_chars(*v));
    }
    auto cursor = lmdb::Cursor::open(txn, checkpoints_);
    if (!cursor) return cursor.error();
    MDB_val k, v;
    int rc = (*cursor)->get(k, v, MDB_LAST);
    if (rc == MDB_NOTFOUND) return not_found("the ledger has no checkpoint yet");
    if (rc != 0) return lmdb::error(rc, "cannot read the checkpoints");
    return std::string(as_chars(lmdb::view(v)));
  });
}

Status LedgerImpl::scan_checkpoints(
    uint64_t from_size, const std::function<Status(uint64_t, std::string_view)>& visit) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto cursor = lmdb::Cursor::open(txn, checkpoints_);
    if (!cursor) return cursor.error();
    auto start = u64_be(from_size);
    MDB_val k = lmdb::val(ByteView(start)), v;
    int rc;
    for (rc = (*cursor)->get(k, v, MDB_SET_RANGE); rc == 0; rc = (*cursor)->get(k, v, MDB_NEXT)) {
      if (k.mv_size != 8) return corrupt("a checkpoint key is not 8 bytes");
      EVL_RETURN_IF_ERROR(visit(get_u64_be(static_cast<const uint8_t*>(k.mv_data)),
                                as_chars(lmdb::view(v))));
    }
    return rc == MDB_NOTFOUND ? Status::ok() : lmdb::error(rc, "cannot read the checkpoints");
  });
}

Result<std::string> LedgerImpl::statement(std::optional<uint64_t> size) const {
  if (!has_statements_) {
    return not_found("ledger " + dir_ + " has no statements: it was written by an evledger "
                     "from before them; any append or 'evledger rebuild' adds the newest");
  }
  return with_read([&](lmdb::Txn& txn) -> Result<std::string> {
    if (size) {
      auto v = txn.get(statements_, u64_be(*size));
      if (!v && v.error().code() == Code::kNotFound) {
        return not_found("no statement was signed at size " + std::to_string(*size) +
                         " (one is signed with every checkpoint a writer with projections "
                         "makes)");
      }
      if (!v) return v.error();
      return std::string(as_chars(*v));
    }
    auto cursor = lmdb::Cursor::open(txn, statements_);
    if (!cursor) return cursor.error();
    MDB_val k, v;
    int rc = (*cursor)->get(k, v, MDB_LAST);
    if (rc == MDB_NOTFOUND) return not_found("the ledger has no statement yet");
    if (rc != 0) return lmdb::error(rc, "cannot read the statements");
    return std::string(as_chars(lmdb::view(v)));
  });
}

Status LedgerImpl::scan_statements(
    const std::function<Status(uint64_t, std::string_view)>& visit) const {
  if (!has_statements_) return Status::ok();
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto cursor = lmdb::Cursor::open(txn, statements_);
    if (!cursor) return cursor.error();
    MDB_val k, v;
    int rc;
    for (rc = (*cursor)->get(k, v, MDB_FIRST); rc == 0; rc = (*cursor)->get(k, v, MDB_NEXT)) {
      if (k.mv_size != 8) return corrupt("a statement key is not 8 bytes");
      EVL_RETURN_IF_ERROR(visit(get_u64_be(static_cast<const uint8_t*>(k.mv_data)),
                                as_chars(lmdb::view(v))));
    }
    return rc == MDB_NOTFOUND ? Status::ok() : lmdb::error(rc, "cannot read the statements");
  });
}

Result<VerifierKey> LedgerImpl::log_verifier() const {
  KeyPolicy keys = policy();
  if (!keys.genesis()) return not_found("the ledger has no genesis yet");
  return VerifierKey::of(keys.genesis()->origin, keys.genesis()->log_key);
}

Result<uint64_t> LedgerImpl::log_size(const lmdb::Txn& txn) const {
  auto cursor = lmdb::Cursor::open(txn, entries_);
  if (!cursor) return cursor.error();
  MDB_val k, v;
  int rc = (*cursor)->get(k, v, MDB_LAST);
  if (rc == MDB_NOTFOUND) return uint64_t{0};
  if (rc != 0) return lmdb::error(rc, "cannot read the last entry");
  if (k.mv_size != 8) return corrupt("entries database has a key that is not 8 bytes");
  return get_u64_be(static_cast<const uint8_t*>(k.mv_data)) + 1;
}

EntryScanner LedgerImpl::scanner(lmdb::Txn& txn) const {
  // One cursor walk (not a descent per entry), dropping the pages it read every 512 entries:
  // a rebuild reads the whole log, and its pages would otherwise all stay mapped (6 GB at 10^6
  // catalog events). The caller holds resize_mu_ (the writer, or rebuild_state).
  return [this, &txn](uint64_t from, uint64_t to,
                      const std::function<Status(uint64_t, ByteView)>& visit) -> Status {
    constexpr uint64_t kReleaseEvery = 512;
    Bytes copy;
    Status scanned = scan_dense(txn, entries_, from, to, "entry",
                                [&](uint64_t index, ByteView bytes) -> Status {
                                  EVL_RETURN_IF_ERROR(visit(index, read_out(bytes, copy)));
                                  if ((index + 1) % kReleaseEvery == 0) release_map_locked();
                                  return Status::ok();
                                });
    release_map_locked();
    return scanned;
  };
}

ManifestFinder LedgerImpl::manifest_finder(lmdb::Txn& txn) const {
  return [this, &txn](const Digest& manifest,
                      const std::function<Status(uint64_t, ByteView)>& visit) -> Status {
    auto found = index_under(txn, manifests_, manifest, "manifest record");
    if (!found) return found.error();
    if (!*found) return Status::ok();  // no event carries it
    const uint64_t index = **found;
    auto entry = txn.get(entries_, u64_be(index));
    if (!entry) {
      return corrupt("the manifests index names entry " + std::to_string(index) + " for " +
                     digest_text(manifest) + ", which is missing: " + entry.error().message());
    }
    Bytes copy;
    return visit(index, read_out(*entry, copy));
  };
}

Status LedgerImpl::read_state(
    const std::function<Status(const KeyValueStore&, uint64_t)>& fn) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    lmdb::TxnKeyValueStore state(txn, state_, false);
    state.release_pages_with([this] { release_map_locked(); });  // readers may scan it all
    auto size = log_size(txn);
    if (!size) return size.error();
    return fn(state, *size);
  });
}

void LedgerImpl::locate_map() {
  // LMDB does not publish its map's address (me_mapaddr is only set for MDB_FIXEDMAP): find
  // the mapping of data.mdb in /proc/self/maps. Called when the map is made or moved.
  map_begin_ = 0;
  map_length_ = 0;
  std::error_code ec;
  std::string data_file =
      std::filesystem::canonical(std::filesystem::path(dir_) / "db" / "data.mdb", ec).string();
  if (ec) return;
  std::ifstream maps("/proc/self/maps");
  uintptr_t first = 0, last = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < data_file.size() ||
        line.compare(line.size() - data_file.size(), data_file.size(), data_file) != 0) {
      continue;
    }
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2 && end > begin) {
      first = first == 0 ? begin : std::min(first, begin);
      last = std::max(last, end);
    }
  }
  map_begin_ = first;
  map_length_ = last - first;
}

void LedgerImpl::release_map_locked() const {
  if (map_length_ > 0) {
    ::madvise(reinterpret_cast<void*>(map_begin_), map_length_, MADV_DONTNEED);
  }
}

void LedgerImpl::release_mapped_pages() const {
  std::shared_lock lock(resize_mu_);  // the map must not move while we advise on it
  release_map_locked();
}

Status LedgerImpl::scan_ids(
    const std::function<Status(const Digest&, uint64_t)>& visit) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    constexpr uint64_t kReleaseEveryRecords = 4096;
    auto cursor = lmdb::Cursor::open(txn, ids_);
    if (!cursor) return cursor.error();
    MDB_val k, v;
    uint64_t records = 0;
    int rc = (*cursor)->get(k, v, MDB_FIRST);
    for (; rc == 0; rc = (*cursor)->get(k, v, MDB_NEXT)) {
      if (k.mv_size != sizeof(Digest) || v.mv_size != 8) {
        return corrupt("the ids database has a record of " + std::to_string(k.mv_size) +
                       " + " + std::to_string(v.mv_size) +
                       " bytes; an id record is a 32-byte event id and an 8-byte index");
      }
      Digest id;
      std::memcpy(id.data(), k.mv_data, id.size());
      EVL_RETURN_IF_ERROR(visit(id, get_u64_be(static_cast<const uint8_t*>(v.mv_data))));
      // The leaves lie all over the map (each with the 15 pages the kernel maps around it):
      // drop them now and then, so that a pass over the whole index stays small.
      if (++records % kReleaseEveryRecords == 0) release_map_locked();
    }
    release_map_locked();
    if (rc != MDB_NOTFOUND) return lmdb::error(rc, "cannot read the ids database");
    return Status::ok();
  });
}

Result<uint64_t> LedgerImpl::id_count() const {
  return with_read([&](lmdb::Txn& txn) -> Result<uint64_t> {
    MDB_stat st;
    int rc = mdb_stat(txn.get(), ids_, &st);
    if (rc != 0) return lmdb::error(rc, "cannot read the ids database");
    return static_cast<uint64_t>(st.ms_entries);
  });
}

}  // namespace evl::ledger_internal
