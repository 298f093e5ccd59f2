#include "projections/digested_store.h"

#include "projections/internal/worker.h"

namespace evl {

Result<ProjectionAccumulator> DigestTracker::update(const KeyValueStore& store, ThreadPool* pool) {
  if (!sums_) {
    auto scanned = accumulate_projection_store(store);
    if (!scanned) return scanned.error();
    sums_ = *scanned;
    return *sums_;
  }
  ProjectionRecords added;
  for (const auto& [key, latest] : changed_) {
    if (latest) added.add(key, *latest);
  }
  sums_->unmerge(removed_.sums(pool));
  sums_->merge(added.sums(pool));
  changed_.clear();
  removed_.clear();
  return *sums_;
}

void DigestTracker::forget() {
  sums_.reset();
  changed_.clear();
  removed_.clear();
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
  if (*current) removed_.add(key, **current);
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

SummingStore::SummingStore(KeyValueStore& inner, ProjectionAccumulator start)
    : WriteDecorator(inner), sums_(start), worker_(std::make_unique<Worker>()) {}

SummingStore::~SummingStore() { worker_->wait(); }

Status SummingStore::put(std::string_view key, std::string_view value) {
  EVL_RETURN_IF_ERROR(put_inner(key, value));
  // Two buffers in turn, each made once at its full size (a rebuild adds tens of megabytes).
  if (added_.capacity() < kBatchBytes) added_.reserve(kBatchBytes + kBatchSlack);
  added_.add(key, value);
  hand_over_when_full();
  return Status::ok();
}

Status SummingStore::put_summed(std::string_view key, std::string_view value) {
  EVL_RETURN_IF_ERROR(put_inner(key, value));
  hand_over_when_full();
  return Status::ok();
}

void SummingStore::add_summed(const ProjectionAccumulator& sums) { hashed_here_.merge(sums); }

Status SummingStore::erase(std::string_view key) {
  EVL_RETURN_IF_ERROR(
      inner_.erase_replacing(key, [&](std::string_view old) { removed_.add(key, old); }));
  hand_over_when_full();
  return Status::ok();
}

Status SummingStore::put_inner(std::string_view key, std::string_view value) {
  return inner_.put_replacing(key, value, [&](std::string_view old) { removed_.add(key, old); });
}

void SummingStore::hand_over_when_full() {
  if (added_.bytes() + removed_.bytes() >= kBatchBytes) hand_over();
}

void SummingStore::hash_here(ThreadPool* pool) {
  hashed_here_.merge(added_.sums(pool));
  hashed_here_.unmerge(removed_.sums(pool));
  added_.clear();
  removed_.clear();
}

void SummingStore::hand_over() {
  // While the worker still hashes the last batch, this thread hashes the new one itself rather
  // than wait for it: a rebuild's flush writes records faster than one thread hashes them, and
  // so the hashing gets both cores instead of holding the writer back.
  if (worker_->busy()) {
    hash_here(nullptr);
    return;
  }
  std::swap(added_, hashing_added_);
  std::swap(removed_, hashing_removed_);
  added_.clear();
  removed_.clear();
  worker_->start([this] {
    sums_.merge(hashing_added_.sums(nullptr));
    sums_.unmerge(hashing_removed_.sums(nullptr));
  });
}

ProjectionAccumulator SummingStore::sums(ThreadPool* pool) {
  hash_here(pool);  // what was not handed over, while the worker finishes
  worker_->wait();
  sums_.merge(hashed_here_);
  hashed_here_ = ProjectionAccumulator();
  return sums_;
}

}  // namespace evl
