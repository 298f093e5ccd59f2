#include "projections/internal/fold_state.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#include "events/bytes.h"
#include "events/jcs.h"
#include "projections/internal/store_keys.h"

namespace evl {

FoldState::FoldState(ProjectionStore& store) : store_(store) {
  // An empty store (a rebuild, the first event): every key there will be is one of ours. When
  // the store cannot tell, the lookups will report its failure.
  auto empty = holds_nothing(store_);
  complete_ = empty && *empty;
  started_empty_ = complete_;
}

FoldState::FoldState(SummingStore& store) : FoldState(static_cast<ProjectionStore&>(store)) {
  summing_ = &store;
}

size_t FoldState::DigestHash::operator()(const Digest& d) const {
  size_t h;
  std::memcpy(&h, d.data(), sizeof h);
  return h;
}

template <typename T, typename Decode>
Result<T*> FoldState::find(DigestMap<T>& map, const Digest& digest,
                           std::string (*key_of)(const Digest&), const Decode& decode) {
  auto it = map.find(digest);
  if (it == map.end()) {
    if (complete_) return nullptr;  // the store has no more than this state
    Slot<T> slot;
    auto text = store_.get(key_of(digest));
    if (!text) return text.error();
    if (text->has_value()) {
      Result<T> value = decode(**text);
      if (!value) return value.error();
      slot.value = std::move(value).value();
    }
    it = map.emplace(digest, std::move(slot)).first;
  }
  return it->second.value ? &*it->second.value : nullptr;
}

Result<RunView*> FoldState::find_run(const Digest& run) {
  if (started_empty_ && !complete_ && !run_keys_.contains(run)) return nullptr;
  return find(runs_, run, store_keys::run, [&](std::string_view text) -> Result<RunView> {
    auto view = parse_run_view(text);
    if (!view) return view.error().with_context(digest_text(run));
    return view;
  });
}

RunView& FoldState::add_run(RunView view) {
  if (started_empty_) run_keys_[view.run] = true;
  auto& entry = *runs_.try_emplace(view.run).first;
  EVL_ASSERT(!entry.second.value);
  entry.second.value = std::move(view);
  mark_run_changed(entry);
  return *entry.second.value;
}

void FoldState::run_changed(const RunView& view) {
  auto it = runs_.find(view.run);
  EVL_ASSERT(it != runs_.end() && it->second.value && &*it->second.value == &view);
  mark_run_changed(*it);
}

void FoldState::mark_run_changed(DigestMap<RunView>::value_type& entry) {
  if (!entry.second.changed) changed_runs_.push_back(&entry);
  entry.second.changed = true;
}

FoldState::KnownManifest FoldState::known(const ManifestFacts& facts) {
  KnownManifest out{true, nullptr};
  if (!(facts == ManifestFacts{})) out.facts = std::make_unique<const ManifestFacts>(facts);
  return out;
}

Result<const ManifestFacts*> FoldState::find_manifest(const Digest& digest) {
  const KnownManifest* it = facts_.find(digest);
  if (it == nullptr) {
    if (started_empty_) return nullptr;  // this state met every registration there is
    if (lookup_ == nullptr) {
      return usage_error("a fold that continues stored projections needs the log's manifests "
                         "(ProjectedEvent::manifests) to look up " + digest_text(digest));
    }
    auto found = lookup_->registered(digest, lookup_before_);
    if (!found) return found.error();
    it = &(facts_[digest] = *found ? known((*found)->facts) : KnownManifest{});
  }
  if (!it->registered) return nullptr;
  static const ManifestFacts kNoFacts;
  return it->facts ? it->facts.get() : &kNoFacts;  // on the heap: stays where it is
}

void FoldState::put_manifest(const Digest& digest, const ManifestFacts& facts) {
  facts_[digest] = known(facts);
}

Result<GroupRecord*> FoldState::find_group(const Digest& key) {
  if (started_empty_ && !complete_ && groups_.find(key) == groups_.end()) return nullptr;
  return find(groups_, key, store_keys::group,
              [&](std::string_view text) { return parse_group_record(key, text); });
}

void FoldState::put_group(const GroupRecord& group) {
  Slot<GroupRecord>& slot = groups_[group.key];
  slot.value = group;
  slot.changed = true;
}

void FoldState::erase_group(const Digest& key) {
  Slot<GroupRecord>& slot = groups_[key];
  slot.value.reset();
  slot.changed = true;
}

Result<std::optional<uint64_t>> FoldState::next() {
  if (!next_) {
    Slot<uint64_t> slot;
    if (!complete_) {
      auto text = store_.get(store_keys::kNext);
      if (!text) return text.error();
      if (text->has_value()) {
        auto parsed = parse_u64(**text);
        if (!parsed) return corrupt("stored next index is damaged; rebuild the projections");
        slot.value = *parsed;
      }
    }
    next_ = slot;
  }
  return next_->value;
}

void FoldState::set_next(uint64_t next) { next_ = Slot<uint64_t>{next, true}; }

FoldState::TextMap::iterator FoldState::text_slot(std::string_view key) {
  // One descent of the tree, whether the key is new (most are) or not.
  auto it = text_.lower_bound(key);
  if (it == text_.end() || it->first != key) it = text_.emplace_hint(it, key, TextSlot{});
  return it;
}

void FoldState::put(std::string_view key, std::string_view value) {
  auto it = text_slot(key);
  it->second.value.emplace(value);
  it->second.changed = true;
}

void FoldState::erase(std::string_view key) {
  auto it = text_slot(key);
  it->second.value.reset();
  it->second.changed = true;
}

void FoldState::put_once(std::string key, std::string value) {
  once_.emplace_back(std::move(key), std::move(value));
}

namespace {

// The families put_once() writes: the fold never reads them back.
bool once_family(std::string_view key) {
  const std::string_view family = key.substr(0, 2);
  return family == store_keys::kBenchmarks || family == store_keys::kLeadership ||
         family == store_keys::kVoid || family == store_keys::kSkipped;
}

// The families the fold scans by prefix for nearly every event: a manifest's waiting runs, a new
// run's orphan records. forget() keeps them (they hold only what waits), so those scans never
// read the store while the state knows every key of them.
bool kept_family(std::string_view key) {
  return key.substr(0, 2) == store_keys::kWaiting || key.substr(0, 2) == store_keys::kOrphans;
}

}  // namespace

Status FoldState::scan(std::string_view prefix, const ProjectionVisitor& visit) {
  EVL_ASSERT(prefix.size() >= 2 && !once_family(prefix));  // those are not kept in text_
  // The store's keys under the prefix, then this state's over them (its own win).
  std::vector<std::pair<std::string, std::string>> stored;
  if (!complete_ && !(started_empty_ && kept_family(prefix))) {
    EVL_RETURN_IF_ERROR(store_.scan(prefix, [&](std::string_view k, std::string_view v) {
      stored.emplace_back(k, v);
      return true;
    }));
  }
  auto own = text_.lower_bound(prefix);
  auto own_in_prefix = [&] {
    return own != text_.end() && std::string_view(own->first).substr(0, prefix.size()) == prefix;
  };
  auto from_store = stored.begin();
  while (own_in_prefix() || from_store != stored.end()) {
    if (!own_in_prefix() || (from_store != stored.end() && from_store->first < own->first)) {
      if (!visit(from_store->first, from_store->second)) return Status::ok();
      ++from_store;
      continue;
    }
    if (from_store != stored.end() && from_store->first == own->first) ++from_store;
    if (own->second.value && !visit(own->first, *own->second.value)) return Status::ok();
    ++own;
  }
  return Status::ok();
}

Status FoldState::flush_text_below(TextMap::iterator& at, size_t& once, std::string_view bound) {
  auto below = [&](std::string_view key) { return bound.empty() || key < bound; };
  for (;;) {
    const bool text_left = at != text_.end() && below(at->first);
    const bool once_left = once < once_.size() && below(once_[once].first);
    if (!text_left && !once_left) return Status::ok();
    // The families are disjoint: no key is in both.
    if (once_left && (!text_left || once_[once].first < at->first)) {
      EVL_RETURN_IF_ERROR(store_.put(once_[once].first, once_[once].second));
      ++once;
      continue;
    }
    TextSlot& slot = at->second;
    if (slot.changed) {
      EVL_RETURN_IF_ERROR(slot.value ? store_.put(at->first, *slot.value)
                                     : store_.erase(at->first));
      slot.changed = false;
    }
    // An erased key is now absent from the store as well: nothing to remember.
    at = slot.value ? std::next(at) : text_.erase(at);
  }
}

template <typename T, typename Encode>
Status FoldState::flush_changed(DigestMap<T>& map, const Encode& encode) {
  std::vector<typename DigestMap<T>::value_type*> changed;
  for (auto& entry : map) {
    if (entry.second.changed) changed.push_back(&entry);
  }
  std::sort(changed.begin(), changed.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (auto* entry : changed) {
    EVL_RETURN_IF_ERROR(encode(entry->first, entry->second.value));
    entry->second.changed = false;
  }
  return Status::ok();
}

Status FoldState::flush(ThreadPool* pool) {
  // Key order: #/next (#/version), G/ (K/ L/ b/ g/ o/), r/ (s/ v/ w/). The changed run views are
  // serialized on the pool's workers while this thread writes the records before them (below).
  constexpr size_t kParallelFrom = 256;  // fewer are not worth waking the pool
  // Sorted by key through a copy of the keys: comparing in place would read every view's map
  // node, scattered over the heap, about log2(n) times.
  std::vector<std::pair<Digest, DigestMap<RunView>::value_type*>> keyed;
  keyed.reserve(changed_runs_.size());
  for (auto* entry : changed_runs_) keyed.emplace_back(entry->first, entry);
  changed_runs_.clear();
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<DigestMap<RunView>::value_type*> runs(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) runs[i] = keyed[i].second;
  keyed = {};
  // Views are never erased: every changed slot holds one. They are serialized in shares of
  // kShare, on the pool's workers while this thread writes the records before them, then by
  // whichever thread is free; this thread writes each share, in key order, as soon as it is
  // serialized. Through a SummingStore, each share's views are also hashed, into the share's
  // own sums, as they are serialized (their texts are then in the cache).
  constexpr size_t kShare = 64;
  const size_t shares = (runs.size() + kShare - 1) / kShare;
  std::vector<std::string> keys(runs.size()), texts(runs.size());
  std::vector<ProjectionAccumulator> sums(summing_ != nullptr ? shares : 0);
  std::vector<std::atomic<bool>> encoded(shares);  // false until the share is serialized
  std::atomic<size_t> unclaimed{0};                // the first share nobody has taken
  // Serializes the next share nobody has taken; false when none is left. The views are far
  // apart in memory and long out of the cache: each encoding first asks for the view two
  // ahead and for the strings of the next (run_view.h).
  auto encode_next = [&] {
    const size_t share = unclaimed.fetch_add(1);
    if (share >= shares) return false;
    const size_t end = std::min(runs.size(), (share + 1) * kShare);
    for (size_t i = share * kShare; i < end; ++i) {
      if (i + 2 < runs.size()) prefetch_run_view(*runs[i + 2]->second.value);
      if (i + 1 < runs.size()) prefetch_run_view_contents(*runs[i + 1]->second.value);
      keys[i] = store_keys::run(runs[i]->first);
      texts[i] = run_view_text(*runs[i]->second.value);
      if (summing_ != nullptr) sums[share].add(keys[i], texts[i]);
    }
    encoded[share].store(true, std::memory_order_release);
    return true;
  };
  auto text = text_.begin();
  // Stable: of two with one key, the later is written last.
  std::stable_sort(once_.begin(), once_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t once = 0;
  Status status;
  auto write = [&] {
    status = flush_before_runs(text, once);
    for (size_t share = 0; share < shares && status; ++share) {
      // Until the share is serialized, this thread serializes a later one (or, when every
      // share is taken, waits for the thread serializing it).
      while (!encoded[share].load(std::memory_order_acquire)) {
        if (!encode_next()) std::this_thread::yield();
      }
      const size_t end = std::min(runs.size(), (share + 1) * kShare);
      for (size_t i = share * kShare; i < end && status; ++i) {
        if (i + 2 < end) __builtin_prefetch(texts[i + 2].data());
        status = summing_ != nullptr ? summing_->put_summed(keys[i], texts[i])
                                     : store_.put(keys[i], texts[i]);
        if (status) runs[i]->second.changed = false;
      }
    }
  };
  if (pool != nullptr && pool->size() > 1 && runs.size() >= kParallelFrom) {
    pool->parallel_for_while(shares, [&](size_t) { encode_next(); }, write, 1);
  } else {
    write();
  }
  EVL_RETURN_IF_ERROR(status);
  if (summing_ != nullptr) {
    for (const ProjectionAccumulator& share : sums) summing_->add_summed(share);
  }
  EVL_RETURN_IF_ERROR(flush_text_below(text, once, ""));
  once_.clear();
  return Status::ok();
}

Status FoldState::flush_before_runs(TextMap::iterator& text, size_t& once) {
  if (next_ && next_->changed) {
    EVL_RETURN_IF_ERROR(store_.put(store_keys::kNext, std::to_string(*next_->value)));
    next_->changed = false;
  }
  EVL_RETURN_IF_ERROR(flush_text_below(text, once, store_keys::kGroups));
  EVL_RETURN_IF_ERROR(flush_changed(groups_, [&](const Digest& key, const auto& group) {
    return group ? store_.put(store_keys::group(key), group_record_text(*group))
                 : store_.erase(store_keys::group(key));
  }));
  return flush_text_below(text, once, store_keys::kRuns);
}

void FoldState::forget() {
  runs_.clear();
  changed_runs_.clear();
  for (auto it = text_.begin(); it != text_.end();) {
    it = kept_family(it->first) && it->second.value ? std::next(it) : text_.erase(it);
  }
  complete_ = false;
}

}  // namespace evl
