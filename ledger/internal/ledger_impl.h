// ledger/internal/ledger_impl.h — the LMDB implementation of Ledger, shared by ledger.cpp
// (opening, the append pipeline, the writer, rebuilding state), mirror_store.cpp (a mirror's
// appends of upstream entries) and ledger_reads.cpp (reads). Only those files include it. Thread safety and lifetimes: as ledger/ledger.h says.
#pragma once

#include <lmdb.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "keys/checkpoint.h"
#include "ledger/internal/lmdb.h"
#include "ledger/internal/tree_store.h"
#include "ledger/ledger.h"
#include "ledger/thread_pool.h"

namespace evl::ledger_internal {

struct Prepared {
  Status status;        // stateless checks
  CheckedEntry checked;
  std::string subject;  // scope subject for policy
  const Bytes* bytes = nullptr;
  Hash leaf{};          // RFC 6962 leaf hash, computed here rather than in the single writer
  std::optional<Digest> manifest;  // the manifest digest the event registers, if any
  std::unique_ptr<PreparedEntry> hooked;  // the hook's prepare(), if any
};

// One caller's batch on its way through the writer. The writer takes its entries in order as
// soon as they are checked, while the pool checks the rest: nothing waits for a whole batch,
// or part of one, to be checked at once.
struct Pending {
  explicit Pending(size_t n)
      : items(n), outcomes(n), checked(std::make_unique<std::atomic<bool>[]>(n)) {}

  std::vector<Prepared> items;
  std::vector<AppendOutcome> outcomes;
  std::unique_ptr<std::atomic<bool>[]> checked;  // items[i] is prepared (set by the checks)
  std::promise<void> done;  // every item has its outcome (append(); not append_async())
  // append_async(): the batch, which the items point into, and its callback, called by the
  // last of the writer (all outcomes made) and the check tasks (all checks ended) to let go
  // of `holds`.
  std::vector<Bytes> owned;
  Ledger::AppendDone on_done;
  std::atomic<size_t> holds{0};
  // The writer's own (under queue_mu_): items before `taken` are in the writer's transaction
  // or committed, items before `ready` are prepared. The batch leaves the queue once its last
  // item is committed.
  size_t taken = 0;
  size_t ready = 0;
};

// Items [begin, end) of a batch, staged in one transaction.
struct GroupRange {
  std::shared_ptr<Pending> pending;
  size_t begin = 0, end = 0;
};

class LedgerImpl final : public Ledger {
 public:
  explicit LedgerImpl(const OpenOptions& options)
      : dir_(options.dir), read_only_(options.read_only), map_size_(options.map_size),
        log_key_(options.log_key), log_key_path_(options.log_key_path),
        maintain_tree_(options.maintain_tree), hook_(options.hook), on_commit_(options.on_commit),
        notice_(options.notice), mirror_of_(options.mirror_of), own_entries_(options.own_entries),
        // A log's checks feed its writer, which must get a core at once: they run in the
        // background. A mirror's checks are its critical path, as the audit's are (its
        // transactions overlap them on a thread of their own): they run at normal priority.
        pool_(options.verify_threads,
              options.mirror_of ? PoolPriority::kNormal : PoolPriority::kBackground) {}

  ~LedgerImpl() override {
    {
      // append_async()'s check tasks touch the queue: let them end first.
      std::unique_lock lock(queue_mu_);
      checks_cv_.wait(lock, [this] { return async_checks_ == 0; });
    }
    if (writer_.joinable()) {
      {
        std::lock_guard lock(queue_mu_);
        stop_ = true;
      }
      queue_cv_.notify_all();
      writer_.join();
    }
    if (env_ != nullptr) mdb_env_close(env_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  Status open(bool create);

  std::vector<AppendOutcome> append(std::span<const Bytes> batch,
                                    const std::function<void()>& queued) override;
  void append_async(std::vector<Bytes> batch, AppendDone done) override;
  uint64_t size() const override { return size_.load(std::memory_order_acquire); }
  uint64_t commit_id() const override;
  const std::string& dir() const override { return dir_; }
  Result<Bytes> entry(uint64_t index) const override;
  Result<uint64_t> find(const Digest& id) const override;
  Result<uint64_t> find_manifest(const Digest& manifest) const override;
  Status scan(uint64_t from, uint64_t to, const EntryVisitor& visit) const override;
  Result<uint64_t> id_count() const override;
  Status scan_ids(
      const std::function<Status(const Digest&, uint64_t)>& visit) const override;
  KeyPolicy policy() const override;
  Result<Hash> root(uint64_t size) const override;
  Result<std::vector<Hash>> inclusion_proof(uint64_t index, uint64_t size) const override;
  Result<std::vector<Hash>> consistency_proof(uint64_t from, uint64_t to) const override;
  Status read_tree(
      const std::function<Status(const HashReader&, uint64_t)>& fn) const override;
  Status scan_stored_hashes(
      uint64_t from, uint64_t to,
      const std::function<Status(uint64_t, const Hash&)>& visit) const override;
  Result<std::string> checkpoint(std::optional<uint64_t> size) const override;
  using Ledger::scan_checkpoints;
  Status scan_checkpoints(
      uint64_t from_size,
      const std::function<Status(uint64_t, std::string_view)>& visit) const override;
  Result<VerifierKey> log_verifier() const override;
  Result<std::string> statement(std::optional<uint64_t> size) const override;
  Status scan_statements(
      const std::function<Status(uint64_t, std::string_view)>& visit) const override;
  Status read_state(
      const std::function<Status(const KeyValueStore&, uint64_t)>& fn) const override;
  Status rebuild_state() override;
  Status append_upstream(const UpstreamBatch& batch) override;
  std::shared_ptr<UpstreamChecks> check_upstream(std::span<const Bytes> entries) override;
  size_t upstream_batch_entries(size_t most) const override;
  Result<std::string> mirror_target() const override;

 private:
  Status open_env(bool create);
  // A writer first opens the environment as a reader and checks its format, so that a
  // directory that is not a ledger is refused with nothing created in it.
  Status probe_format();
  Status check_format(bool create);
  Status load_state();
  // A read-only ledger's key state and size, brought up to the newest commit of the process
  // that writes the ledger (a mirror, an import) when one has committed since the last look:
  // the key events appended since are applied. Called with policy_mu_ held.
  Status follow_writer_locked() const;
  // Applies the key events at indices `from` and above that `txn` sees to policy_.
  Status apply_key_events(const lmdb::Txn& txn, uint64_t from) const;
  Status load_log_key();
  // A writer's check of the "mirror_of" record: a mirror opens only as the mirror of the key it
  // was created for (a writer naming no log key takes the recorded one), and a log only as a
  // log (mirror_store.cpp). An empty ledger opened as a mirror becomes one: its key is recorded.
  Status check_mirror_record();
  // The key that must sign the genesis's log key and origin: the log key's, or the mirrored.
  bool is_log_key(const Genesis& genesis) const;
  // A mirror's part of store_statement: compares the state's `text` with the upstream's
  // statement of `size` (the one given with the batch, upstream_statement_, and any stored) and
  // stores the given one. Nothing to compare is no error: the upstream published none.
  Status store_upstream_statement(lmdb::Txn& txn, uint64_t size, const std::string& text,
                                  int& rc);
  // append_upstream's transaction; kMapFull-style retries are the caller's (rc).
  Status stage_upstream(lmdb::Txn& txn, const UpstreamBatch& batch, const Checkpoint& checkpoint,
                        std::shared_ptr<Pending> pending, std::optional<KeyPolicy>& changed,
                        tree_store::TreeEdge& edge, int& rc);
  Status catch_up_tree();
  // Rebuilds the hook's state when it does not cover the whole log, and adds the statement of
  // the newest checkpoint when it is missing (a ledger written before statements existed).
  Status catch_up_state();
  // In one write transaction: empties the hook's state and refolds it (`refold`), or keeps it;
  // then seals it and matches or adds the statement of the current size (reseal_statement).
  Status reseal_state(bool refold);
  // How store_statement treats a statement already stored for the size: a commit never finds
  // one (kCorrupt if it does); a rebuild or catch-up must find the same text (kCorrupt if not)
  // and adds one when missing.
  enum class StatementMode { kNew, kSameOrAdd };
  // Seals the hook's state of `size` entries and, when a checkpoint of that size is stored (or
  // `checkpointed`), signs the hook's statement with the log key and stores it.
  Status store_statement(lmdb::Txn& txn, const KeyPolicy& keys, uint64_t size,
                         bool checkpointed, StatementMode mode, int& rc);
  // Signs and stores the checkpoint for a tree of `size` entries; refuses one that is not
  // consistent with the last signed checkpoint.
  Status store_checkpoint(lmdb::Txn& txn, const std::string& origin, uint64_t size,
                          std::optional<Checkpoint>& signed_out, int& rc);
  void prepare(const Bytes& bytes, Prepared& out) const;
  // Prepares item `i` of a queued batch, marks it checked, and wakes the writer when it waits
  // for as many checks as have now ended.
  void check_item(Pending& pending, const Bytes& bytes, size_t i);
  // The outcomes of a batch that is not queued (an empty batch, a read-only ledger, a mirror,
  // after a failed commit); nullopt when it may be queued. Called with queue_mu_ held.
  std::optional<std::vector<AppendOutcome>> refusal_locked(size_t entries) const;
  // A batch whose last item has its outcome: append()'s caller is woken; an append_async()
  // batch lets go of the writer's hold, and is added to `finished` when it was the last.
  static void finish_locked(const std::shared_ptr<Pending>& pending,
                            std::vector<std::shared_ptr<Pending>>& finished);
  // Gives append_async() batches their outcomes (without queue_mu_ held).
  static void deliver(std::vector<std::shared_ptr<Pending>>& finished);
  void writer_loop();
  // Up to `max_entries` prepared items at the head of the queue, not taken yet, once there
  // are kStepEntries of them (or all there are, if fewer), and marks them taken. When no item
  // waits: with `wait_for_batches`, waits for a batch (empty when the writer stops); without,
  // returns empty. Called with queue_mu_ held by `lock`.
  std::vector<GroupRange> take_prepared(std::unique_lock<std::mutex>& lock, size_t max_entries,
                                        bool wait_for_batches);
  // The queued items not taken by the writer yet: `ready`, the checked ones at the head of the
  // queue (in order), and `untaken`, all of them. Called with queue_mu_ held.
  struct QueueCounts {
    size_t ready = 0, untaken = 0;
  };
  QueueCounts count_queue_locked();
  // Commits `group` and what take_prepared() gives while the transaction is short of
  // kMinGroupEntries (added to `group`), or sooner once the writer has caught up with the
  // checks and holds as many entries as are left to check (ledger.cpp, kStepEntries).
  // Returns the failure that stored nothing of the group, if any (its outcomes say so too).
  Status commit_group(std::vector<GroupRange>& group);
  // After a failed commit: remembers `cause` and answers every batch still queued (what the
  // writer has not taken of it) with "not stored because an earlier commit failed". Called
  // with queue_mu_ held.
  void fail_queued_locked(const Status& cause, std::vector<std::shared_ptr<Pending>>& finished);
  // Stages ranges of a group in `txn`. A failed put leaves its raw LMDB code in `rc`
  // (MDB_MAP_FULL is worth a retry after growing the map).
  Status stage_group(lmdb::Txn& txn, std::span<GroupRange> group,
                     std::optional<KeyPolicy>& changed, tree_store::TreeEdge& edge,
                     uint64_t& next, int& rc);
  Status grow_map();
  EntryScanner scanner(lmdb::Txn& txn) const;
  ManifestFinder manifest_finder(lmdb::Txn& txn) const;
  // The number of entries a transaction sees (the cursor is closed before it returns).
  Result<uint64_t> log_size(const lmdb::Txn& txn) const;
  // Deletes every record of `dbi` in `txn` (the caller holds resize_mu_); an LMDB code.
  int empty_db(lmdb::Txn& txn, MDB_dbi dbi);
  // Finds LMDB's map in this process (after opening, and after the map moves).
  void locate_map();
  // release_mapped_pages() for a caller that holds resize_mu_.
  void release_map_locked() const;
  // `value` (from a transaction of the caller, who holds resize_mu_) as the caller may read
  // it. An entry big enough to have LMDB overflow pages of its own is copied into `copy` with
  // pread() from the data file instead of being read through the map: LMDB hands out its
  // address without touching it, and reading it through the map faults its pages (and the
  // kernel's 15 neighbours) into the process, for the reader to drop again to keep memory
  // flat (2.7 µs per 2 KiB entry of an audit, against under 1 µs for the pread). The file
  // holds what the map shows (one page cache), and the transaction's pages do not change
  // while it lasts. Any other value (small, or a page the transaction has written, which is
  // not in the map) is returned as it is.
  ByteView read_out(ByteView value, Bytes& copy) const;
  void release_mapped_pages() const override;

  template <typename Fn>
  auto with_read(Fn&& fn) const -> decltype(fn(std::declval<lmdb::Txn&>())) {
    std::shared_lock lock(resize_mu_);
    auto txn = lmdb::Txn::begin(env_, false);
    if (!txn) return txn.error();
    return fn(*txn);
  }

  std::string dir_;
  bool read_only_;
  uint64_t map_size_;
  MDB_env* env_ = nullptr;
  MDB_dbi entries_ = 0, ids_ = 0, key_events_ = 0, meta_ = 0, tree_ = 0, checkpoints_ = 0;
  MDB_dbi state_ = 0;  // the hook's key/value state ("projections")
  MDB_dbi sums_ = 0;   // the hook's bookkeeping ("projection_sums")
  MDB_dbi statements_ = 0;  // size -> the log key's signed statement about the hook's state
  // Whether the ledger has the databases added with statements ("statements",
  // "projection_sums"): a read-only open of an older ledger finds none.
  bool has_statements_ = false;
  MDB_dbi manifests_ = 0;  // manifest digest -> index of its first registration
  std::shared_ptr<const SecretKey> log_key_;  // writers only
  std::string log_key_path_;
  bool maintain_tree_;
  std::shared_ptr<AppendHook> hook_;
  std::function<void(const CommitInfo&)> on_commit_;
  std::function<void(const std::string&)> notice_;  // open() only
  std::optional<VerifierKey> mirror_of_;  // mirror mode: the upstream's log key
  bool own_entries_;                      // OpenOptions::own_entries
  const std::string* upstream_statement_ = nullptr;  // during append_upstream only
  bool probing_ = false;  // open() only: a writer's first, read-only look (probe_format)
  std::optional<Checkpoint> last_checkpoint_;  // writer thread (and open) only
  tree_store::TreeEdge edge_;                  // writer thread (and open) only
  int lock_fd_ = -1;
  mutable std::atomic<uint64_t> size_{0};  // the writer's; a read-only ledger's follow_writer
  uint64_t staged_since_trim_ = 0;  // writer thread only
  uintptr_t map_begin_ = 0;  // LMDB's map (changed only under resize_mu_ held exclusively)
  size_t map_length_ = 0;
  int data_fd_ = -1;             // LMDB's data file (its own descriptor)
  size_t overflow_from_ = SIZE_MAX;  // values of at least this size have pages of their own

  mutable std::shared_mutex resize_mu_;  // read transactions shared; map resizing exclusive
  mutable std::mutex policy_mu_;
  // Written by the writer thread only, after a commit; in a read-only ledger by
  // follow_writer_locked(), under policy_mu_, as are the two below.
  mutable KeyPolicy policy_;
  mutable uint64_t keys_through_ = 0;    // read-only: key events below this index are applied
  mutable uint64_t followed_commit_ = 0; // read-only: the commit id they were read at

  ThreadPool pool_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Pending>> queue_;
  // Items prepared so far (all batches), and the count at which the waiting writer wants to
  // be woken (UINT64_MAX: it is not waiting for checks).
  std::atomic<uint64_t> prepared_total_{0};
  std::atomic<uint64_t> wake_writer_at_{UINT64_MAX};
  bool stop_ = false;
  size_t async_checks_ = 0;  // append_async() check tasks not ended (under queue_mu_)
  std::condition_variable checks_cv_;  // async_checks_ fell to 0
  // The first failed commit's cause (under queue_mu_): from then on nothing is appended.
  Status write_error_;
  std::thread writer_;
};

}  // namespace evl::ledger_internal

namespace evl {

// A batch checked ahead: one prepared item per entry, pointing at the entries checked.
struct UpstreamChecks {
  std::shared_ptr<ledger_internal::Pending> pending;
};

}  // namespace evl
