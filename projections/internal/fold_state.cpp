#include "projections/internal/fold_state.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "events/bytes.h"
#include "events/jcs.h"
#include "projections/internal/store_keys.h"

namespace evl {

FoldState::FoldState(ProjectionStore& store)
    : store_(store),
      complete_(true),
      manifests_complete_(true),
      runs_complete_(true),
      groups_complete_(true),
      kept_complete_(true) {
  // An empty store (a rebuild, the first event): every key there will be is one of ours.
  Status s = store_.scan("", [&](std::string_view, std::string_view) {
    complete_ = false;
    return false;
  });
  if (!s) complete_ = false;  // the lookups will report the store's failure
  manifests_complete_ = complete_;
  runs_complete_ = complete_;
  groups_complete_ = complete_;
  kept_complete_ = complete_;
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
  if (runs_complete_ && !complete_ && run_keys_.count(run) == 0) return nullptr;
  return find(runs_, run, store_keys::run, [&](std::string_view text) -> Result<RunView> {
    auto view = parse_run_view(text);
    if (!view) return view.error().with_context(digest_text(run));
    return view;
  });
}

RunView& FoldState::add_run(RunView view) {
  if (runs_complete_) run_keys_.insert(view.run);
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

FoldState::KnownManifest FoldState::known(const Json& summary) {
  return known(manifest_facts(summary));
}

FoldState::KnownManifest FoldState::known(const ManifestFacts& facts) {
  KnownManifest out{true, nullptr};
  if (!(facts == ManifestFacts{})) out.facts = std::make_unique<const ManifestFacts>(facts);
  return out;
}

Result<const ManifestFacts*> FoldState::find_manifest(const Digest& digest) {
  auto it = facts_.find(digest);
  if (it == facts_.end()) {
    if (manifests_complete_) return nullptr;  // the store has no more than this state
    KnownManifest found;
    auto text = store_.get(store_keys::manifest(digest));
    if (!text) return text.error();
    if (text->has_value()) {
      auto record = parse_manifest_record(digest, **text);
      if (!record) return record.error();
      found = known(record->summary);
    }
    it = facts_.emplace(digest, std::move(found)).first;
  }
  if (!it->second.registered) return nullptr;
  static const ManifestFacts kNoFacts;
  return it->second.facts ? it->second.facts.get() : &kNoFacts;
}

void FoldState::put_manifest(ManifestRecord record) {
  const ManifestFacts facts = manifest_facts(record.summary);
  put_manifest(std::move(record), facts);
}

void FoldState::put_manifest(ManifestRecord record, const ManifestFacts& facts) {
  facts_[record.digest] = known(facts);
  Slot<ManifestRecord>& slot = manifests_[record.digest];
  slot.value = std::move(record);
  slot.changed = true;
}

Result<GroupRecord*> FoldState::find_group(const Digest& key) {
  if (groups_complete_ && !complete_ && groups_.find(key) == groups_.end()) return nullptr;
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

void FoldState::put(std::string_view key, std::string_view value) {
  auto it = text_.find(key);
  if (it == text_.end()) it = text_.emplace(std::string(key), TextSlot{}).first;
  it->second.value.emplace(value);
  it->second.changed = true;
}

void FoldState::erase(std::string_view key) {
  auto it = text_.find(key);
  if (it == text_.end()) it = text_.emplace(std::string(key), TextSlot{}).first;
  it->second.value.reset();
  it->second.changed = true;
}

namespace {

// The families the fold scans by prefix for nearly every event: a manifest's waiting runs, a new
// run's orphan records. forget() keeps them (they hold only what waits), so those scans never
// read the store while the state knows every key of them.
bool kept_family(std::string_view key) {
  return key.substr(0, 2) == store_keys::kWaiting || key.substr(0, 2) == store_keys::kOrphans;
}

}  // namespace

Status FoldState::scan(std::string_view prefix, const ProjectionVisitor& visit) {
  // The store's keys under the prefix, then this state's over them (its own win).
  std::vector<std::pair<std::string, std::string>> stored;
  if (!complete_ && !(kept_complete_ && kept_family(prefix))) {
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

// The records one flush writes, each list in key order.
struct FoldState::Writes {
  std::optional<uint64_t> next;
  std::vector<std::pair<std::string_view, const std::optional<std::string>*>> text;
  std::vector<std::pair<const Digest*, const std::optional<GroupRecord>*>> groups;
  std::vector<const ManifestRecord*> manifests;
  std::vector<const RunView*> runs;

  // In key order: #/next, G/ (K/ L/ b/ g/), m/ (o/), r/ (s/ v/ w/). Many run views are
  // serialized on the pool's threads first.
  Status write(ProjectionStore& store, ThreadPool* pool) const {
    if (next) EVL_RETURN_IF_ERROR(store.put(store_keys::kNext, std::to_string(*next)));
    size_t t = 0;
    auto text_below = [&](std::string_view bound) -> Status {
      for (; t < text.size() && (bound.empty() || text[t].first < bound); ++t) {
        const auto& [key, value] = text[t];
        EVL_RETURN_IF_ERROR(*value ? store.put(key, **value) : store.erase(key));
      }
      return Status::ok();
    };
    EVL_RETURN_IF_ERROR(text_below(store_keys::kGroups));
    for (const auto& [key, group] : groups) {
      EVL_RETURN_IF_ERROR(*group ? store.put(store_keys::group(*key), group_record_text(**group))
                                 : store.erase(store_keys::group(*key)));
    }
    EVL_RETURN_IF_ERROR(text_below(store_keys::kManifests));
    for (const ManifestRecord* m : manifests) {
      EVL_RETURN_IF_ERROR(store.put(store_keys::manifest(m->digest), manifest_record_text(*m)));
    }
    EVL_RETURN_IF_ERROR(text_below(store_keys::kRuns));
    constexpr size_t kParallelFrom = 256;  // fewer are not worth waking the pool
    std::vector<std::string> texts(runs.size());
    auto encode = [&](size_t i) { texts[i] = run_view_text(*runs[i]); };
    if (pool != nullptr && pool->size() > 1 && runs.size() >= kParallelFrom) {
      pool->parallel_for(runs.size(), encode);
    } else {
      for (size_t i = 0; i < runs.size(); ++i) encode(i);
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      EVL_RETURN_IF_ERROR(store.put(store_keys::run(runs[i]->run), texts[i]));
    }
    return text_below("");
  }
};

template <typename T>
std::vector<typename FoldState::DigestMap<T>::value_type*> FoldState::changed_in(
    DigestMap<T>& map) {
  std::vector<typename DigestMap<T>::value_type*> changed;
  for (auto& entry : map) {
    if (entry.second.changed) changed.push_back(&entry);
  }
  std::sort(changed.begin(), changed.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  return changed;
}

Status FoldState::flush(ThreadPool* pool) {
  Writes w;
  if (next_ && next_->changed) w.next = *next_->value;
  for (auto& [key, slot] : text_) {
    if (slot.changed) w.text.emplace_back(key, &slot.value);
  }
  auto groups = changed_in(groups_);
  for (auto* g : groups) w.groups.emplace_back(&g->first, &g->second.value);
  auto manifests = changed_in(manifests_);
  for (auto* m : manifests) w.manifests.push_back(&*m->second.value);
  std::sort(changed_runs_.begin(), changed_runs_.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  // Views are never erased: every changed slot holds one.
  for (auto* r : changed_runs_) w.runs.push_back(&*r->second.value);
  EVL_RETURN_IF_ERROR(w.write(store_, pool));
  mark_written();
  return Status::ok();
}

void FoldState::mark_written() {
  if (next_) next_->changed = false;
  for (auto it = text_.begin(); it != text_.end();) {
    it->second.changed = false;
    // An erased key is now absent from the store as well: nothing to remember.
    it = it->second.value ? std::next(it) : text_.erase(it);
  }
  for (auto& entry : groups_) entry.second.changed = false;
  manifests_.clear();  // written: reads use facts_
  for (auto* r : changed_runs_) r->second.changed = false;
  changed_runs_.clear();
}

Status FoldChanges::write(ProjectionStore& store, ThreadPool* pool) const {
  FoldState::Writes w;
  w.next = next;
  for (const auto& [key, value] : text) w.text.emplace_back(key, &value);
  for (const auto& [key, group] : groups) w.groups.emplace_back(&key, &group);
  for (const ManifestRecord& m : manifests) w.manifests.push_back(&m);
  for (const RunView& r : runs) w.runs.push_back(&r);
  return w.write(store, pool);
}

FoldChanges FoldState::take_changes() {
  FoldChanges c;
  if (next_ && next_->changed) c.next = *next_->value;
  for (auto& [key, slot] : text_) {
    if (slot.changed) c.text.emplace_back(key, slot.value);
  }
  for (auto* g : changed_in(groups_)) c.groups.emplace_back(g->first, g->second.value);
  for (auto* m : changed_in(manifests_)) c.manifests.push_back(std::move(*m->second.value));
  std::sort(changed_runs_.begin(), changed_runs_.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (auto* r : changed_runs_) c.runs.push_back(std::move(*r->second.value));
  mark_written();
  forget();  // the moved views must be read back from the store
  return c;
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
