#include "projections/store.h"

#include <algorithm>

namespace evl {

Result<bool> holds_nothing(const ProjectionStore& store) {
  bool empty = true;
  Status s = store.scan("", [&](std::string_view, std::string_view) {
    empty = false;
    return false;
  });
  if (!s) return s;
  return empty;
}

Result<std::optional<std::string>> MemoryProjectionStore::get(std::string_view key) const {
  auto it = map_.find(key);
  if (it == map_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryProjectionStore::put(std::string_view key, std::string_view value) {
  return put_replacing(key, value, [](std::string_view) {});
}

Status MemoryProjectionStore::erase(std::string_view key) {
  return erase_replacing(key, [](std::string_view) {});
}

Status MemoryProjectionStore::put_replacing(std::string_view key, std::string_view value,
                                            const ReplacedVisitor& replaced) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    map_.emplace(std::string(key), std::string(value));
  } else {
    replaced(it->second);
    it->second.assign(value);
  }
  return Status::ok();
}

Status MemoryProjectionStore::erase_replacing(std::string_view key,
                                              const ReplacedVisitor& replaced) {
  auto it = map_.find(key);
  if (it != map_.end()) {
    replaced(it->second);
    map_.erase(it);
  }
  return Status::ok();
}

Status MemoryProjectionStore::scan(std::string_view prefix, const ProjectionVisitor& visit) const {
  return scan_from(prefix, prefix, visit);
}

Status MemoryProjectionStore::scan_from(std::string_view prefix, std::string_view from,
                                        const ProjectionVisitor& visit) const {
  for (auto it = map_.lower_bound(std::max(prefix, from)); it != map_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (!visit(it->first, it->second)) break;
  }
  return Status::ok();
}

}  // namespace evl
