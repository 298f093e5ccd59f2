#include "projections/digested_store.h"

namespace evl {

namespace {

// The sums of the records in `arena` (key offset, key length, value length each), hashed on the
// pool's threads when there are enough to share.
ProjectionAccumulator sum_records(const std::string& arena,
                                  const std::vector<std::array<size_t, 3>>& records,
                                  ThreadPool* pool) {
  constexpr size_t kParallelFrom = 64;
  constexpr size_t kShares = 16;  // parallel_for runs fewer than 9 items inline
  const size_t shares = pool != nullptr && pool->size() > 1 && records.size() >= kParallelFrom
                            ? kShares
                            : 1;
  std::vector<ProjectionAccumulator> sums(shares);
  auto add_share = [&](size_t share) {
    const size_t n = records.size();
    for (size_t i = n * share / shares; i < n * (share + 1) / shares; ++i) {
      auto [at, key_size, value_size] = records[i];
      sums[share].add(std::string_view(arena.data() + at, key_size),
                      std::string_view(arena.data() + at + key_size, value_size));
    }
  };
  if (shares == 1) {
    add_share(0);
  } else {
    pool->parallel_for(shares, add_share);
  }
  for (size_t i = 1; i < shares; ++i) sums[0].merge(sums[i]);
  return sums[0];
}

void keep_record(std::string& arena, std::vector<std::array<size_t, 3>>& records,
                 std::string_view key, std::string_view value) {
  records.push_back({arena.size(), key.size(), value.size()});
  arena.append(key);
  arena.append(value);
}

}  // namespace

Result<ProjectionAccumulator> DigestTracker::update(const KeyValueStore& store, ThreadPool* pool) {
  if (!sums_) {
    auto scanned = accumulate_projection_store(store);
    if (!scanned) return scanned.error();
    sums_ = *scanned;
    return *sums_;
  }
  std::string added;
  std::vector<std::array<size_t, 3>> added_records;
  for (const auto& [key, latest] : changed_) {
    if (latest) keep_record(added, added_records, key, *latest);
  }
  sums_->unmerge(sum_records(removed_, removed_records_, pool));
  sums_->merge(sum_records(added, added_records, pool));
  changed_.clear();
  removed_.clear();
  removed_records_.clear();
  return *sums_;
}

void DigestTracker::forget() {
  sums_.reset();
  changed_.clear();
  removed_.clear();
  removed_records_.clear();
}

Status DigestTracker::before_write(const KeyValueStore& store, std::string_view key,
                                   std::optional<std::string_view> value) {
  if (!sums_) return Status::ok();  // a full scan will count everything
  if (auto it = changed_.find(key); it != changed_.end()) {
    it->second = value ? std::optional<std::string>(*value) : std::nullopt;
    return Status::ok();
  }
  auto current = store.get(key);
  if (!current) return current.error();
  if (current->has_value() == value.has_value() && (!value || **current == *value)) {
    return Status::ok();  // the record stays as it is
  }
  if (*current) keep_record(removed_, removed_records_, key, **current);
  changed_.emplace(key, value ? std::optional<std::string>(*value) : std::nullopt);
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
