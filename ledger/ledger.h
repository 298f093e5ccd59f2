// ledger/ledger.h — the append-only log of signed events, stored in LMDB.
//
// Append is validate → sequence → store. Stateless checks (canonical bytes, signatures) run in
// parallel before the single writer, on a pool of lower priority; the writer takes each entry
// in order as soon as it is checked, checks key policy at its position, assigns dense indices
// inside one LMDB write transaction for many entries (group commit) and acknowledges only after
// that transaction commits durably. A killed process leaves the log as of its last commit:
// never half an entry.
//
// Thread safety: one Ledger may be shared by many threads. append() may be called concurrently
// (calls are merged into shared commits); reads run concurrently, each in its own snapshot.
// One process at a time may open a ledger directory for writing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "events/event.h"
#include "keys/key.h"
#include "keys/policy.h"
#include "ledger/append_hook.h"
#include "ledger/merkle.h"

namespace evl {

// The on-disk format this evledger reads and writes ("meta" database, key "format").
inline constexpr std::string_view kLedgerFormat = "evledger-ledger-v1";

// What the writer tells OpenOptions::on_commit after each durable commit.
struct CommitInfo {
  uint64_t size = 0;          // the log's size after it: its checkpoint's size
  size_t entries = 0;         // entries the commit appended (0 when it only answered duplicates)
  std::chrono::nanoseconds duration{};  // from the transaction's start to its durable commit
};

struct OpenOptions {
  std::string dir;             // the ledger directory (LMDB files live in <dir>/db)
  bool create = false;         // create an empty ledger when the directory has none
  bool read_only = false;      // open for reading; append() then fails with kUsage
  // Read-only opens use LMDB's lock file (db/lock.mdb) when this user may write it (or create
  // it); otherwise they read without it (MDB_NOLOCK), which is safe only while no writer
  // appends, and say so once through `notice` (when set) before open() returns.
  std::function<void(const std::string&)> notice;
  uint64_t map_size = 64ull << 30;  // initial LMDB map size; grown on MDB_MAP_FULL
  // The log key's secret key file, which signs a checkpoint for every commit. Needed to
  // append; empty means <dir>/keys/log.key. It must be the genesis's log key.
  std::string log_key_path;
  // Or the log key itself (takes precedence over log_key_path), for tools that hold it.
  std::shared_ptr<const SecretKey> log_key;
  // Benchmarks only: false skips the tree and checkpoints, to measure what they cost. Such a
  // ledger has no proofs and fails verification; never use it for a real log.
  bool maintain_tree = true;
  // State kept beside the log in the append transactions (the projections), or null.
  std::shared_ptr<AppendHook> hook;
  unsigned verify_threads = 0;      // checking threads (nice +10); 0: one per hardware thread
  // Called on the writer thread after each durable commit, before its callers are answered
  // (so an observer sees a checkpoint before any receipt that cites it goes out). It must not
  // block or call append(): the next commit waits for it.
  std::function<void(const CommitInfo&)> on_commit;
  // Mirror mode: the ledger holds a copy of the log of this verifier key (the upstream's log
  // key, pinned). It has no log key and signs nothing: append() is refused, entries arrive
  // through append_upstream() with the upstream's own signed checkpoints and statements. A
  // ledger created as a mirror records the key ("meta" database) and opens only as its mirror:
  // a writer that names no log key opens it as one (a rebuild refolds its projections and
  // compares them with the upstream's statements), one that names a log key is refused.
  std::optional<VerifierKey> mirror_of;
  // The writer appends entries of its own (import, append, serve): a mirror's directory is
  // then refused at open (kUsage, saying how to publish instead) before anything is written.
  bool own_entries = false;
};

// The pages a transaction of upstream entries may dirty (Ledger::upstream_batch_entries):
// 40 MiB of 4 KiB pages, what a batch of 8,192 entries of 2 KiB dirties at some 6·10^4.
inline constexpr size_t kUpstreamDirtyPages = 10240;

// The stateless checks of a mirror's batch made ahead of its append (Ledger::check_upstream).
struct UpstreamChecks;

// A run of the upstream's entries for a mirror (Ledger::append_upstream), at the same indices.
struct UpstreamBatch {
  uint64_t first = 0;              // index of entries[0]: the mirror's size
  std::span<const Bytes> entries;  // at least one
  // The upstream's signed checkpoint (its note, verbatim) of a size of at least first +
  // entries.size(), which the batch leads towards.
  std::string checkpoint;
  // When the batch ends short of the checkpoint's size: the consistency path from the batch's
  // end to it (prove_prefix_path over the upstream's tree). Empty when it ends at it.
  std::vector<Hash> path;
  // When the batch ends at the checkpoint's size: the upstream's signed statement about its
  // projections at that size (verbatim), if it publishes one; checked against the mirror's own
  // fold and stored.
  std::optional<std::string> statement;
  // check_upstream(entries), when made ahead; append_upstream makes them otherwise.
  std::shared_ptr<UpstreamChecks> checks;
};

struct AppendOutcome {
  Status status;         // ok, or why the entry was rejected (nothing of it was stored)
  uint64_t index = 0;    // valid when ok
  bool added = false;    // false when the event was already in the log at `index`
  Digest id{};           // the event id, when the entry decoded
  // When ok: the size of the checkpoint of the commit that answered the entry, whose tree holds
  // it (index < tree_size); inclusion proofs and receipts are made against it. 0 in a ledger
  // without a tree (OpenOptions::maintain_tree false).
  uint64_t tree_size = 0;
  // Not ok, yet not a rejection: the entry was not stored because its commit failed, or one
  // before it did (see Ledger::append); `status` says why (kIo for the disk, say).
  bool commit_failed = false;
};

// Visits one stored entry; the bytes are valid only during the call. Return a non-ok Status to
// stop the scan with that Status.
using EntryVisitor = std::function<Status(uint64_t index, ByteView entry)>;

class Ledger {
 public:
  virtual ~Ledger() = default;

  static Result<std::unique_ptr<Ledger>> open(const OpenOptions& options);

  // Validates, sequences and durably stores a batch. One outcome per entry, in order; a
  // rejected entry takes no index. An event already present returns its first index.
  // `queued` (optional) is called, on this thread, once every entry of the batch has passed
  // its stateless checks and waits for the writer, before the commits: entries that any caller
  // appends from then on are sequenced after them. A caller may so overlap the checks of its
  // next batch with the commits of this one and keep its order.
  //
  // A commit that fails (the disk is full or fails, LMDB errs, a checkpoint cannot be signed)
  // stores nothing of its group, and the ledger then appends nothing more, so that no entry
  // is stored after one queued before it that failed: the entries queued behind it (the rest
  // of this batch, other callers' batches) and every later append are answered
  // commit_failed, "not stored because an earlier commit failed: <cause>". What was committed
  // before stays. Open the ledger again, once the cause is fixed, to append again (LevelDB's
  // sticky write error; LMDB itself refuses a write transaction after some failed commits).
  [[nodiscard]] virtual std::vector<AppendOutcome> append(
      std::span<const Bytes> batch, const std::function<void()>& queued = nullptr) = 0;

  // append() without waiting, for front ends that hold no thread per caller (the HTTP
  // server's queue, ledger/append_queue.h). The batch is sequenced at once, after every
  // entry queued before this call returns and before every one queued after it; the ledger's
  // pool checks it; `done` then gets the outcomes append() would return, exactly once, after
  // the durable commit that answered the batch's last entry (or at once, when the ledger
  // takes no appends). It runs on the writer's thread, a pool thread, or this one: it must
  // return quickly (hand the outcomes to a thread of its own) and must not call append().
  using AppendDone = std::function<void(std::vector<AppendOutcome>)>;
  virtual void append_async(std::vector<Bytes> batch, AppendDone done) = 0;

  // Mirror mode only (OpenOptions::mirror_of). Checks and stores `batch` in one transaction,
  // or nothing of it: every entry as the audit checks it (check_log_entry, key policy at its
  // index, an event or manifest repeated from an earlier index is refused); the checkpoint's
  // signature by the mirrored key; the tree recomputed, whose root at the batch's end must be
  // the checkpoint's root (ending at its size) or lead to it along `path`; a statement's
  // signature and its text against the mirror's own projections. The checkpoint is stored
  // with the last batch that reaches its size (and, until then, kept as the mirror's target,
  // mirror_target()). Errors: kUsage (not a mirror, `first` is not the size), kRejected (an
  // entry, the checkpoint, a path or a statement fails; the message names which and why),
  // kCorrupt/kIo from storage. Not concurrent with itself (check_upstream may run beside it).
  [[nodiscard]] virtual Status append_upstream(const UpstreamBatch& batch) = 0;
  // The stateless checks of `entries` (signatures, canonical form: the costly part), on the
  // ledger's pool, for an append_upstream of exactly these entries, which must stay where they
  // are until it. May run while another append_upstream stores the batch before: a mirror so
  // checks its next batch during the last one's transaction.
  virtual std::shared_ptr<UpstreamChecks> check_upstream(std::span<const Bytes> entries) = 0;
  // How many of the next `most` upstream entries one append_upstream should take so that its
  // transaction dirties at most about kUpstreamDirtyPages pages (at least one entry). LMDB holds
  // a copy of every page a write transaction changes in memory until the commit, and keeps
  // those copies for the next transactions: a pull's memory follows its largest transaction.
  // Event ids and manifest digests are random keys, so once their B-trees have more pages
  // than a batch has entries each of its entries dirties a page of each; the estimate comes
  // from the sizes of the mirror's B-trees (mdb_stat), so a batch takes fewer entries as the
  // mirror grows (8,192 up to some 6·10^4 entries, about 3,600 at 10^6) and its memory stays
  // flat.
  [[nodiscard]] virtual size_t upstream_batch_entries(size_t most) const = 0;
  // The upstream checkpoint (note) that the entries past the newest stored checkpoint were
  // proved against, while a pull towards it is unfinished; kNotFound otherwise.
  [[nodiscard]] virtual Result<std::string> mirror_target() const = 0;

  // Number of entries (the next index). A read-only Ledger counts what it found at open, and
  // then what it saw when policy() last followed the process that writes it; readers that
  // must be current read the size of their own snapshot (read_state, the newest checkpoint).
  virtual uint64_t size() const = 0;
  // Changes whenever any process commits to the ledger's database (LMDB's last transaction
  // id): a cheap test of whether cached reads are still current, without a transaction.
  virtual uint64_t commit_id() const = 0;
  virtual const std::string& dir() const = 0;

  [[nodiscard]] virtual Result<Bytes> entry(uint64_t index) const = 0;
  [[nodiscard]] virtual Result<uint64_t> find(const Digest& id) const = 0;
  // The index of the event that carries the manifest of this digest (SHA-256 of its canonical
  // text; the ledger appends one event per manifest); kNotFound when none does.
  [[nodiscard]] virtual Result<uint64_t> find_manifest(const Digest& manifest) const = 0;

  // Visits entries [from, to) in one snapshot, in index order.
  [[nodiscard]] virtual Status scan(uint64_t from, uint64_t to, const EntryVisitor& visit) const = 0;

  // The number of id→index records; equals size() in a sound ledger.
  [[nodiscard]] virtual Result<uint64_t> id_count() const = 0;
  // Visits the id index (event id → index) in id order, one read snapshot, dropping the pages
  // it read as it goes; kCorrupt for a record that is not a 32-byte id and an 8-byte index.
  [[nodiscard]] virtual Status scan_ids(
      const std::function<Status(const Digest& id, uint64_t index)>& visit) const = 0;

  // A copy of the key state at the current size. A read-only Ledger first applies the key
  // events that another process appended since it last looked (when commit_id() moved).
  virtual KeyPolicy policy() const = 0;

  // Drops the pages of LMDB's read-only map from this process (they stay in the page cache
  // and fault back in when read). Long scans call it to keep their resident size flat.
  virtual void release_mapped_pages() const = 0;

  // --- the RFC 6962 tree over the entries, maintained in the append transaction ---

  // The tree hash of the first `size` entries (size <= size()).
  [[nodiscard]] virtual Result<Hash> root(uint64_t size) const = 0;
  // Inclusion proof of entry `index` in the tree of `size` entries.
  [[nodiscard]] virtual Result<std::vector<Hash>> inclusion_proof(uint64_t index,
                                                                  uint64_t size) const = 0;
  // Consistency proof from the tree of `from` entries to the tree of `to` entries (from >= 1).
  [[nodiscard]] virtual Result<std::vector<Hash>> consistency_proof(uint64_t from,
                                                                    uint64_t to) const = 0;
  // Runs `fn` with a reader of the stored hashes of one snapshot (valid during the call only).
  [[nodiscard]] virtual Status read_tree(
      const std::function<Status(const HashReader& hashes, uint64_t size)>& fn) const = 0;

  // Visits the stored hashes with indexes [from, to) in order (Go tlog's stored-hash layout,
  // ledger/merkle.h), in one snapshot.
  [[nodiscard]] virtual Status scan_stored_hashes(
      uint64_t from, uint64_t to,
      const std::function<Status(uint64_t index, const Hash& hash)>& visit) const = 0;

  // --- state kept by the AppendHook, in the "projections" database ---

  // Runs `fn` over a read snapshot of the hook's state (valid during the call only).
  [[nodiscard]] virtual Status read_state(
      const std::function<Status(const KeyValueStore& state, uint64_t size)>& fn) const = 0;
  // Empties the hook's state and lets the hook fold the whole log again, in one transaction:
  // readers see the old state until the new one commits. kUsage without a hook.
  [[nodiscard]] virtual Status rebuild_state() = 0;

  // --- signed checkpoints (C2SP tlog-checkpoint notes by the log key), one per commit ---

  // The newest checkpoint, or the one for exactly `size` entries (kNotFound when no commit
  // ended at that size).
  [[nodiscard]] virtual Result<std::string> checkpoint(
      std::optional<uint64_t> size = std::nullopt) const = 0;
  // Visits every stored checkpoint of at least `from_size` entries (all: 0), oldest first, in
  // one snapshot; the text is valid during the call only.
  [[nodiscard]] virtual Status scan_checkpoints(
      uint64_t from_size,
      const std::function<Status(uint64_t size, std::string_view note)>& visit) const = 0;
  [[nodiscard]] Status scan_checkpoints(
      const std::function<Status(uint64_t size, std::string_view note)>& visit) const {
    return scan_checkpoints(0, visit);
  }
  // The log's verifier key, from the genesis (name = origin). kNotFound before the genesis.
  [[nodiscard]] virtual Result<VerifierKey> log_verifier() const = 0;

  // --- signed statements about the hook's state (projections/digest.h), one per checkpoint ---
  // Every commit made with a hook stores, beside its checkpoint, a signed note by the log key
  // whose text the hook gives for the state of that size (the projections: their digest).
  // Commits made without a hook, or by an evledger from before statements, have none. The
  // text's first line names its format: a rebuild replaces the statement of the log's size when
  // that line differs from the hook's (one made by an evledger that folds the log otherwise),
  // and fails, changing nothing, when only the rest differs.

  // The newest statement, or the one for exactly `size` entries. kNotFound when there is none
  // (naming why); not an error in itself for an older ledger.
  [[nodiscard]] virtual Result<std::string> statement(
      std::optional<uint64_t> size = std::nullopt) const = 0;
  // Visits every stored statement, oldest first; the text is valid during the call only.
  [[nodiscard]] virtual Status scan_statements(
      const std::function<Status(uint64_t size, std::string_view note)>& visit) const = 0;
};

// The index of the entry `text` names: an event id (sha256:<64 hex>) or a decimal log index,
// as `evledger get` and the API's events/{index|id} take them. An index is not checked
// against the log (entry() says when it has none). kUsage when `text` is neither; kNotFound
// for an id that no entry of the ledger has.
Result<uint64_t> find_entry(const Ledger& ledger, std::string_view text);

}  // namespace evl
