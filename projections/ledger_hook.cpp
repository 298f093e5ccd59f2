#include "projections/ledger_hook.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "ledger/thread_pool.h"
#include "projections/digest.h"
#include "projections/digested_store.h"
#include "projections/internal/log_scan.h"
#include "projections/internal/prepared.h"
#include "projections/internal/store_keys.h"
#include "projections/internal/worker.h"
#include "projections/projector.h"
#include "projections/query.h"

namespace evl {

namespace {

bool is_compromise(const EventBody& body) {
  const auto* revoke = std::get_if<KeyRevoke>(&body.payload);
  return revoke != nullptr && revoke->reason == RevokeReason::kCompromised;
}

ProjectedEvent projected(uint64_t index, const Digest& id, const EventBody& body,
                         const KeyPolicy& author_keys, const KeyPolicy& void_keys,
                         PreparedManifest* prepared = nullptr) {
  ProjectedEvent event;
  event.index = index;
  event.id = id;
  event.body = &body;
  event.prepared = prepared;
  if (const KeyRecord* author = author_keys.find(body.author)) {
    event.author_name = author->name;
    event.author_roles = author->roles;
    event.author_scope = author->scope;
  } else {
    event.author_name = author_keys.describe(body.author);
  }
  event.void_cause = void_keys.void_cause(body.author, index);
  if (void_keys.genesis()) event.rerun_tolerance_milli = void_keys.genesis()->rerun_tolerance_milli;
  return event;
}

// The registrations of the log before an index: the ledger's manifests index names the one
// event that carries a manifest, and that event registered it if registered() (prepared.h)
// says so, with its void cause under `keys` (for a fold, the keys it folds with: a compromise
// that voids anything refolds the whole log instead).
class LogManifests final : public ManifestLookup {
 public:
  // Both must outlive it (an append makes one for each entry, over its context's).
  LogManifests(const ManifestFinder& find, const KeyPolicy& keys) : find_(find), keys_(keys) {}

  Result<std::optional<Registration>> registered(const Digest& digest,
                                                 uint64_t before) const override {
    if (!find_) {
      return usage_error("this ledger gave the projections no manifests index to continue from");
    }
    std::optional<Registration> out;
    EVL_RETURN_IF_ERROR(find_(digest, [&](uint64_t index, ByteView bytes) -> Status {
      if (index >= before) return Status::ok();  // not folded yet
      Digest id;
      EventBody body;
      EVL_RETURN_IF_ERROR(decode_event(index, bytes, id, body));
      out = evl::registered(body, index, keys_.void_cause(body.author, index).has_value());
      return Status::ok();
    }));
    return out;
  }

 private:
  const ManifestFinder& find_;
  const KeyPolicy& keys_;
};

// The manifests index of a ledger, through its own read snapshots.
ManifestFinder ledger_manifest_finder(const Ledger& ledger) {
  return [&ledger](const Digest& manifest,
                   const std::function<Status(uint64_t, ByteView)>& visit) -> Status {
    auto index = ledger.find_manifest(manifest);
    if (!index) return index.error().code() == Code::kNotFound ? Status::ok() : index.error();
    auto entry = ledger.entry(*index);
    if (!entry) return entry.error();
    return visit(*index, *entry);
  };
}

// LogManifests over a ledger, with its current keys.
class LedgerManifests final : public ManifestLookup {
 public:
  explicit LedgerManifests(const Ledger& ledger)
      : find_(ledger_manifest_finder(ledger)), keys_(ledger.policy()), log_(find_, keys_) {}
  Result<std::optional<Registration>> registered(const Digest& digest,
                                                 uint64_t before) const override {
    return log_.registered(digest, before);
  }

 private:
  const ManifestFinder find_;
  const KeyPolicy keys_;
  const LogManifests log_;
};

bool is_key_event(const EventBody& body) {
  return std::holds_alternative<Genesis>(body.payload) ||
         std::holds_alternative<KeyGrant>(body.payload) ||
         std::holds_alternative<KeyRevoke>(body.payload);
}

Status clear(KeyValueStore& store) {
  std::vector<std::string> keys;
  EVL_RETURN_IF_ERROR(store.scan("", [&](std::string_view key, std::string_view) {
    keys.emplace_back(key);
    return true;
  }));
  for (const auto& key : keys) EVL_RETURN_IF_ERROR(store.erase(key));
  return Status::ok();
}

// The record in "projection_sums" that holds the digest's sums:
// u64be(the projected size they were sealed at) ‖ ProjectionAccumulator::serialize().
constexpr std::string_view kSumsKey = "sums";

// The stored sums of `store`, or nullopt when they are not known to be its sums: missing (a
// ledger from before them), of another size than the state (written by a writer that did not
// keep them) or damaged. The full scan that follows is the authority; the sums are a cache.
Result<std::optional<ProjectionAccumulator>> stored_sums(const KeyValueStore& sums,
                                                         const KeyValueStore& store) {
  using Sums = std::optional<ProjectionAccumulator>;
  auto record = sums.get(kSumsKey);
  if (!record) return record.error();
  if (!*record || (*record)->size() != 8 + ProjectionAccumulator::kSerializedSize) return Sums();
  ByteView bytes = as_bytes(**record);
  auto applied = projected_size(store);
  if (!applied) return applied.error();
  if (get_u64_be(bytes.data()) != *applied) return Sums();
  auto parsed = ProjectionAccumulator::parse(bytes.subspan(8));
  return parsed ? Sums(*parsed) : Sums();
}

// A store that passes every call on to another, which may change between calls: the batch the
// hook keeps for a transaction outlives the store objects the ledger hands it for each entry.
class ForwardingStore final : public KeyValueStore {
 public:
  void bind(KeyValueStore& target) { target_ = &target; }

  Result<std::optional<std::string>> get(std::string_view key) const override {
    return target_->get(key);
  }
  Status put(std::string_view key, std::string_view value) override {
    return target_->put(key, value);
  }
  Status erase(std::string_view key) override { return target_->erase(key); }
  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return target_->scan(prefix, visit);
  }
  Status put_replacing(std::string_view key, std::string_view value,
                       const ReplacedVisitor& replaced) override {
    return target_->put_replacing(key, value, replaced);
  }
  Status erase_replacing(std::string_view key, const ReplacedVisitor& replaced) override {
    return target_->erase_replacing(key, replaced);
  }
  void expect_ascending_writes(bool ascending) override {
    target_->expect_ascending_writes(ascending);
  }

 private:
  KeyValueStore* target_ = nullptr;
};

class ProjectionHook final : public AppendHook {
 public:
  explicit ProjectionHook(const ProjectionHookOptions& options)
      : min_batch_events_(std::max<uint64_t>(1, options.rebuild_batch_events)),
        max_batch_events_(std::max(min_batch_events_, options.rebuild_batch_events_max)),
        one_batch_max_(options.rebuild_one_batch_max),
        progress_(options.rebuild_progress) {}

  void begin_transaction() override {
    tracker_.reset();
    pending_.reset();
  }

  // A manifest's or an observation's parsing and summaries, off the writer thread.
  std::unique_ptr<PreparedEntry> prepare(const EventBody& body,
                                         const Digest* manifest) const override {
    return prepare_event(body, manifest);
  }

  // The events of one transaction are folded into one batch, which keeps the records they
  // touch decoded and writes each changed record once, at seal(): a group of appends rewrote
  // its group records and "#/next" once per event before.
  Status on_entry(AppendContext& context, uint64_t index, const Digest& id,
                  const EventBody& body, PreparedEntry* prepared) override {
    EVL_RETURN_IF_ERROR(start(context));
    if (is_compromise(body) && context.keys.voids_anything()) {
      // Earlier events may have become void: fold the whole prefix again (what the batch holds
      // is folded again with it).
      pending_.reset();
      EVL_RETURN_IF_ERROR(clear(context.store));
      return rebuild(context, index + 1);
    }
    forward_.bind(context.store);
    if (!pending_) pending_ = std::make_unique<ProjectionBatch>(forward_, &pool());
    const LogManifests manifests(context.find_manifest, context.keys);
    ProjectedEvent event = projected(index, id, body, context.keys, context.keys,
                                     dynamic_cast<PreparedManifest*>(prepared));
    event.manifests = &manifests;
    return pending_->apply(event);
  }

  Status rebuild(AppendContext& context, uint64_t size) override {
    batch_events_ = size <= one_batch_max_
                        ? std::max<uint64_t>(size, 1)
                        : std::clamp<uint64_t>(size / 16, min_batch_events_, max_batch_events_);
    // One batch writes the whole state at its end, in key order, into the empty store.
    struct Ascending {
      KeyValueStore& store;
      ~Ascending() { store.expect_ascending_writes(false); }
    } ascending{context.store};
    context.store.expect_ascending_writes(size <= batch_events_);
    // Until the fold ends, the sums are unknown (seal() would scan the whole state).
    tracker_.emplace(std::nullopt);
    // The state is written from nothing through a SummingStore, whose sums are then the
    // state's: seal() reads nothing back.
    auto empty = holds_nothing(context.store);
    if (!empty) return empty.error();
    if (!*empty) return usage_error("a rebuild folds into empty projections; empty them first");
    // One pass folds each event with the key state at its position, which also gives its void
    // cause as long as no compromise has voided anything: that key state and the final one
    // then void nothing. Once one does (a compromise may void events before it), the pass only
    // finishes the key state, and a second pass folds again with the final key state's voids.
    KeyPolicy keys;
    bool voided = false;
    auto summing = std::make_unique<SummingStore>(context.store);
    auto batch = std::make_unique<ProjectionBatch>(*summing, &pool());
    auto first_pass = [&](uint64_t index, const Digest& id, const EventBody& body,
                          PreparedManifest* prepared) -> Status {
      keys.apply(index, body);
      if (voided) return Status::ok();
      if (is_key_event(body) && keys.voids_anything()) {
        voided = true;
        batch.reset();  // what it has not written yet is dropped
        return Status::ok();
      }
      return fold_into(*batch, *summing, projected(index, id, body, keys, keys, prepared), size);
    };
    EVL_RETURN_IF_ERROR(scan_bodies(context, size, with_progress(size, first_pass)));
    if (voided) {
      EVL_RETURN_IF_ERROR(clear(context.store));  // what the first pass wrote of its batches
      const KeyPolicy final_keys = std::move(keys);
      KeyPolicy running;
      summing = std::make_unique<SummingStore>(context.store);
      batch = std::make_unique<ProjectionBatch>(*summing, &pool());
      auto second_pass = [&](uint64_t index, const Digest& id, const EventBody& body,
                             PreparedManifest* prepared) -> Status {
        running.apply(index, body);
        return fold_into(*batch, *summing,
                         projected(index, id, body, running, final_keys, prepared), size);
      };
      EVL_RETURN_IF_ERROR(scan_bodies(context, size, with_progress(size, second_pass)));
    }
    EVL_RETURN_IF_ERROR(batch->flush());
    free_later(std::move(batch));
    tracker_.emplace(summing->sums(&pool()));
    return Status::ok();
  }

  // A state of another projection format (its "#/version" record, absent before v3) reads as
  // none: the ledger refolds it at open.
  Result<uint64_t> applied_size(const KeyValueStore& store) const override {
    auto applied = projected_size(store);
    if (!applied || *applied == 0) return applied;
    auto version = store.get(store_keys::kVersion);
    if (!version) return version.error();
    return *version == kProjectionFormat ? *applied : 0;
  }

  Result<std::string> seal(AppendContext& context, std::string_view origin,
                           uint64_t size) override {
    auto sums = seal_sums(context, size);
    if (!sums) return sums.error();
    return projection_statement(origin, size, sums->digest());
  }

  // seal() without the statement: stores and returns the sums of the state of `size` entries.
  Result<ProjectionAccumulator> seal_sums(AppendContext& context, uint64_t size) {
    EVL_RETURN_IF_ERROR(start(context));
    if (pending_) {
      // The transaction's changed records, written once, through the digest's tracker.
      DigestedStore store(context.store, *tracker_);
      forward_.bind(store);
      EVL_RETURN_IF_ERROR(pending_->flush());
      pending_.reset();
    }
    auto applied = projected_size(context.store);
    if (!applied) return applied.error();
    if (*applied != size) {
      return corrupt("the projections cover " + std::to_string(*applied) +
                     " entries, not the " + std::to_string(size) + " of the commit");
    }
    auto sums = tracker_->update(context.store, &pool());
    if (!sums) return sums.error();
    Bytes record(8);
    put_u64_be(size, record.data());
    Bytes lanes = sums->serialize();
    record.insert(record.end(), lanes.begin(), lanes.end());
    EVL_RETURN_IF_ERROR(context.sums.put(kSumsKey, as_chars(record)));
    tracker_.reset();  // the next transaction starts from the stored sums
    return sums;
  }

 private:
  // `visit`, and then telling rebuild_progress how many of the `size` entries are folded,
  // every 512 entries and after the last.
  BodyVisitor with_progress(uint64_t size, BodyVisitor visit) const {
    if (!progress_) return visit;
    return [this, size, visit = std::move(visit)](uint64_t index, const Digest& id,
                                                  const EventBody& body,
                                                  PreparedManifest* prepared) -> Status {
      EVL_RETURN_IF_ERROR(visit(index, id, body, prepared));
      if ((index + 1) % 512 == 0 || index + 1 == size) progress_(index + 1, size);
      return Status::ok();
    };
  }

  // A rebuild's fold of one event: the batch writes and forgets what it holds every
  // batch_events_ entries, so its memory is bounded; the last batch of the log (the only one of
  // a log up to one_batch_max_) is written by rebuild() after the pass, and freed by
  // free_later(), not forgotten here.
  Status fold_into(ProjectionBatch& batch, SummingStore& summing, const ProjectedEvent& event,
                   uint64_t size) {
    EVL_RETURN_IF_ERROR(batch.apply(event));
    if ((event.index + 1) % batch_events_ != 0 || event.index + 1 == size) return Status::ok();
    EVL_RETURN_IF_ERROR(batch.flush_and_forget());
    summing.hand_over();  // hashed while the next batch folds
    return Status::ok();
  }

  // The tracker of this transaction, from the stored sums on its first use.
  Status start(AppendContext& context) {
    if (tracker_) return Status::ok();
    auto sums = stored_sums(context.sums, context.store);
    if (!sums) return sums.error();
    tracker_.emplace(std::move(*sums));
    return Status::ok();
  }

  // Frees a rebuild's last batch on a thread of its own, while the ledger signs and commits:
  // the views and records it keeps decoded are some 3·10^5 blocks at 10^4 runs, 7–10 ms of
  // frees that would otherwise come before the commit. The batch refers to stores that may be
  // gone by then, but its destructor only frees memory.
  void free_later(std::unique_ptr<ProjectionBatch> batch) {
    if (!reaper_) reaper_ = std::make_unique<Worker>();
    ProjectionBatch* done = batch.release();
    reaper_->start([done] { delete done; });  // after the previous one
  }

  // Serializes the run views of a seal's flush and hashes its changed records on all cores
  // (made on first use: a hook that never seals starts no thread).
  ThreadPool& pool() {
    if (!pool_) pool_ = std::make_unique<ThreadPool>();
    return *pool_;
  }

  const uint64_t min_batch_events_, max_batch_events_, one_batch_max_;
  uint64_t batch_events_ = 1;  // this rebuild's batch (ProjectionHookOptions)
  const std::function<void(uint64_t, uint64_t)> progress_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Worker> reaper_;  // free_later()'s thread, made on first use
  std::optional<DigestTracker> tracker_;  // between begin_transaction() and seal()
  ForwardingStore forward_;                 // the store of the current call, for pending_
  std::unique_ptr<ProjectionBatch> pending_;  // this transaction's events, until seal()
};

}  // namespace

std::shared_ptr<AppendHook> make_projection_hook(const ProjectionHookOptions& options) {
  return std::make_shared<ProjectionHook>(options);
}

std::unique_ptr<ManifestLookup> log_manifests(const Ledger& ledger) {
  return std::make_unique<LedgerManifests>(ledger);
}

Status read_projections(const Ledger& ledger,
                        const std::function<Status(const ProjectionStore&, uint64_t)>& fn,
                        bool* lagging) {
  if (lagging != nullptr) *lagging = false;
  return ledger.read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != size) {
      if (lagging != nullptr) *lagging = true;
      return rejected("the projections cover " + std::to_string(*applied) + " of " +
                      std::to_string(size) + " entries");
    }
    return fn(state, size);
  });
}

Status fold_projection_digests(
    const Ledger& ledger, std::span<const uint64_t> sizes,
    const std::function<Status(uint64_t size, const Digest& digest)>& visit) {
  if (sizes.empty()) return Status::ok();
  for (size_t i = 1; i < sizes.size(); ++i) {
    if (sizes[i] <= sizes[i - 1]) return usage_error("the sizes to fold must ascend");
  }
  ProjectionHook hook{ProjectionHookOptions{}};
  MemoryProjectionStore state, sums;
  KeyPolicy keys;
  EntryScanner scanner = [&ledger](uint64_t from, uint64_t to,
                                   const std::function<Status(uint64_t, ByteView)>& visit_entry) {
    return ledger.scan(from, to, visit_entry);
  };
  const ManifestFinder finder = ledger_manifest_finder(ledger);
  size_t next = 0;
  auto seal_at = [&](uint64_t size) -> Status {
    AppendContext context{state, sums, keys, scanner, finder};
    auto sealed = hook.seal_sums(context, size);
    if (!sealed) return sealed.error();
    hook.begin_transaction();
    return visit(size, sealed->digest());
  };
  while (next < sizes.size() && sizes[next] == 0) EVL_RETURN_IF_ERROR(seal_at(sizes[next++]));
  if (next == sizes.size()) return Status::ok();
  hook.begin_transaction();
  return ledger.scan(0, sizes.back(), [&](uint64_t index, ByteView bytes) -> Status {
    Digest id;
    EventBody body;
    EVL_RETURN_IF_ERROR(decode_event(index, bytes, id, body));
    keys.apply(index, body);
    AppendContext context{state, sums, keys, scanner, finder};
    EVL_RETURN_IF_ERROR(hook.on_entry(context, index, id, body, nullptr));
    if (sizes[next] == index + 1) EVL_RETURN_IF_ERROR(seal_at(sizes[next++]));
    return Status::ok();
  });
}

}  // namespace evl
