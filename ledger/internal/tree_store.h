// ledger/internal/tree_store.h — the RFC 6962 tree and the checkpoints inside LMDB.
//
// The "tree" database maps a stored-hash index (8-byte big-endian, Go tlog's layout, see
// ledger/merkle.h) to a 32-byte hash; appending entry n appends its stored hashes in the same
// write transaction as the entry. The "checkpoints" database maps a tree size (8-byte
// big-endian) to the signed checkpoint note for that size, one per commit.
// Everything here works inside a caller's transaction; views are valid until it ends.
#pragma once

#include <lmdb.h>

#include <optional>
#include <string>

#include "keys/checkpoint.h"
#include "ledger/internal/lmdb.h"
#include "ledger/merkle.h"

namespace evl::tree_store {

// The stored hash with index `index` from its LMDB value; kCorrupt unless it is 32 bytes.
Result<Hash> stored_hash(ByteView value, uint64_t index);

// Reads stored hashes through one transaction (its own writes included).
class TxnHashReader final : public HashReader {
 public:
  TxnHashReader(const lmdb::Txn& txn, MDB_dbi tree) : txn_(txn), tree_(tree) {}
  Result<std::vector<Hash>> read_hashes(std::span<const uint64_t> indexes) const override;

 private:
  const lmdb::Txn& txn_;
  MDB_dbi tree_;
};

// The right edge of the tree: the roots of its complete subtrees, left to right. It yields the
// stored hashes of the next entry without reading any (the writer keeps one in memory, so an
// append touches the tree database only to write).
class TreeEdge {
 public:
  // Loads the edge of the tree of `size` entries from its stored hashes.
  Status load(const HashReader& reader, uint64_t size);
  // Adds entry size()'s leaf; returns its stored hashes (the leaf, then the nodes it completes).
  std::vector<Hash> append(const Hash& leaf);
  uint64_t size() const { return size_; }

 private:
  struct Node {
    int level;
    Hash hash;
  };
  std::vector<Node> nodes_;  // decreasing levels
  uint64_t size_ = 0;
};

// Appends the stored hashes of entry `n` (the tree must hold exactly n entries, and `edge`
// be its right edge, which this advances). Returns the raw LMDB code of a failed put
// (MDB_MAP_FULL is worth a retry) in `rc`, or a Status.
Status append_record(lmdb::Txn& txn, MDB_dbi tree, uint64_t n, const Hash& leaf, TreeEdge& edge,
                     int& rc);

// The number of entries whose stored hashes are present: the inverse of stored_hash_count.
Result<uint64_t> tree_size(const lmdb::Txn& txn, MDB_dbi tree);

// The newest stored checkpoint, parsed (no signature check), or nullopt when there is none.
Result<std::optional<Checkpoint>> last_checkpoint(const lmdb::Txn& txn, MDB_dbi checkpoints);

}  // namespace evl::tree_store
