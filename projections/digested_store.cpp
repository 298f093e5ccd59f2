#include "projections/digested_store.h"

namespace evl {

Result<ProjectionAccumulator> DigestTracker::update(const KeyValueStore& store) {
  if (!sums_) {
    auto scanned = accumulate_projection_store(store);
    if (!scanned) return scanned.error();
    sums_ = *scanned;
    return *sums_;
  }
  EVL_RETURN_IF_ERROR(apply_changes(store));
  return *sums_;
}

void DigestTracker::forget() {
  sums_.reset();
  before_.clear();
  before_bytes_ = 0;
}

Status DigestTracker::apply_changes(const KeyValueStore& store) {
  for (const auto& [key, before] : before_) {
    auto now = store.get(key);
    if (!now) return now.error();
    if (*now == before) continue;
    if (before) sums_->remove(key, *before);
    if (*now) sums_->add(key, **now);
  }
  before_.clear();
  before_bytes_ = 0;
  return Status::ok();
}

Status DigestTracker::before_write(const KeyValueStore& store, std::string_view key) {
  if (!sums_) return Status::ok();  // a full scan will count everything
  if (before_.find(key) != before_.end()) return Status::ok();
  if (before_bytes_ > max_remembered_bytes_) EVL_RETURN_IF_ERROR(apply_changes(store));
  auto value = store.get(key);
  if (!value) return value.error();
  before_bytes_ += key.size() + (*value ? (*value)->size() : 0);
  before_.emplace(std::string(key), std::move(*value));
  return Status::ok();
}

Status DigestedStore::put(std::string_view key, std::string_view value) {
  EVL_RETURN_IF_ERROR(tracker_.before_write(inner_, key));
  return inner_.put(key, value);
}

Status DigestedStore::erase(std::string_view key) {
  EVL_RETURN_IF_ERROR(tracker_.before_write(inner_, key));
  return inner_.erase(key);
}

}  // namespace evl
