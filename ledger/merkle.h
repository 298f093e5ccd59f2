// ledger/merkle.h — the RFC 6962 Merkle tree as pure math over stored hashes: leaf and node
// hashes, the stored-hash layout, tree hashes, inclusion and consistency proofs, and their
// verification (RFC 9162 §2.1.3.2 and §2.1.4.2). The algorithms mirror Go's
// golang.org/x/mod/sumdb/tlog, so its proofs and ours are the same bytes. No storage, no I/O:
// hashes come from a HashReader.
//
// Stored-hash layout (Crosby and Wallach §3.3, as Go's tlog): the hash at tree level L, position
// n (the root of leaves [n·2^L, (n+1)·2^L)) lives at stored_hash_index(L, n). Appending record n
// appends exactly stored_hashes_for_record(n, ...) to the end of that sequence, so storage is a
// dense append-only array of stored_hash_count(size) hashes.
//
// Verification policy (the shared vectors'): a consistency proof from size 0 is an error, and so
// is any hash that is not 32 bytes (the byte overloads check that).
//
// Thread safety: the free functions are pure and thread-safe. A HashReader is shared between
// threads only if its implementation says so. MemoryHashStore allows concurrent const calls,
// but append() must not run concurrently with anything else on the same store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "events/bytes.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

using Hash = Digest;
inline constexpr size_t kHashSize = 32;

// SHA-256(0x00 ‖ entry).
Hash leaf_hash(ByteView entry);
// SHA-256(0x01 ‖ left ‖ right).
Hash node_hash(const Hash& left, const Hash& right);
// MTH({}) = SHA-256 of the empty string: the root of the tree of size 0.
Hash empty_tree_hash();

// Converts a hash received as bytes (JSON, a proof file, a tile) into a Hash. Anything but
// exactly 32 bytes is kRejected; `what` names it in the message ("root", "proof hash 2").
Result<Hash> parse_hash(ByteView bytes, std::string_view what);

// Position of a node in the tree: `level` 0 holds leaf hashes.
struct TreeNode {
  int level = 0;
  uint64_t n = 0;
  bool operator==(const TreeNode&) const = default;
};

// Dense storage index of node (level, n). Level is 0..63; n·2^level must fit in 63 bits.
uint64_t stored_hash_index(int level, uint64_t n);
// The inverse: split_stored_hash_index(stored_hash_index(l, n)) == {l, n}.
TreeNode split_stored_hash_index(uint64_t index);
// Number of stored hashes for a tree of n records.
uint64_t stored_hash_count(uint64_t n);

// Reads stored hashes by index (see stored_hash_index).
class HashReader {
 public:
  virtual ~HashReader() = default;
  // Returns exactly one hash per index, in the order asked. kNotFound when an index is not
  // stored; kIo or kCorrupt when the backing store fails. The algorithms here always ask in
  // increasing order, which lets an implementation read sequentially.
  virtual Result<std::vector<Hash>> read_hashes(std::span<const uint64_t> indexes) const = 0;
};

// The hashes to append, at stored_hash_index(0, n), when record n with leaf hash `leaf` is
// added: the leaf hash, then the root of every subtree that record completes (at most
// 1 + log2 n, just under two on average). Reads up to log2 n earlier hashes from `reader`.
Result<std::vector<Hash>> stored_hashes_for_record(uint64_t n, const Hash& leaf,
                                                   const HashReader& reader);

// The root of the tree of the first n records (empty_tree_hash() for n = 0). One read of at
// most 1 + log2 n hashes.
Result<Hash> tree_hash(uint64_t n, const HashReader& reader);

// Inclusion proof (RFC 6962 PATH) of record n in the tree of size t; kUsage unless n < t.
Result<std::vector<Hash>> prove_record(uint64_t t, uint64_t n, const HashReader& reader);

// Consistency proof (RFC 6962 PROOF) that the tree of size t extends the tree of size n;
// kUsage unless 1 <= n <= t. Empty when n == t.
Result<std::vector<Hash>> prove_tree(uint64_t t, uint64_t n, const HashReader& reader);

// RFC 9162 §2.1.3.2. Ok when `proof` shows that leaf hash `leaf` is record `index` of the tree
// of size `size` whose root is `root`; kRejected with the reason otherwise.
[[nodiscard]] Status verify_inclusion(uint64_t index, uint64_t size, const Hash& leaf,
                                      std::span<const Hash> proof, const Hash& root);

// RFC 9162 §2.1.4.2. Ok when `proof` shows that the tree of size `size2` with root `root2`
// extends the tree of size `size1` with root `root1`. Equal sizes need equal roots and an
// empty proof; size1 = 0 and size1 > size2 are kRejected, as is any failed check.
[[nodiscard]] Status verify_consistency(uint64_t size1, uint64_t size2,
                                        std::span<const Hash> proof, const Hash& root1,
                                        const Hash& root2);

// The root of the first `size1` entries as the tree of size `size2` with root `root2` holds
// them, from its consistency path: RFC 9162's consistency proof from size1 to size2 with, when
// size1 is a power of two, that prefix's hash in front (where §2.1.4.2 step 2 puts the old
// root). Every hash of the path enters the new root, so a path that leads to `root2` fixes the
// prefix's root; one that differs from a signed root of size1 proves that the two trees are
// not consistent. kRejected unless 0 < size1 < size2, the path has its length and leads to
// root2.
Result<Hash> prefix_root_from_path(uint64_t size1, uint64_t size2, std::span<const Hash> path,
                                   const Hash& root2);
// The consistency path of the tree of size t for its prefix of n entries (0 < n < t), as
// prefix_root_from_path takes it.
Result<std::vector<Hash>> prove_prefix_path(uint64_t t, uint64_t n, const HashReader& reader);

// The same for hashes received as bytes: any that is not 32 bytes is kRejected first.
[[nodiscard]] Status verify_inclusion(uint64_t index, uint64_t size, ByteView leaf,
                                      std::span<const Bytes> proof, ByteView root);
[[nodiscard]] Status verify_consistency(uint64_t size1, uint64_t size2,
                                        std::span<const Bytes> proof, ByteView root1,
                                        ByteView root2);

// A growing tree held in memory: the stored hashes of every record appended so far. For tests,
// tools and rebuilding a ledger's tree; the LMDB ledger stores the same sequence.
class MemoryHashStore final : public HashReader {
 public:
  // Adds the next record, given its leaf hash.
  void append(const Hash& leaf);

  // Number of records.
  uint64_t size() const { return size_; }
  // Root of the tree of all records.
  Hash root() const;
  // The stored hashes, in stored-hash order (stored_hash_count(size()) of them).
  const std::vector<Hash>& stored_hashes() const { return hashes_; }

  Result<std::vector<Hash>> read_hashes(std::span<const uint64_t> indexes) const override;

 private:
  std::vector<Hash> hashes_;
  uint64_t size_ = 0;
};

}  // namespace evl
