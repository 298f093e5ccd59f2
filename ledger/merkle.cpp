#include "ledger/merkle.h"

#include <bit>
#include <cstring>
#include <string>

namespace evl {
namespace {

// Largest power of two <= x, for x >= 1: the left part of the range [lo, lo + x) that is a
// complete subtree. RFC 6962 splits a tree of size n at bit_floor(n - 1).
uint64_t left_subtree_size(uint64_t x) { return std::bit_floor(x); }
uint64_t split_point(uint64_t size) { return std::bit_floor(size - 1); }

std::string hash_text(const Hash& h) { return base64_encode(h); }

// Reads `indexes`, insisting on one hash per index: a reader that returns a different count is
// broken, and building a tree from its answer would silently be wrong.
Result<std::vector<Hash>> read_exact(const HashReader& reader, std::span<const uint64_t> indexes) {
  if (indexes.empty()) return std::vector<Hash>{};
  auto hashes = reader.read_hashes(indexes);
  if (!hashes) return hashes;
  if (hashes->size() != indexes.size()) {
    return corrupt("hash reader returned " + std::to_string(hashes->size()) + " hashes for " +
                   std::to_string(indexes.size()) + " stored hash indexes; it must return one each");
  }
  return hashes;
}

// Consumes hashes in the order the *_indexes functions asked for them.
class HashCursor {
 public:
  explicit HashCursor(const std::vector<Hash>& hashes) : hashes_(hashes) {}
  const Hash& take() {
    EVL_ASSERT(pos_ < hashes_.size());
    return hashes_[pos_++];
  }
  bool done() const { return pos_ == hashes_.size(); }

 private:
  const std::vector<Hash>& hashes_;
  size_t pos_ = 0;
};

// The stored hashes whose combination is MTH(D[lo:hi]): the complete subtrees, largest first.
void subtree_indexes(uint64_t lo, uint64_t hi, std::vector<uint64_t>& need) {
  while (lo < hi) {
    uint64_t k = left_subtree_size(hi - lo);
    int level = std::countr_zero(k);
    EVL_ASSERT((lo & (k - 1)) == 0);
    need.push_back(stored_hash_index(level, lo >> level));
    lo += k;
  }
}

Hash subtree_hash(uint64_t lo, uint64_t hi, HashCursor& cursor) {
  std::vector<Hash> parts;
  for (; lo < hi; lo += left_subtree_size(hi - lo)) parts.push_back(cursor.take());
  EVL_ASSERT(!parts.empty());
  // The complete subtrees are folded right to left, as MTH's recursion on the right side does.
  Hash h = parts.back();
  for (size_t i = parts.size() - 1; i-- > 0;) h = node_hash(parts[i], h);
  return h;
}

// RFC 6962 §2.1.1 PATH(n, D[lo:hi]), as stored hash indexes.
void leaf_proof_indexes(uint64_t lo, uint64_t hi, uint64_t n, std::vector<uint64_t>& need) {
  EVL_ASSERT(lo <= n && n < hi);
  if (lo + 1 == hi) return;
  uint64_t k = split_point(hi - lo);
  if (n < lo + k) {
    leaf_proof_indexes(lo, lo + k, n, need);
    subtree_indexes(lo + k, hi, need);
  } else {
    subtree_indexes(lo, lo + k, need);
    leaf_proof_indexes(lo + k, hi, n, need);
  }
}

// Appends PATH(n, D[lo:hi]) to `proof`, deepest hash first.
void leaf_proof(uint64_t lo, uint64_t hi, uint64_t n, HashCursor& cursor, std::vector<Hash>& proof) {
  if (lo + 1 == hi) return;  // the verifier holds the leaf hash itself
  uint64_t k = split_point(hi - lo);
  if (n < lo + k) {
    leaf_proof(lo, lo + k, n, cursor, proof);
    proof.push_back(subtree_hash(lo + k, hi, cursor));
  } else {
    Hash left = subtree_hash(lo, lo + k, cursor);
    leaf_proof(lo + k, hi, n, cursor, proof);
    proof.push_back(left);
  }
}

// RFC 6962 §2.1.2 SUBPROOF(n, D[lo:hi], lo == 0), as stored hash indexes.
void tree_proof_indexes(uint64_t lo, uint64_t hi, uint64_t n, std::vector<uint64_t>& need) {
  EVL_ASSERT(lo < n && n <= hi);
  if (n == hi) {
    if (lo != 0) subtree_indexes(lo, hi, need);
    return;
  }
  uint64_t k = split_point(hi - lo);
  if (n <= lo + k) {
    tree_proof_indexes(lo, lo + k, n, need);
    subtree_indexes(lo + k, hi, need);
  } else {
    subtree_indexes(lo, lo + k, need);
    tree_proof_indexes(lo + k, hi, n, need);
  }
}

void tree_proof(uint64_t lo, uint64_t hi, uint64_t n, HashCursor& cursor, std::vector<Hash>& proof) {
  if (n == hi) {
    // The old tree itself needs no hash: the verifier holds its root.
    if (lo != 0) proof.push_back(subtree_hash(lo, hi, cursor));
    return;
  }
  uint64_t k = split_point(hi - lo);
  if (n <= lo + k) {
    tree_proof(lo, lo + k, n, cursor, proof);
    proof.push_back(subtree_hash(lo + k, hi, cursor));
  } else {
    Hash left = subtree_hash(lo, lo + k, cursor);
    tree_proof(lo + k, hi, n, cursor, proof);
    proof.push_back(left);
  }
}

// Proof lengths fixed by the tree shape (as transparency-dev/merkle computes them), so that a
// wrong-length proof is refused with a message that says so rather than as a root mismatch.
// `inner` hashes lie below the point where the leaf's path and the tree's right edge meet;
// `border` hashes are the left siblings above it.
uint64_t inclusion_proof_size(uint64_t index, uint64_t size) {
  int inner = std::bit_width(index ^ (size - 1));
  return static_cast<uint64_t>(inner + std::popcount(index >> inner));
}

// For 0 < size1 < size2.
uint64_t consistency_proof_size(uint64_t size1, uint64_t size2) {
  int inner = std::bit_width((size1 - 1) ^ (size2 - 1));
  int border = std::popcount((size1 - 1) >> inner);
  int shift = std::countr_zero(size1);
  uint64_t seed = std::has_single_bit(size1) ? 0 : 1;  // the old root is a proof hash unless
                                                       // the old tree is one complete subtree
  return seed + static_cast<uint64_t>(inner - shift + border);
}

std::string sizes_text(uint64_t size1, uint64_t size2) {
  return "consistency proof from size " + std::to_string(size1) + " to size " +
         std::to_string(size2);
}

// RFC 9162 §2.1.4.2 steps 3 to 6 over `path` (the proof with, for a power-of-two old size, the
// old subtree's hash in front, as step 2 puts it), for 0 < size1 < size2: the old and the new
// root the path leads to.
Result<std::pair<Hash, Hash>> run_consistency_path(const std::string& what, uint64_t size1,
                                                   uint64_t size2, std::span<const Hash> path) {
  if (path.empty()) return rejected(what + ": the proof is empty");
  uint64_t fn = size1 - 1;
  uint64_t sn = size2 - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  Hash fr = path[0];
  Hash sr = path[0];
  for (size_t i = 1; i < path.size(); ++i) {
    const Hash& c = path[i];
    if (sn == 0) return rejected(what + ": the proof is longer than the path to the root");
    if ((fn & 1) != 0 || fn == sn) {
      fr = node_hash(c, fr);
      sr = node_hash(c, sr);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      sr = node_hash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return rejected(what + ": the proof is shorter than the path to the root");
  return std::pair{fr, sr};
}

// RFC 9162 §2.1.4.2 steps 2 to 7 for 0 < size1 < size2.
Status run_consistency_proof(const std::string& what, uint64_t size1, uint64_t size2,
                             std::span<const Hash> proof, const Hash& root1, const Hash& root2) {
  // A power-of-two old tree is one complete subtree whose root the verifier already holds, so
  // the proof omits it.
  std::vector<Hash> path;
  path.reserve(proof.size() + 1);
  if (std::has_single_bit(size1)) path.push_back(root1);
  path.insert(path.end(), proof.begin(), proof.end());
  auto roots = run_consistency_path(what, size1, size2, path);
  if (!roots) return roots.error();
  const auto& [fr, sr] = *roots;
  if (fr != root1) {
    return rejected(what + ": the proof leads to old root " + hash_text(fr) + ", expected " +
                    hash_text(root1));
  }
  if (sr != root2) {
    return rejected(what + ": the proof leads to new root " + hash_text(sr) + ", expected " +
                    hash_text(root2));
  }
  return Status::ok();
}

Result<std::vector<Hash>> parse_proof(std::span<const Bytes> proof) {
  std::vector<Hash> out;
  out.reserve(proof.size());
  for (size_t i = 0; i < proof.size(); ++i) {
    auto h = parse_hash(proof[i], "proof hash " + std::to_string(i));
    if (!h) return h.error();
    out.push_back(*h);
  }
  return out;
}

}  // namespace

Hash leaf_hash(ByteView entry) {
  static constexpr uint8_t kLeafPrefix = 0x00;
  Sha256 h;
  h.update(ByteView(&kLeafPrefix, 1));
  h.update(entry);
  return h.finish();
}

Hash node_hash(const Hash& left, const Hash& right) {
  // One contiguous buffer: a single SHA-256 call is much cheaper than an incremental context.
  uint8_t buf[1 + 2 * kHashSize];
  buf[0] = 0x01;
  std::memcpy(buf + 1, left.data(), kHashSize);
  std::memcpy(buf + 1 + kHashSize, right.data(), kHashSize);
  return sha256(ByteView(buf, sizeof buf));
}

Hash empty_tree_hash() { return sha256(ByteView()); }

Result<Hash> parse_hash(ByteView bytes, std::string_view what) {
  if (bytes.size() != kHashSize) {
    return rejected(std::string(what) + " is " + std::to_string(bytes.size()) +
                    " bytes; a SHA-256 hash is exactly 32 bytes");
  }
  Hash h;
  std::memcpy(h.data(), bytes.data(), kHashSize);
  return h;
}

uint64_t stored_hash_index(int level, uint64_t n) {
  EVL_ASSERT(level >= 0 && level < 64);
  // Node (level, n) is stored right after the hashes of the leaf that completes it, leaf
  // m = (n + 1)·2^level − 1. Leaf m's hashes start at m + m/2 + m/4 + ... = 2m − popcount(m).
  EVL_ASSERT(n < (uint64_t{1} << (63 - level)));
  uint64_t m = ((n + 1) << level) - 1;
  return 2 * m - static_cast<uint64_t>(std::popcount(m)) + static_cast<uint64_t>(level);
}

TreeNode split_stored_hash_index(uint64_t index) {
  // stored_hash_index(0, n) <= 2n, so the record that stored `index` is at least index/2, and
  // at most log2(index) records further on.
  uint64_t n = index / 2;
  uint64_t start = stored_hash_index(0, n);
  EVL_ASSERT(start <= index);
  for (;;) {
    // Record n stores 1 + trailing_zeros(n + 1) hashes.
    uint64_t next = start + 1 + static_cast<uint64_t>(std::countr_zero(n + 1));
    if (next > index) break;
    ++n;
    start = next;
  }
  int level = static_cast<int>(index - start);
  return TreeNode{level, n >> level};
}

uint64_t stored_hash_count(uint64_t n) {
  // The hashes of records 0..n-1 end exactly where record n's would start.
  return n == 0 ? 0 : 2 * n - static_cast<uint64_t>(std::popcount(n));
}

Result<std::vector<Hash>> stored_hashes_for_record(uint64_t n, const Hash& leaf,
                                                   const HashReader& reader) {
  // Each trailing 1 bit of n completes a subtree whose left half is already stored.
  int m = std::countr_zero(n + 1);
  std::vector<uint64_t> indexes(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) indexes[m - 1 - i] = stored_hash_index(i, (n >> i) - 1);
  auto left = read_exact(reader, indexes);
  if (!left) return left.error();
  std::vector<Hash> out{leaf};
  Hash h = leaf;
  for (int i = 0; i < m; ++i) {
    h = node_hash((*left)[m - 1 - i], h);
    out.push_back(h);
  }
  return out;
}

Result<Hash> tree_hash(uint64_t n, const HashReader& reader) {
  if (n == 0) return empty_tree_hash();
  std::vector<uint64_t> indexes;
  subtree_indexes(0, n, indexes);
  auto hashes = read_exact(reader, indexes);
  if (!hashes) return hashes.error();
  HashCursor cursor(*hashes);
  Hash h = subtree_hash(0, n, cursor);
  EVL_ASSERT(cursor.done());
  return h;
}

Result<std::vector<Hash>> prove_record(uint64_t t, uint64_t n, const HashReader& reader) {
  if (n >= t) {
    return usage_error("inclusion proof: record " + std::to_string(n) +
                       " is not in the tree of size " + std::to_string(t) +
                       " (the record index must be below the tree size)");
  }
  std::vector<uint64_t> indexes;
  leaf_proof_indexes(0, t, n, indexes);
  auto hashes = read_exact(reader, indexes);
  if (!hashes) return hashes.error();
  HashCursor cursor(*hashes);
  std::vector<Hash> proof;
  leaf_proof(0, t, n, cursor, proof);
  EVL_ASSERT(cursor.done());
  return proof;
}

Result<std::vector<Hash>> prove_tree(uint64_t t, uint64_t n, const HashReader& reader) {
  if (n == 0 || n > t) {
    return usage_error(sizes_text(n, t) + ": the old size must be between 1 and the new size");
  }
  std::vector<uint64_t> indexes;
  tree_proof_indexes(0, t, n, indexes);
  auto hashes = read_exact(reader, indexes);
  if (!hashes) return hashes.error();
  HashCursor cursor(*hashes);
  std::vector<Hash> proof;
  tree_proof(0, t, n, cursor, proof);
  EVL_ASSERT(cursor.done());
  return proof;
}

Status verify_inclusion(uint64_t index, uint64_t size, const Hash& leaf,
                        std::span<const Hash> proof, const Hash& root) {
  std::string what = "inclusion proof of record " + std::to_string(index) + " in the tree of size " +
                     std::to_string(size);
  if (index >= size) return rejected(what + ": the record index must be below the tree size");
  uint64_t want = inclusion_proof_size(index, size);
  if (proof.size() != want) {
    return rejected(what + ": expected " + std::to_string(want) + " hashes, found " +
                    std::to_string(proof.size()));
  }
  // RFC 9162 §2.1.3.2, step by step.
  uint64_t fn = index;
  uint64_t sn = size - 1;
  Hash r = leaf;
  for (const Hash& p : proof) {
    if (sn == 0) return rejected(what + ": the proof is longer than the path to the root");
    if ((fn & 1) != 0 || fn == sn) {
      r = node_hash(p, r);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = node_hash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return rejected(what + ": the proof is shorter than the path to the root");
  if (r != root) {
    return rejected(what + ": the proof leads to root " + hash_text(r) + ", expected " +
                    hash_text(root));
  }
  return Status::ok();
}

Status verify_consistency(uint64_t size1, uint64_t size2, std::span<const Hash> proof,
                          const Hash& root1, const Hash& root2) {
  std::string what = sizes_text(size1, size2);
  if (size1 > size2) return rejected(what + ": the old size must not exceed the new size");
  if (size1 == 0) {
    return rejected(what + ": every tree extends the empty tree, so such a proof proves "
                           "nothing and is refused; start from size 1 or more");
  }
  if (size1 == size2) {
    if (!proof.empty()) {
      return rejected(what + ": equal sizes need an empty proof, found " +
                      std::to_string(proof.size()) + " hashes");
    }
    if (root1 != root2) {
      return rejected(what + ": equal sizes need equal roots, found " + hash_text(root1) +
                      " and " + hash_text(root2));
    }
    return Status::ok();
  }
  uint64_t want = consistency_proof_size(size1, size2);
  if (proof.size() != want) {
    return rejected(what + ": expected " + std::to_string(want) + " hashes, found " +
                    std::to_string(proof.size()));
  }
  return run_consistency_proof(what, size1, size2, proof, root1, root2);
}

Result<Hash> prefix_root_from_path(uint64_t size1, uint64_t size2, std::span<const Hash> path,
                                   const Hash& root2) {
  std::string what = sizes_text(size1, size2);
  if (size1 == 0 || size1 >= size2) {
    return rejected(what + ": a path to a prefix needs 0 < old size < new size");
  }
  const uint64_t want = consistency_proof_size(size1, size2) + std::has_single_bit(size1);
  if (path.size() != want) {
    return rejected(what + ": expected " + std::to_string(want) + " hashes, found " +
                    std::to_string(path.size()));
  }
  auto roots = run_consistency_path(what, size1, size2, path);
  if (!roots) return roots.error();
  if (roots->second != root2) {
    return rejected(what + ": the path leads to root " + hash_text(roots->second) +
                    ", not the new tree's " + hash_text(root2));
  }
  return roots->first;
}

Result<std::vector<Hash>> prove_prefix_path(uint64_t t, uint64_t n, const HashReader& reader) {
  if (n == 0 || n >= t) return usage_error("a path to a prefix needs 0 < n < t");
  auto proof = prove_tree(t, n, reader);
  if (!proof) return proof.error();
  if (!std::has_single_bit(n)) return proof;
  auto prefix = tree_hash(n, reader);
  if (!prefix) return prefix.error();
  proof->insert(proof->begin(), *prefix);
  return proof;
}

Status verify_inclusion(uint64_t index, uint64_t size, ByteView leaf,
                        std::span<const Bytes> proof, ByteView root) {
  auto leaf_h = parse_hash(leaf, "leaf hash");
  if (!leaf_h) return leaf_h.error();
  auto root_h = parse_hash(root, "root");
  if (!root_h) return root_h.error();
  auto path = parse_proof(proof);
  if (!path) return path.error();
  return verify_inclusion(index, size, *leaf_h, *path, *root_h);
}

Status verify_consistency(uint64_t size1, uint64_t size2, std::span<const Bytes> proof,
                          ByteView root1, ByteView root2) {
  auto root1_h = parse_hash(root1, "old root");
  if (!root1_h) return root1_h.error();
  auto root2_h = parse_hash(root2, "new root");
  if (!root2_h) return root2_h.error();
  auto path = parse_proof(proof);
  if (!path) return path.error();
  return verify_consistency(size1, size2, *path, *root1_h, *root2_h);
}

void MemoryHashStore::append(const Hash& leaf) {
  auto added = stored_hashes_for_record(size_, leaf, *this);
  EVL_ASSERT(added.has_value());  // it reads only hashes this store already holds
  hashes_.insert(hashes_.end(), added->begin(), added->end());
  ++size_;
  EVL_ASSERT(hashes_.size() == stored_hash_count(size_));
}

Hash MemoryHashStore::root() const {
  auto root = tree_hash(size_, *this);
  EVL_ASSERT(root.has_value());
  return *root;
}

Result<std::vector<Hash>> MemoryHashStore::read_hashes(std::span<const uint64_t> indexes) const {
  std::vector<Hash> out;
  out.reserve(indexes.size());
  for (uint64_t index : indexes) {
    if (index >= hashes_.size()) {
      return not_found("stored hash " + std::to_string(index) + " is not in a tree of " +
                       std::to_string(size_) + " records (" + std::to_string(hashes_.size()) +
                       " stored hashes)");
    }
    out.push_back(hashes_[index]);
  }
  return out;
}

}  // namespace evl
