// projections/internal/digest_table.h — a hash table keyed by digests, its entries in one array
// (open addressing, linear probing).
//
// The fold looks up the facts of several manifests for each event it applies, in tables of
// 10^5 to 10^6 entries; std::unordered_map costs two or three cache misses per lookup there
// (bucket, node, key), this one about one. Insert and find only: the fold never erases from the
// tables it keeps here.
//
// The hash is the digest's first 8 bytes mixed with a seed drawn for each table, so that the
// layout does not follow from the keys alone: anyone who may append manifests can choose digests
// with equal leading bits by trying many, but not ones that collide under an unknown seed.
//
// Lifetimes: pointers and references to values are valid until the next insertion that adds a
// key (the array may grow and move them).
// Thread safety: none; one thread at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "events/sha256.h"

namespace evl {

template <typename V>
class DigestTable {
 public:
  DigestTable() : seed_(draw_seed()) {}

  size_t size() const { return size_; }

  // The value under `key`, or nullptr.
  V* find(const Digest& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) return nullptr;
      if (e.key == key) return &e.value;
    }
  }
  const V* find(const Digest& key) const { return const_cast<DigestTable*>(this)->find(key); }
  bool contains(const Digest& key) const { return find(key) != nullptr; }

  // The value under `key`, value-initialized first when the key is new.
  V& operator[](const Digest& key) {
    if ((size_ + 1) * kLoadDen > entries_.size() * kLoadNum) grow();
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) {
        e.used = true;
        e.key = key;
        ++size_;
        return e.value;
      }
      if (e.key == key) return e.value;
    }
  }

  void clear() {
    entries_.clear();
    size_ = 0;
    mask_ = 0;
  }

 private:
  struct Entry {
    Digest key{};
    bool used = false;
    V value{};
  };
  // At most 3/4 full: linear probing stays short (about 2.5 probes for a miss).
  static constexpr size_t kLoadNum = 3, kLoadDen = 4;
  static constexpr size_t kMinCapacity = 64;

  static uint64_t draw_seed() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }

  size_t home(const Digest& key) const {
    uint64_t h;
    std::memcpy(&h, key.data(), sizeof h);
    h ^= seed_;  // then the splitmix64 finalizer: every bit of h moves every bit of the index
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return static_cast<size_t>(h ^ (h >> 31)) & mask_;
  }

  void grow() {
    std::vector<Entry> old = std::move(entries_);
    const size_t capacity = old.empty() ? kMinCapacity : 2 * old.size();
    entries_ = std::vector<Entry>(capacity);
    mask_ = capacity - 1;
    for (Entry& e : old) {
      if (!e.used) continue;
      size_t i = home(e.key);
      while (entries_[i].used) i = (i + 1) & mask_;
      entries_[i] = std::move(e);
    }
  }

  uint64_t seed_;
  std::vector<Entry> entries_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace evl
