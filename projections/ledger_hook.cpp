#include "projections/ledger_hook.h"

#include <algorithm>
#include <functional>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <system_error>
#include <thread>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "ledger/thread_pool.h"
#include "projections/digest.h"
#include "projections/digested_store.h"
#include "projections/internal/fold_state.h"
#include "projections/internal/prepared.h"
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

bool is_key_event(const EventBody& body) {
  return std::holds_alternative<Genesis>(body.payload) ||
         std::holds_alternative<KeyGrant>(body.payload) ||
         std::holds_alternative<KeyRevoke>(body.payload);
}

// `prepared` is the event's prepare_manifest() result (a manifest or observation event), or null.
using BodyVisitor = std::function<Status(uint64_t, const Digest&, const EventBody&,
                                         PreparedManifest* prepared)>;

struct DecodedEntry {
  uint64_t index = 0;
  Digest id{};
  Result<EventBody> body;
  std::unique_ptr<PreparedManifest> prepared;
};

// Consecutive entries copied out of the transaction into one buffer: entry i is
// bytes[ends[i-1], ends[i]).
struct EntryChunk {
  uint64_t first = 0;
  Bytes bytes;
  std::vector<size_t> ends;
};

// Decodes a chunk and prepares its manifests (pure functions: any thread).
std::vector<DecodedEntry> decode_chunk(const EntryChunk& chunk) {
  std::vector<DecodedEntry> out;
  out.reserve(chunk.ends.size());
  size_t begin = 0;
  for (size_t i = 0; i < chunk.ends.size(); ++i) {
    const uint64_t index = chunk.first + i;
    ByteView bytes(chunk.bytes.data() + begin, chunk.ends[i] - begin);
    begin = chunk.ends[i];
    auto entry = decode_entry(bytes);
    if (!entry) {
      out.push_back({index, {}, corrupt("entry " + std::to_string(index) + ": " +
                                        entry.error().message()), nullptr});
      continue;
    }
    auto body = decode_body(entry->body);
    if (!body) {
      out.push_back({index, {}, corrupt("entry " + std::to_string(index) + ": " +
                                        body.error().message()), nullptr});
      continue;
    }
    std::unique_ptr<PreparedManifest> prepared = prepare_event(*body);
    out.push_back({index, event_id(entry->body), std::move(body).value(), std::move(prepared)});
  }
  return out;
}

Status visit_chunk(std::vector<DecodedEntry>& chunk, const BodyVisitor& visit) {
  for (DecodedEntry& e : chunk) {
    if (!e.body) return e.body.error();
    EVL_RETURN_IF_ERROR(visit(e.index, e.id, *e.body, e.prepared.get()));
  }
  return Status::ok();
}

// A rebuild's fold, on a thread of its own. LMDB lets only the thread that began a write
// transaction use it, so that thread (the owner, which calls run()) keeps every use of the
// transaction: it reads the log in chunks, writes the records the fold hands over (write()) and
// answers the fold's reads of the state (store()), in the order they were asked, so a read sees
// every write queued before it. A second thread decodes and prepares each chunk (the canonical
// checks, the id's hash, the manifests' parsing and summaries) a chunk ahead of the fold thread,
// which applies the events. FoldState keeps what the fold reads for nearly every event, so the
// fold seldom waits for the owner, and the owner's writes overlap the fold.
class FoldPipeline {
 public:
  FoldPipeline(AppendContext& context, ThreadPool& pool)
      : context_(context), pool_(pool), remote_(*this) {}

  // The state as the fold thread sees it: each read waits for the owner's answer.
  ProjectionStore& store() { return remote_; }

  // Fold thread: queues records for the owner to write, after waiting while two are queued.
  Status write(std::unique_ptr<FoldChanges> changes) {
    std::shared_ptr<FoldChanges> owned(std::move(changes));
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return queued_writes_ < 2 || failed_; });
      if (failed_) return failure_;
      ++queued_writes_;
    }
    submit([this, owned] {
      Status written = failed() ? Status::ok() : owned->write(context_.store, &pool_);
      std::lock_guard lock(mu_);
      if (!written) fail_locked(written);
      --queued_writes_;
      cv_.notify_all();
    });
    return Status::ok();
  }

  // Owner thread: visits entries [0, size) with `visit` on the fold thread, in order, then
  // `finish` there; returns the first failure of either thread.
  Status run(uint64_t size, const BodyVisitor& visit, const std::function<Status()>& finish) {
    std::thread decoder, fold;
    try {
      decoder = std::thread([&] { decode_all(); });
      fold = std::thread([&] {
        Status folded = fold_all(visit);
        if (folded) folded = finish();
        std::lock_guard lock(mu_);
        if (!folded) fail_locked(folded);
        fold_done_ = true;
        owner_cv_.notify_all();
      });
    } catch (const std::system_error& e) {
      {
        std::lock_guard lock(mu_);
        fail_locked(io_error(std::string("cannot start the rebuild's threads: ") + e.what() +
                             "; free some threads or memory and rebuild again"));
      }
      if (decoder.joinable()) decoder.join();
      return failure();
    }
    EntryChunk chunk;
    chunk.bytes.reserve(kChunkEntries * 2304);
    chunk.ends.reserve(kChunkEntries);
    Status scanned = context_.scan(0, size, [&](uint64_t, ByteView bytes) -> Status {
      chunk.bytes.insert(chunk.bytes.end(), bytes.begin(), bytes.end());
      chunk.ends.push_back(chunk.bytes.size());
      if (chunk.ends.size() == kChunkEntries) return hand_over(chunk);
      if (has_tasks_.load(std::memory_order_relaxed)) serve_until([] { return true; });
      return Status::ok();
    });
    if (scanned && !chunk.ends.empty()) scanned = hand_over(chunk);
    {
      std::lock_guard lock(mu_);
      if (!scanned) fail_locked(scanned);
      scan_done_ = true;
      cv_.notify_all();
    }
    serve_until([&] { return fold_done_; });
    fold.join();
    {
      std::lock_guard lock(mu_);
      if (!decode_done_) fail_locked(corrupt("the rebuild's fold ended before its log"));
    }
    decoder.join();
    std::lock_guard lock(mu_);
    return failed_ ? failure_ : Status::ok();
  }

 private:
  static constexpr size_t kChunkEntries = 512;
  static constexpr size_t kChunksAhead = 3;   // copied out of the log, not yet decoding
  static constexpr size_t kDecodedAhead = 4;  // decoded, not yet folded

  // Reads through the owner.
  class RemoteStore final : public KeyValueStore {
   public:
    explicit RemoteStore(FoldPipeline& pipeline) : pipeline_(pipeline) {}
    Result<std::optional<std::string>> get(std::string_view key) const override {
      Result<std::optional<std::string>> out = std::optional<std::string>();
      Status asked = pipeline_.ask([&](KeyValueStore& store) {
        out = store.get(key);
        return out ? Status::ok() : out.error();
      });
      if (!asked) return asked;
      return out;
    }
    Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
      return pipeline_.ask([&](KeyValueStore& store) { return store.scan(prefix, visit); });
    }
    Status put(std::string_view, std::string_view) override { return unwritable(); }
    Status erase(std::string_view) override { return unwritable(); }

   private:
    static Status unwritable() {
      return usage_error("a rebuild's fold writes the state through FoldPipeline::write only");
    }
    FoldPipeline& pipeline_;
  };

  bool failed() {
    std::lock_guard lock(mu_);
    return failed_;
  }
  void fail_locked(const Status& s) {
    if (!failed_) failure_ = s;
    failed_ = true;
    owner_cv_.notify_all();
    cv_.notify_all();
  }

  // Queues a task for the owner; its effects are visible to the caller once it has run.
  void submit(std::function<void()> task) {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
    has_tasks_.store(true, std::memory_order_relaxed);
    owner_cv_.notify_all();
  }

  // Fold thread: runs `read` on the owner and waits for it.
  Status ask(const std::function<Status(KeyValueStore&)>& read) {
    std::promise<Status> answer;
    auto answered = answer.get_future();
    submit([&] { answer.set_value(failed() ? Status(failure()) : read(context_.store)); });
    return answered.get();
  }
  Status failure() {
    std::lock_guard lock(mu_);
    return failure_;
  }

  // Owner: runs queued tasks, in order, until `done` holds (checked with mu_ held).
  void serve_until(const std::function<bool()>& done) {
    std::unique_lock lock(mu_);
    for (;;) {
      while (!tasks_.empty()) {
        std::function<void()> task = std::move(tasks_.front());
        tasks_.pop_front();
        if (tasks_.empty()) has_tasks_.store(false, std::memory_order_relaxed);
        lock.unlock();
        task();
        lock.lock();
      }
      if (done()) return;
      owner_cv_.wait(lock, [&] { return !tasks_.empty() || done(); });
    }
  }

  // Owner: passes a chunk of copied entries to the fold thread, serving tasks while it waits
  // for room.
  Status hand_over(EntryChunk& chunk) {
    serve_until([&] { return raw_.size() < kChunksAhead || failed_; });
    std::lock_guard lock(mu_);
    if (failed_) return failure_;
    const uint64_t next = chunk.first + chunk.ends.size();
    raw_.push_back(std::move(chunk));
    cv_.notify_all();
    // The next chunk reuses a buffer the fold thread is done with (no growth, no fresh pages).
    if (spare_.empty()) {
      chunk = EntryChunk{};
      chunk.bytes.reserve(kChunkEntries * 2304);
      chunk.ends.reserve(kChunkEntries);
    } else {
      chunk = std::move(spare_.back());
      spare_.pop_back();
      chunk.bytes.clear();
      chunk.ends.clear();
    }
    chunk.first = next;
    return Status::ok();
  }


  // Decoding thread: the next chunk of copied entries; nullopt after the last or on failure.
  std::optional<EntryChunk> next_chunk() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !raw_.empty() || scan_done_ || failed_; });
    if (failed_ || raw_.empty()) return std::nullopt;
    EntryChunk chunk = std::move(raw_.front());
    raw_.pop_front();
    owner_cv_.notify_all();
    return chunk;
  }

  // Decoding thread: decodes and prepares each chunk, up to kDecodedAhead ahead of the fold,
  // and frees the chunks the fold is done with, here, where most of their memory was allocated
  // (a free into another thread's malloc arena takes its lock).
  void decode_all() {
    for (;;) {
      std::optional<EntryChunk> chunk = next_chunk();
      std::vector<std::vector<DecodedEntry>> done;
      {
        std::lock_guard lock(mu_);
        done.swap(visited_);
      }
      done.clear();
      if (!chunk) break;
      std::vector<DecodedEntry> decoded = decode_chunk(*chunk);
      std::unique_lock lock(mu_);
      spare_.push_back(std::move(*chunk));  // for the owner to fill again
      cv_.wait(lock, [&] { return decoded_.size() < kDecodedAhead || failed_; });
      if (failed_) break;
      decoded_.push_back(std::move(decoded));
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    decode_done_ = true;
    cv_.notify_all();
  }

  // Fold thread: the next decoded chunk; nullopt after the last or on failure.
  std::optional<std::vector<DecodedEntry>> next_decoded() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !decoded_.empty() || decode_done_ || failed_; });
    if (failed_ || decoded_.empty()) return std::nullopt;
    std::vector<DecodedEntry> chunk = std::move(decoded_.front());
    decoded_.pop_front();
    cv_.notify_all();
    return chunk;
  }

  // Fold thread: visits the decoded chunks in order, handing each back to be freed.
  Status fold_all(const BodyVisitor& visit) {
    while (auto chunk = next_decoded()) {
      Status visited = visit_chunk(*chunk, visit);
      std::lock_guard lock(mu_);
      visited_.push_back(std::move(*chunk));
      if (!visited) return visited;
    }
    return failed() ? failure() : Status::ok();
  }

  AppendContext& context_;
  ThreadPool& pool_;
  RemoteStore remote_;
  std::mutex mu_;
  std::condition_variable owner_cv_;          // the owner waits on it
  std::deque<std::function<void()>> tasks_;  // for the owner, in order
  std::atomic<bool> has_tasks_{false};
  std::condition_variable cv_;                // the decoding and fold threads wait on it
  std::deque<EntryChunk> raw_;                // copied, for the decoding thread, in order
  std::vector<EntryChunk> spare_;             // decoded, for the owner to fill again
  std::deque<std::vector<DecodedEntry>> decoded_;  // for the fold thread, in order
  std::vector<std::vector<DecodedEntry>> visited_;  // for the decoding thread to free
  bool scan_done_ = false, decode_done_ = false, fold_done_ = false;
  size_t queued_writes_ = 0;
  bool failed_ = false;
  Status failure_;
};

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

 private:
  KeyValueStore* target_ = nullptr;
};

class ProjectionHook final : public AppendHook {
 public:
  explicit ProjectionHook(const ProjectionHookOptions& options)
      : batch_events_(std::max<uint64_t>(1, options.rebuild_batch_events)) {}

  void begin_transaction() override {
    tracker_.reset();
    pending_.reset();
  }

  // The events of one transaction are folded into one batch, which keeps the records they
  // touch decoded and writes each changed record once, at seal(): a group of appends rewrote
  // its group records, manifest records and "#/next" once per event before.
  // A manifest's or an observation's parsing and summaries, off the writer thread.
  std::unique_ptr<PreparedEntry> prepare(const EventBody& body) const override {
    return prepare_event(body);
  }

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
    return pending_->apply(projected(index, id, body, context.keys, context.keys,
                                     dynamic_cast<PreparedManifest*>(prepared)));
  }


  Status rebuild(AppendContext& context, uint64_t size) override {
    // The whole state is written again: its sums come from one scan at seal() (following each
    // write instead cost more: a lookup per key and a second hash of each rewritten record).
    tracker_.emplace(std::nullopt);
    // One pass folds each event with the key state at its position, which also gives its void
    // cause as long as no compromise has voided anything: that key state and the final one
    // then void nothing. Once one does (a compromise may void events before it), the pass only
    // finishes the key state, and a second pass folds again with the final key state's voids.
    KeyPolicy keys;
    bool voided = false;
    EVL_RETURN_IF_ERROR(fold_log(context, size, [&](ProjectionBatch*& batch, uint64_t index,
                                                    const Digest& id, const EventBody& body,
                                                    PreparedManifest* prepared) -> Status {
      keys.apply(index, body);
      if (voided) return Status::ok();
      if (is_key_event(body) && keys.voids_anything()) {
        voided = true;
        batch = nullptr;  // what it has not handed over is dropped
        return Status::ok();
      }
      return batch->apply(projected(index, id, body, keys, keys, prepared));
    }));
    if (!voided) return Status::ok();
    EVL_RETURN_IF_ERROR(clear(context.store));  // what the first pass wrote of its batches
    const KeyPolicy final_keys = std::move(keys);
    KeyPolicy running;
    return fold_log(context, size, [&](ProjectionBatch*& batch, uint64_t index, const Digest& id,
                                       const EventBody& body, PreparedManifest* prepared) {
      running.apply(index, body);
      return batch->apply(projected(index, id, body, running, final_keys, prepared));
    });
  }

  Result<uint64_t> applied_size(const KeyValueStore& store) const override {
    return projected_size(store);
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
  // Folds entries [0, size) into the store on a FoldPipeline: `apply` gets a batch over the
  // pipeline's store (it may drop it: nothing more is written), and every batch_events_
  // entries the batch hands its records to the owner to write.
  using ApplyFn = std::function<Status(ProjectionBatch*& batch, uint64_t index, const Digest& id,
                                       const EventBody& body, PreparedManifest* prepared)>;
  Status fold_log(AppendContext& context, uint64_t size, const ApplyFn& apply) {
    FoldPipeline pipeline(context, pool());
    std::unique_ptr<ProjectionBatch> owned;
    ProjectionBatch* batch = nullptr;
    bool dropped = false;
    auto hand_over = [&]() -> Status {
      return batch != nullptr ? pipeline.write(batch->take_changes()) : Status::ok();
    };
    return pipeline.run(
        size,
        [&](uint64_t index, const Digest& id, const EventBody& body,
            PreparedManifest* prepared) -> Status {
          if (!owned && !dropped) {
            owned = std::make_unique<ProjectionBatch>(pipeline.store());
            batch = owned.get();
          }
          if (batch != nullptr) {
            EVL_RETURN_IF_ERROR(apply(batch, index, id, body, prepared));
            if (batch == nullptr) dropped = true;
          }
          return (index + 1) % batch_events_ == 0 ? hand_over() : Status::ok();
        },
        hand_over);
  }

  // The tracker of this transaction, from the stored sums on its first use.
  Status start(AppendContext& context) {
    if (tracker_) return Status::ok();
    auto sums = stored_sums(context.sums, context.store);
    if (!sums) return sums.error();
    tracker_.emplace(std::move(*sums));
    return Status::ok();
  }

  // Serializes the run views of a seal's flush and hashes its changed records on all cores
  // (made on first use: a hook that never seals starts no thread).
  ThreadPool& pool() {
    if (!pool_) pool_ = std::make_unique<ThreadPool>();
    return *pool_;
  }

  Projector projector_;
  uint64_t batch_events_;
  std::unique_ptr<ThreadPool> pool_;
  std::optional<DigestTracker> tracker_;  // between begin_transaction() and seal()
  ForwardingStore forward_;                 // the store of the current call, for pending_
  std::unique_ptr<ProjectionBatch> pending_;  // this transaction's events, until seal()
};

Status decode_event(uint64_t index, ByteView bytes, Digest& id, EventBody& body) {
  auto entry = decode_entry(bytes);
  if (!entry) return corrupt("entry " + std::to_string(index) + ": " + entry.error().message());
  auto decoded = decode_body(entry->body);
  if (!decoded) return corrupt("entry " + std::to_string(index) + ": " + decoded.error().message());
  id = event_id(entry->body);
  body = std::move(*decoded);
  return Status::ok();
}

}  // namespace

std::shared_ptr<AppendHook> make_projection_hook(const ProjectionHookOptions& options) {
  return std::make_shared<ProjectionHook>(options);
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
  size_t next = 0;
  auto seal_at = [&](uint64_t size) -> Status {
    AppendContext context{state, sums, keys, scanner};
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
    AppendContext context{state, sums, keys, scanner};
    EVL_RETURN_IF_ERROR(hook.on_entry(context, index, id, body, nullptr));
    if (sizes[next] == index + 1) EVL_RETURN_IF_ERROR(seal_at(sizes[next++]));
    return Status::ok();
  });
}

}  // namespace evl
