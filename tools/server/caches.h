// tools/server/caches.h — what the read routes keep in memory between requests.
//
// ResourceCache holds served tiles and entry bundles by path, least recently used out first,
// within a byte budget. Every resource it holds is immutable (a tile's or bundle's path names
// its width, and the tree below a checkpoint never changes), so nothing is ever invalidated.
//
// CheckpointCache holds the newest checkpoint and its ETag, read again only when the ledger's
// commit id moved (any process's commit: a mirror writing while `serve --read-only` reads).
//
// Thread safety: both may be used from every I/O thread; each takes a short mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "events/status.h"
#include "ledger/ledger.h"

namespace evl::server {

class ResourceCache {
 public:
  explicit ResourceCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  std::shared_ptr<const std::string> find(const std::string& path);
  void insert(const std::string& path, std::shared_ptr<const std::string> bytes);
  size_t bytes() const;

 private:
  using Order = std::list<std::string>;
  struct Slot {
    std::shared_ptr<const std::string> bytes;
    Order::iterator position;
  };
  size_t max_bytes_;
  mutable std::mutex mu_;
  Order order_;  // most recently used first
  std::unordered_map<std::string, Slot> slots_;
  size_t bytes_ = 0;
};

struct PublishedCheckpoint {
  std::string note;     // the signed note, verbatim (empty before the genesis)
  uint64_t size = 0;    // its tree size
  std::string etag;     // "\"<hex>\"": the first 16 bytes of SHA-256(note)
};

class CheckpointCache {
 public:
  explicit CheckpointCache(const Ledger& ledger) : ledger_(ledger) {}

  // The newest checkpoint; kNotFound when the log has none yet; the ledger's errors else.
  Result<std::shared_ptr<const PublishedCheckpoint>> current();

 private:
  const Ledger& ledger_;
  std::mutex mu_;
  uint64_t commit_id_ = UINT64_MAX;
  std::shared_ptr<const PublishedCheckpoint> current_;
};

}  // namespace evl::server
