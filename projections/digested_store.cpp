#include "projections/digested_store.h"

namespace evl {

Result<ProjectionAccumulator> DigestTracker::update(const KeyValueStore& store) {
  if (!sums_) {
    auto scanned = accumulate_projection_store(store);
    if (!scanned) return scanned.error();
    sums_ = *scanned;
    return *sums_;
  }
  for (const std::string& key : changed_) {
    auto now = store.get(key);
    if (!now) return now.error();  // the tracker is then unusable: its transaction aborts
    if (*now) sums_->add(key, **now);
  }
  changed_.clear();
  return *sums_;
}

void DigestTracker::forget() {
  sums_.reset();
  changed_.clear();
}

Status DigestTracker::before_write(const KeyValueStore& store, std::string_view key,
                                   std::optional<std::string_view> value) {
  if (!sums_) return Status::ok();  // a full scan will count everything
  if (changed_.find(key) != changed_.end()) return Status::ok();
  auto current = store.get(key);
  if (!current) return current.error();
  if (current->has_value() == value.has_value() && (!value || **current == *value)) {
    return Status::ok();  // the record stays as it is
  }
  if (*current) sums_->remove(key, **current);
  changed_.emplace(key);
  return Status::ok();
}

Status DigestedStore::put(std::string_view key, std::string_view value) {
  EVL_RETURN_IF_ERROR(tracker_.before_write(inner_, key, value));
  return inner_.put(key, value);
}

Status DigestedStore::erase(std::string_view key) {
  EVL_RETURN_IF_ERROR(tracker_.before_write(inner_, key, std::nullopt));
  return inner_.erase(key);
}

}  // namespace evl
