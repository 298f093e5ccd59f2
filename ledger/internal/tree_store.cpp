#include "ledger/internal/tree_store.h"

#include <cstring>

namespace evl::tree_store {

Result<Hash> stored_hash(ByteView value, uint64_t index) {
  if (value.size() != kHashSize) {
    return corrupt("stored tree hash " + std::to_string(index) + " is " +
                   std::to_string(value.size()) + " bytes, not 32");
  }
  Hash hash;
  std::memcpy(hash.data(), value.data(), kHashSize);
  return hash;
}

Result<std::vector<Hash>> TxnHashReader::read_hashes(std::span<const uint64_t> indexes) const {
  std::vector<Hash> out;
  out.reserve(indexes.size());
  for (uint64_t index : indexes) {
    auto v = txn_.get(tree_, u64_be(index));
    if (!v) {
      return corrupt("stored tree hash " + std::to_string(index) + " is missing: " +
                     v.error().message());
    }
    auto hash = stored_hash(*v, index);
    if (!hash) return hash.error();
    out.push_back(*hash);
  }
  return out;
}

Status TreeEdge::load(const HashReader& reader, uint64_t size) {
  std::vector<uint64_t> indexes;
  std::vector<int> levels;
  uint64_t start = 0;
  for (int level = 63; level >= 0; --level) {
    uint64_t width = uint64_t{1} << level;
    if ((size & width) == 0) continue;
    indexes.push_back(stored_hash_index(level, start >> level));
    levels.push_back(level);
    start += width;
  }
  auto hashes = reader.read_hashes(indexes);
  if (!hashes) return hashes.error();
  nodes_.clear();
  for (size_t i = 0; i < levels.size(); ++i) nodes_.push_back({levels[i], (*hashes)[i]});
  size_ = size;
  return Status::ok();
}

std::vector<Hash> TreeEdge::append(const Hash& leaf) {
  std::vector<Hash> stored{leaf};
  nodes_.push_back({0, leaf});
  while (nodes_.size() >= 2 && nodes_[nodes_.size() - 2].level == nodes_.back().level) {
    Node right = nodes_.back();
    nodes_.pop_back();
    Node& left = nodes_.back();
    left.hash = node_hash(left.hash, right.hash);
    left.level++;
    stored.push_back(left.hash);
  }
  size_++;
  return stored;
}

Status append_record(lmdb::Txn& txn, MDB_dbi tree, uint64_t n, const Hash& leaf, TreeEdge& edge,
                     int& rc) {
  rc = 0;
  EVL_ASSERT(edge.size() == n);
  uint64_t index = stored_hash_count(n);
  for (const Hash& h : edge.append(leaf)) {
    rc = txn.put(tree, u64_be(index++), ByteView(h), MDB_APPEND);
    if (rc != 0) return lmdb::error(rc, "cannot store a tree hash");
  }
  return Status::ok();
}

Result<uint64_t> tree_size(const lmdb::Txn& txn, MDB_dbi tree) {
  MDB_stat st;
  int rc = mdb_stat(txn.get(), tree, &st);
  if (rc != 0) return lmdb::error(rc, "cannot read the tree database");
  uint64_t count = st.ms_entries;
  // stored_hash_count is increasing: find n with stored_hash_count(n) == count.
  uint64_t lo = 0, hi = count;  // stored_hash_count(n) >= n
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (stored_hash_count(mid) <= count) lo = mid; else hi = mid - 1;
  }
  if (stored_hash_count(lo) != count) {
    return corrupt("the tree database holds " + std::to_string(count) +
                   " hashes, which is no whole number of entries");
  }
  return lo;
}

Result<std::optional<Checkpoint>> last_checkpoint(const lmdb::Txn& txn, MDB_dbi checkpoints) {
  auto cursor = lmdb::Cursor::open(txn, checkpoints);
  if (!cursor) return cursor.error();
  MDB_val k, v;
  int rc = (*cursor)->get(k, v, MDB_LAST);
  if (rc == MDB_NOTFOUND) return std::optional<Checkpoint>();
  if (rc != 0) return lmdb::error(rc, "cannot read the last checkpoint");
  std::string_view note = as_chars(lmdb::view(v));
  auto blank = note.find("\n\n");
  if (blank == std::string_view::npos) return corrupt("the last stored checkpoint is not a note");
  auto parsed = parse_checkpoint_body(note.substr(0, blank + 1));
  if (!parsed) return corrupt("the last stored checkpoint: " + parsed.error().message());
  return std::optional<Checkpoint>(std::move(*parsed));
}

}  // namespace evl::tree_store
