// projections/store.h — the key/value store that holds the projection state.
//
// The projections are a fold over the log whose whole state lives in a ProjectionStore: keys
// and values are byte strings, and scan() visits keys in byte order. The ledger implements it
// over an LMDB database inside its append transaction, so a projection update commits (or
// aborts) with the entries that caused it; MemoryProjectionStore holds it in a std::map for
// tests, rebuilds and tools. The key layout is in projections/FORMAT.md.
//
// Errors: get/put/erase/scan return the store's own failure (kIo for an environment failure,
// kCorrupt for damaged data); a missing key is not an error (get returns nullopt, erase of an
// absent key is ok).
//
// Thread safety: a store is used by one thread at a time (the ledger's single writer, or a
// reader in its own snapshot). MemoryProjectionStore: const methods may run concurrently.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "events/status.h"
#include "ledger/append_hook.h"

namespace evl {

// The ledger's KeyValueStore (ledger/append_hook.h) is the projections' store: the ledger
// keeps it over LMDB inside its append transaction; MemoryProjectionStore keeps it in memory.
using ProjectionVisitor = KeyValueVisitor;
using ProjectionStore = KeyValueStore;

// Whether `store` holds no record at all (one step of a scan); the store's errors unchanged.
Result<bool> holds_nothing(const ProjectionStore& store);

// The whole state in memory, ordered by key bytes.
class MemoryProjectionStore final : public ProjectionStore {
 public:
  using Map = std::map<std::string, std::string, std::less<>>;

  Result<std::optional<std::string>> get(std::string_view key) const override;
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  Status scan(std::string_view prefix, const ProjectionVisitor& visit) const override;
  Status scan_from(std::string_view prefix, std::string_view from,
                   const ProjectionVisitor& visit) const override;
  Status put_replacing(std::string_view key, std::string_view value,
                       const ReplacedVisitor& replaced) override;
  Status erase_replacing(std::string_view key, const ReplacedVisitor& replaced) override;

  const Map& contents() const { return map_; }
  size_t size() const { return map_.size(); }

 private:
  Map map_;
};

}  // namespace evl
