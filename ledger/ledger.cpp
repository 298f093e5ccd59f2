#include "ledger/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "events/event_builder.h"
#include "events/observation.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/internal/ledger_impl.h"
#include "ledger/internal/lmdb.h"
#include "ledger/internal/lmdb_kv.h"
#include "ledger/internal/tree_store.h"
#include "ledger/thread_pool.h"

namespace evl {

namespace ledger_internal {
namespace {

// The writer's transactions: it stages each entry soon after its checks, kStepEntries at a
// time (or what is left, if fewer), and commits once it holds at least kMinGroupEntries (at
// most kMaxGroupEntries) or has staged every entry queued. The checks go on meanwhile; what
// waits for the writer at the end of a stream is its last commit. Large transactions matter:
// random event ids touch pages all over the ids B-tree, and a bigger transaction shares each
// touched page among more entries (measured: 1,024 → 4,096 raised sustained append by about
// 8%), and each commit costs a durable LMDB commit and a signed checkpoint.
//
// A transaction commits before kMinGroupEntries when the writer has caught up with the checks
// and holds at least as many entries as are left to check: publishers that wait for each batch
// to be durable before sending the next keep fewer entries in flight than kMinGroupEntries, and
// if the writer took them all into one commit, the checks would have nothing to do until it
// ended. Committing the first half lets the checks of the second overlap the commit, and the
// publishers whose batches it acknowledges send more meanwhile (measured with 4 publishers
// sending batches of 1,000: 0.68 → 0.75 × the verify rate). A writer that lags behind the checks
// (an import with projections) keeps its large groups.
constexpr size_t kStepEntries = 256;
constexpr size_t kMinGroupEntries = 4096;
constexpr size_t kMaxGroupEntries = 16384;

constexpr std::string_view kFormatKey = "format";

// After staging this many entries, the writer drops the pages of LMDB's read-only map from
// this process (MADV_DONTNEED on a shared file mapping only unmaps them: they stay in the page
// cache and fault back in when read). Without it the resident size grows with the file: each
// random id insert copies a leaf of the ids B-tree out of the map, and the kernel maps 16
// neighbouring pages (fault-around, which MADV_RANDOM does not turn off on Linux 6) with it.
// Dropping them every 32 MiB appended still left 960 MB resident at 10^6 entries; every 128
// entries bounds the map's share at about 128 × 3 faults (ids, manifests, entries) × 64 KiB.
// Measured peak at 2·10^5 entries: 131 MB (every 512: 184 MB).
constexpr uint64_t kTrimEveryEntries = 128;

// The outcome of an entry that a failed commit kept out of the log.
AppendOutcome not_stored(const Status& why) {
  AppendOutcome outcome;
  outcome.status = why;
  outcome.commit_failed = true;
  return outcome;
}

bool is_key_event(EventKind kind) {
  return kind == EventKind::kGenesis || kind == EventKind::kKeyGrant ||
         kind == EventKind::kKeyRevoke;
}

// Why a reader must do without LMDB's lock file in `db_dir`, or nullopt when it can use it.
// LMDB opens lock.mdb for writing even to read (and creates it when missing), and fails with
// EACCES when it cannot: a user who may only read the ledger could not audit it. Reading
// without the lock (MDB_NOLOCK) is safe only while no writer commits, so it is chosen only when
// the lock cannot be had, and said. `may_create`: false when nothing may be created (a
// writer's probe); a missing lock file then also means reading without it, which is safe:
// every process that opens the environment with locking creates lock.mdb, so none has.
std::optional<std::string> why_without_lock(const std::filesystem::path& db_dir,
                                            bool may_create) {
  const std::string lock = (db_dir / "lock.mdb").string();
  int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return std::nullopt;
  }
  if (errno == EROFS) return std::nullopt;  // LMDB itself reads a read-only filesystem unlocked
  if (errno != ENOENT) return lock + " cannot be opened for writing: " + std::strerror(errno);
  if (!may_create) return lock + " does not exist";
  if (::access(db_dir.c_str(), W_OK) == 0) return std::nullopt;
  return lock + " does not exist and cannot be created: " + std::strerror(errno);
}

}  // namespace

Status LedgerImpl::open(bool create) {
  std::error_code ec;
  const std::filesystem::path db_dir = std::filesystem::path(dir_) / "db";
  if (!std::filesystem::exists(db_dir, ec)) {
    if (!create) {
      return io_error("no ledger at " + dir_ + " (no " + db_dir.string() +
                      "); create one with 'evledger init --ledger " + dir_ + " --origin ORIGIN'");
    }
    std::filesystem::create_directories(db_dir, ec);
    if (ec) return io_error("cannot create " + db_dir.string() + ": " + ec.message());
  }
  if (!read_only_ && !create) EVL_RETURN_IF_ERROR(probe_format());
  if (!read_only_) {
    std::string lock_path = (db_dir / "writer.lock").string();
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0 && errno == EROFS)
      return io_error("cannot open " + lock_path + ": the file system is read-only, and a writer " +
                      "needs the ledger's db/ writable: remount it read-write, or read it with a " +
                      "command that only reads (verify, log, serve --read-only)");
    if (lock_fd_ < 0) return io_error("cannot open " + lock_path + ": " + std::strerror(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      return io_error("ledger " + dir_ + " is open for writing by another process; wait for "
                      "it to finish or open it read-only");
    }
  }
  EVL_RETURN_IF_ERROR(open_env(create));
  EVL_RETURN_IF_ERROR(check_format(create));
  EVL_RETURN_IF_ERROR(load_state());
  if (!read_only_) {
    EVL_RETURN_IF_ERROR(check_mirror_record());
    if (!mirror_of_) EVL_RETURN_IF_ERROR(load_log_key());
    if (maintain_tree_) EVL_RETURN_IF_ERROR(catch_up_tree());
    if (hook_) EVL_RETURN_IF_ERROR(catch_up_state());
    if (mirror_of_) return Status::ok();  // no writer thread: append_upstream writes
    auto writer = start_thread([this] { writer_loop(); }, "the ledger's writer thread");
    if (!writer) return writer.error();
    writer_ = std::move(*writer);
  }
  return Status::ok();
}

Status LedgerImpl::probe_format() {
  read_only_ = probing_ = true;
  Status s = open_env(false);
  if (s) s = check_format(false);
  if (env_ != nullptr) mdb_env_close(env_);
  env_ = nullptr;
  data_fd_ = -1;
  read_only_ = probing_ = false;
  return s;
}

Status LedgerImpl::open_env(bool create) {
  int rc = mdb_env_create(&env_);
  if (rc != 0) return lmdb::error(rc, "cannot create an LMDB environment");
  mdb_env_set_maxdbs(env_, 16);
  mdb_env_set_mapsize(env_, map_size_);
  // MDB_NOTLS: read transactions are not tied to threads. Never MDB_WRITEMAP on the log.
  unsigned flags = MDB_NOTLS | (read_only_ ? MDB_RDONLY : 0);
  const std::filesystem::path db_dir = std::filesystem::path(dir_) / "db";
  std::string path = db_dir.string();
  std::optional<std::string> unlocked;
  if (read_only_) unlocked = why_without_lock(db_dir, !probing_);
  if (unlocked) flags |= MDB_NOLOCK;
  rc = mdb_env_open(env_, path.c_str(), flags, 0644);
  if (rc == ENOENT && !std::filesystem::exists(db_dir / "data.mdb")) {
    return io_error("no ledger at " + dir_ + " (" + path + " holds no data.mdb); create one "
                    "with 'evledger init --ledger " + dir_ + " --origin ORIGIN'");
  }
  if (rc == EACCES) {
    return io_error("cannot open the ledger database in " + path + ": " + mdb_strerror(rc) +
                    "; reading a ledger needs read access to " + path + " and its data.mdb, "
                    "writing also write access to the directory");
  }
  if (rc == ENOMEM) {
    const auto why = lmdb::cannot_map(map_size_);
    return io_error("cannot open the ledger database in " + path + ": LMDB maps " +
                    std::to_string(map_size_) + " bytes of address space for it (not memory), "
                    "and this process may not map that much (" +
                    why.value_or(std::string("mmap: ") + mdb_strerror(rc)) +
                    "): raise the limit (ulimit -v)");
  }
  if (rc != 0) return lmdb::error(rc, "cannot open the ledger database in " + path);
  if (unlocked && !probing_ && notice_) {
    notice_("reading " + path + " without LMDB's lock file (" + *unlocked + "): this is safe "
            "only while no writer appends to the ledger; audit a copy, or stop the writers "
            "first, or give this user write access to the lock file");
  }
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  map_size_ = info.me_mapsize;
  locate_map();
  mdb_filehandle_t fd;
  if (mdb_env_get_fd(env_, &fd) == 0) data_fd_ = fd;
  MDB_stat stat;
  if (mdb_env_stat(env_, &stat) == 0) {
    // LMDB keeps a node in a leaf while it fits twice into a page (mdb_env_open's me_nodemax:
    // half the page less the page header and a slot), 8-byte key and node header included.
    overflow_from_ = (stat.ms_psize - 16) / 2 - 2 - 8 - 8 + 1;
  }

  auto txn = lmdb::Txn::begin(env_, !read_only_);
  if (!txn) return txn.error();
  unsigned dbi_flags = read_only_ ? 0 : MDB_CREATE;
  struct Named {
    const char* name;
    MDB_dbi* dbi;
  } named[] = {{"entries", &entries_}, {"ids", &ids_},   {"key_events", &key_events_},
               {"meta", &meta_},       {"tree", &tree_}, {"checkpoints", &checkpoints_},
               {"projections", &state_}, {"manifests", &manifests_}};
  for (auto& n : named) {
    rc = mdb_dbi_open(txn->get(), n.name, dbi_flags, n.dbi);
    if (rc == MDB_NOTFOUND) {
      return corrupt("ledger " + dir_ + " has no '" + n.name +
                     "' database: it is not an evledger ledger or it is damaged");
    }
    if (rc != 0) return lmdb::error(rc, std::string("cannot open database ") + n.name);
  }
  // Added with statements: an older ledger opened read-only has neither, which is no error
  // (it has no statements to read); any writer creates them.
  Named added[] = {{"statements", &statements_}, {"projection_sums", &sums_}};
  has_statements_ = true;
  for (auto& n : added) {
    rc = mdb_dbi_open(txn->get(), n.name, dbi_flags, n.dbi);
    if (rc == MDB_NOTFOUND && read_only_) {
      has_statements_ = false;
      continue;
    }
    if (rc != 0) return lmdb::error(rc, std::string("cannot open database ") + n.name);
  }
  // Even a read-only transaction must commit: aborting it would close the new handles.
  return txn->commit();
}

Status LedgerImpl::check_format(bool create) {
  auto txn = lmdb::Txn::begin(env_, !read_only_);
  if (!txn) return txn.error();
  auto format = txn->get(meta_, as_bytes(kFormatKey));
  if (format) {
    if (as_chars(*format) != kLedgerFormat) {
      return rejected("ledger " + dir_ + " has format '" + std::string(as_chars(*format)) +
                      "', which this evledger does not know (it reads " +
                      std::string(kLedgerFormat) + "); use the evledger that wrote it");
    }
    return Status::ok();
  }
  if (format.error().code() != Code::kNotFound) return format.error();
  if (!create || read_only_) {
    return rejected("ledger " + dir_ + " has no format record: it was never initialised; run "
                    "'evledger init'");
  }
  int rc = txn->put(meta_, as_bytes(kFormatKey), as_bytes(kLedgerFormat), 0);
  if (rc != 0) return lmdb::error(rc, "cannot write the format record");
  return txn->commit();
}

Status LedgerImpl::load_state() {
  followed_commit_ = commit_id();  // before the read: a commit after it is followed later
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto size = log_size(txn);
    if (!size) return size.error();
    size_.store(*size);
    EVL_RETURN_IF_ERROR(apply_key_events(txn, 0));
    keys_through_ = *size;
    return Status::ok();
  });
}

Status LedgerImpl::apply_key_events(const lmdb::Txn& txn, uint64_t from) const {
  // Key state: replay the key events, which the key_events database indexes.
  auto keys = lmdb::Cursor::open(txn, key_events_);
  if (!keys) return keys.error();
  auto start = u64_be(from);
  MDB_val k = lmdb::val(ByteView(start)), v;
  int rc;
  for (rc = (*keys)->get(k, v, MDB_SET_RANGE); rc == 0; rc = (*keys)->get(k, v, MDB_NEXT)) {
    if (k.mv_size != 8) return corrupt("key_events database has a key that is not 8 bytes");
    uint64_t index = get_u64_be(static_cast<const uint8_t*>(k.mv_data));
    auto stored = txn.get(entries_, u64_be(index));
    if (!stored) return corrupt("key event " + std::to_string(index) + " is missing");
    auto checked = check_entry(*stored);
    if (!checked) return corrupt("key event " + std::to_string(index) + ": " +
                                 checked.error().message() + "; run 'evledger verify'");
    policy_.apply(index, checked->body);
  }
  if (rc != MDB_NOTFOUND) return lmdb::error(rc, "cannot read the key events");
  return Status::ok();
}

Status LedgerImpl::follow_writer_locked() const {
  const uint64_t commit = commit_id();
  if (commit == followed_commit_) return Status::ok();
  EVL_RETURN_IF_ERROR(with_read([&](lmdb::Txn& txn) -> Status {
    auto size = log_size(txn);
    if (!size) return size.error();
    EVL_RETURN_IF_ERROR(apply_key_events(txn, keys_through_));
    keys_through_ = *size;
    size_.store(*size, std::memory_order_release);
    return Status::ok();
  }));
  followed_commit_ = commit;
  return Status::ok();
}

KeyPolicy LedgerImpl::policy() const {
  std::lock_guard lock(policy_mu_);
  // A failed read keeps the key state last read (a later call tries again); the reads that
  // follow report what is wrong with the database.
  if (read_only_) (void)follow_writer_locked();
  return policy_;
}

Status LedgerImpl::load_log_key() {
  if (!log_key_) {
    std::string path = log_key_path_.empty() ? dir_ + "/keys/log.key" : log_key_path_;
    auto key = SecretKey::load(path);
    if (!key) {
      return key.error().with_context(
          "the log key signs a checkpoint for every commit, so appending needs it (--log-key)");
    }
    log_key_ = std::make_shared<const SecretKey>(std::move(key.value()));
  }
  if (const auto& genesis = policy_.genesis()) {
    if (genesis->log_key != log_key_->public_key() || genesis->origin != log_key_->name()) {
      return rejected("log key " + log_key_->name() + " is not this ledger's log key (" +
                      genesis->origin + "); use the log.key made by evledger init");
    }
  }
  return Status::ok();
}

Status LedgerImpl::catch_up_tree() {
  auto txn = lmdb::Txn::begin(env_, true);
  if (!txn) return txn.error();
  auto tree_size = tree_store::tree_size(*txn, tree_);
  if (!tree_size) return tree_size.error();
  auto last = tree_store::last_checkpoint(*txn, checkpoints_);
  if (!last) return last.error();
  last_checkpoint_ = *last;
  EVL_RETURN_IF_ERROR(edge_.load(tree_store::TxnHashReader(*txn, tree_), *tree_size));
  if (*tree_size == size()) return Status::ok();
  if (*tree_size > size()) {
    return corrupt("the tree holds " + std::to_string(*tree_size) + " entries but the log only " +
                   std::to_string(size()) + "; run evledger verify");
  }
  if (mirror_of_) {
    return corrupt("the mirror " + dir_ + " holds " + std::to_string(size()) +
                   " entries but a tree of " + std::to_string(*tree_size) + "; a mirror stores "
                   "both in one transaction: run 'evledger verify --ledger " + dir_ + "'");
  }
  // A ledger written before the tree existed, or damaged: add the missing records.
  int rc = 0;
  for (uint64_t n = *tree_size; n < size(); ++n) {
    auto entry = txn->get(entries_, u64_be(n));
    if (!entry) return corrupt("entry " + std::to_string(n) + " is missing");
    EVL_RETURN_IF_ERROR(
        tree_store::append_record(*txn, tree_, n, leaf_hash(*entry), edge_, rc));
  }
  std::optional<Checkpoint> signed_checkpoint;
  EVL_RETURN_IF_ERROR(
      store_checkpoint(*txn, policy_.genesis()->origin, size(), signed_checkpoint, rc));
  EVL_RETURN_IF_ERROR(txn->commit());
  last_checkpoint_ = std::move(signed_checkpoint);
  return Status::ok();
}

Status LedgerImpl::catch_up_state() {
  uint64_t applied = 0;
  EVL_RETURN_IF_ERROR(read_state([&](const KeyValueStore& state, uint64_t) -> Status {
    auto n = hook_->applied_size(state);
    if (!n) return n.error();
    applied = *n;
    return Status::ok();
  }));
  if (applied != size()) return reseal_state(true);
  if (!maintain_tree_ || size() == 0) return Status::ok();
  auto stored = statement(size());
  if (stored) return Status::ok();
  if (stored.error().code() != Code::kNotFound) return stored.error();
  return reseal_state(false);
}

Status LedgerImpl::store_statement(lmdb::Txn& txn, const KeyPolicy& keys, uint64_t size,
                                   bool checkpointed, StatementMode mode, int& rc) {
  if (!keys.genesis()) return Status::ok();  // an empty log: nothing to state
  const std::string& origin = keys.genesis()->origin;
  lmdb::TxnKeyValueStore state(txn, state_, true), sums(txn, sums_, true);
  state.release_pages_with([this] { release_map_locked(); });  // a seal may scan it all
  AppendContext context{state, sums, keys, scanner(txn), manifest_finder(txn)};
  auto text = hook_->seal(context, origin, size);
  if (state.map_full() || sums.map_full()) rc = MDB_MAP_FULL;
  if (!text) return text.error().with_context("sealing the state of " + std::to_string(size));
  if (!checkpointed) {
    auto checkpoint = txn.get(checkpoints_, u64_be(size));
    if (!checkpoint && checkpoint.error().code() == Code::kNotFound) return Status::ok();
    if (!checkpoint) return checkpoint.error();
  }
  if (mirror_of_) return store_upstream_statement(txn, size, *text, rc);
  const std::string what = "the statement about the state of " + std::to_string(size) + " entries";
  if (mode == StatementMode::kSameOrAdd) {
    auto existing = txn.get(statements_, u64_be(size));
    if (existing) {
      auto note = parse_note(as_chars(*existing));
      if (note && note->text == *text) return Status::ok();
      // A statement's first line names its format: one of another format (made by an evledger
      // that folds the log differently) states another function of the log, which this one
      // cannot check, and the statement of this format replaces it.
      const auto format = [](std::string_view t) { return t.substr(0, t.find('\n') + 1); };
      if (!note || format(note->text) == format(*text)) {
        return corrupt(what + " that the log key signed says\n" +
                       (note ? note->text : std::string("(an unreadable note)\n")) +
                       "but the state folded from the log gives\n" + *text +
                       "(a bug in evledger, a tampered statement, or state changed outside "
                       "evledger); run 'evledger rebuild --check'");
      }
    } else if (existing.error().code() != Code::kNotFound) {
      return existing.error();
    }
  }
  auto note = sign_note(*text, *log_key_);
  if (!note) return note.error().with_context("cannot sign " + what);
  rc = txn.put(statements_, u64_be(size), as_bytes(*note),
               mode == StatementMode::kNew ? MDB_NOOVERWRITE : 0);
  if (rc == MDB_KEYEXIST) {
    return corrupt(what + " is already stored: the statements run ahead of the log");
  }
  if (rc != 0) return lmdb::error(rc, "cannot store " + what);
  return Status::ok();
}

Status LedgerImpl::store_checkpoint(lmdb::Txn& txn, const std::string& origin, uint64_t size,
                                    std::optional<Checkpoint>& signed_out, int& rc) {
  tree_store::TxnHashReader reader(txn, tree_);
  auto root = tree_hash(size, reader);
  if (!root) return root.error();
  if (last_checkpoint_) {
    // The log never signs two checkpoints that are not consistent.
    const Checkpoint& last = *last_checkpoint_;
    if (last.origin != origin || last.size > size) {
      return corrupt("refusing to sign checkpoint " + std::to_string(size) +
                     ": the last signed checkpoint is " + last.origin + " at size " +
                     std::to_string(last.size));
    }
    if (last.size > 0) {
      auto proof = prove_tree(size, last.size, reader);
      Status consistent = proof ? verify_consistency(last.size, size, *proof, last.root, *root)
                                : proof.error();
      if (!consistent) {
        return corrupt("refusing to sign checkpoint " + std::to_string(size) +
                       ": it is not consistent with the signed checkpoint at size " +
                       std::to_string(last.size) + " (" + consistent.message() + ")");
      }
    }
  }
  Checkpoint checkpoint{origin, size, *root, {}};
  std::string note = sign_checkpoint(checkpoint, *log_key_);
  rc = txn.put(checkpoints_, u64_be(size), as_bytes(note), MDB_APPEND);
  if (rc != 0) return lmdb::error(rc, "cannot store checkpoint " + std::to_string(size));
  signed_out = std::move(checkpoint);
  return Status::ok();
}

void LedgerImpl::prepare(const Bytes& bytes, Prepared& out) const {
  out.bytes = &bytes;
  out.status = check_log_entry(bytes, out.checked, out.subject);
  if (!out.status) return;
  // The log's admission rule for new entries (a mirror's upstream entries never come here).
  const int64_t clock_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  out.status = check_claimed_time(out.checked.body.claimed_time_ms, clock_ms);
  if (!out.status) return;
  if (const ManifestText* m = registered_manifest(out.checked.body)) {
    out.manifest = sha256(as_bytes(m->canonical));
  }
  if (maintain_tree_) out.leaf = leaf_hash(bytes);
  if (hook_) {
    out.hooked = hook_->prepare(out.checked.body, out.manifest ? &*out.manifest : nullptr);
  }
}

std::optional<std::vector<AppendOutcome>> LedgerImpl::refusal_locked(size_t entries) const {
  if (read_only_ || mirror_of_) {
    const Status why = usage_error(
        read_only_ ? "ledger " + dir_ + " is open read-only"
                   : "ledger " + dir_ + " is a mirror of " + mirror_of_->name + ": it holds only "
                     "what its upstream signed (evledger mirror), never an entry of its own");
    return std::vector<AppendOutcome>(entries, AppendOutcome{why, 0, false, {}});
  }
  if (entries == 0) return std::vector<AppendOutcome>{};
  if (!write_error_.is_ok()) {
    // Nothing is appended after a failed commit (ledger.h): not even checked.
    const Status later(write_error_.code(), "not stored because an earlier commit failed: " +
                                                write_error_.message());
    return std::vector<AppendOutcome>(entries, not_stored(later));
  }
  return std::nullopt;
}

void LedgerImpl::check_item(Pending& pending, const Bytes& bytes, size_t i) {
  prepare(bytes, pending.items[i]);
  pending.checked[i].store(true, std::memory_order_release);
  // Both seq_cst, against the writer's store of wake_writer_at_ and its load of
  // prepared_total_: one of the two sides sees the other's write.
  if (prepared_total_.fetch_add(1) + 1 >= wake_writer_at_.load()) {
    std::lock_guard lock(queue_mu_);
    queue_cv_.notify_one();
  }
}

std::vector<AppendOutcome> LedgerImpl::append(std::span<const Bytes> batch,
                                              const std::function<void()>& queued) {
  // Queued first, so that the writer takes each entry as soon as the pool has checked it (and
  // this batch keeps its place before any appended later); then checked.
  auto pending = std::make_shared<Pending>(batch.size());
  std::future<void> done = pending->done.get_future();
  {
    std::unique_lock lock(queue_mu_);
    if (auto refused = refusal_locked(batch.size())) {
      lock.unlock();
      if (queued) queued();
      return std::move(*refused);
    }
    queue_.push_back(pending);
  }
  queue_cv_.notify_one();
  pool_.parallel_for(batch.size(), [&](size_t i) { check_item(*pending, batch[i], i); });
  if (queued) queued();
  done.wait();
  // The outcomes of a failed commit's followers were made without their checks' ids.
  for (size_t i = 0; i < batch.size(); ++i) {
    if (pending->outcomes[i].commit_failed) pending->outcomes[i].id = pending->items[i].checked.id;
  }
  return std::move(pending->outcomes);
}

void LedgerImpl::append_async(std::vector<Bytes> batch, AppendDone done) {
  // Checked in blocks of this many entries, each a task of the pool's, in order.
  constexpr size_t kCheckBlock = 4;
  const size_t n = batch.size();
  const size_t blocks = (n + kCheckBlock - 1) / kCheckBlock;
  auto pending = std::make_shared<Pending>(n);
  pending->owned = std::move(batch);
  pending->on_done = std::move(done);
  pending->holds.store(1 + blocks);  // the writer's and each block's
  {
    std::unique_lock lock(queue_mu_);
    if (auto refused = refusal_locked(n)) {
      lock.unlock();
      pending->on_done(std::move(*refused));
      return;
    }
    queue_.push_back(pending);
    async_checks_ += blocks;
  }
  queue_cv_.notify_one();
  for (size_t b = 0; b < blocks; ++b) {
    pool_.post([this, pending, b] {
      const size_t end = std::min(pending->items.size(), (b + 1) * kCheckBlock);
      for (size_t i = b * kCheckBlock; i < end; ++i) check_item(*pending, pending->owned[i], i);
      if (pending->holds.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::vector<std::shared_ptr<Pending>> finished{pending};
        deliver(finished);
      }
      std::lock_guard lock(queue_mu_);
      if (--async_checks_ == 0) checks_cv_.notify_all();
    });
  }
}

void LedgerImpl::finish_locked(const std::shared_ptr<Pending>& pending,
                               std::vector<std::shared_ptr<Pending>>& finished) {
  if (!pending->on_done) {
    pending->done.set_value();
  } else if (pending->holds.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    finished.push_back(pending);
  }
}

void LedgerImpl::deliver(std::vector<std::shared_ptr<Pending>>& finished) {
  for (auto& pending : finished) {
    for (size_t i = 0; i < pending->items.size(); ++i) {
      AppendOutcome& outcome = pending->outcomes[i];
      if (outcome.commit_failed) outcome.id = pending->items[i].checked.id;
    }
    pending->on_done(std::move(pending->outcomes));
  }
  finished.clear();
}

std::vector<GroupRange> LedgerImpl::take_prepared(std::unique_lock<std::mutex>& lock,
                                                   size_t max_entries, bool wait_for_batches) {
  for (;;) {
    const auto [ready, untaken] = count_queue_locked();
    if (untaken == 0) {
      if (!wait_for_batches || stop_) return {};
      queue_cv_.wait(lock);
      continue;
    }
    const size_t wanted = std::min({kStepEntries, untaken, max_entries});
    if (ready >= wanted) {
      std::vector<GroupRange> out;
      size_t entries = 0;
      for (auto& pending : queue_) {
        const size_t n = pending->items.size();
        if (pending->taken == n) continue;  // in the writer's transaction already
        const size_t take = std::min(pending->ready - pending->taken, max_entries - entries);
        if (take > 0) {
          out.push_back({pending, pending->taken, pending->taken + take});
          pending->taken += take;
          entries += take;
        }
        if (pending->taken < n) break;
      }
      return out;
    }
    // Wait until enough more items are prepared, but for no more than are still unprepared
    // once the count is read: an item is marked checked before it is counted, so each one
    // seen unchecked after reading the count adds to it later (the appender that queued it is
    // checking it). Counting them first would let items finish in between and set the target
    // beyond what the count ever reaches.
    const uint64_t counted = prepared_total_.load();
    size_t unprepared = 0;
    for (auto& pending : queue_) {
      for (size_t i = pending->ready; i < pending->items.size(); ++i) {
        unprepared += !pending->checked[i].load(std::memory_order_acquire);
      }
    }
    if (unprepared == 0) continue;  // all prepared meanwhile
    const uint64_t target = counted + std::min(wanted - ready, unprepared);
    wake_writer_at_.store(target);
    if (prepared_total_.load() < target) queue_cv_.wait(lock);
    wake_writer_at_.store(UINT64_MAX);
  }
}

LedgerImpl::QueueCounts LedgerImpl::count_queue_locked() {
  QueueCounts counts;
  bool contiguous = true;
  for (auto& pending : queue_) {
    const size_t n = pending->items.size();
    while (pending->ready < n &&
           pending->checked[pending->ready].load(std::memory_order_acquire)) {
      ++pending->ready;
    }
    counts.untaken += n - pending->taken;
    if (contiguous) counts.ready += pending->ready - pending->taken;
    contiguous = contiguous && pending->ready == n;
  }
  return counts;
}

void LedgerImpl::writer_loop() {
  std::unique_lock lock(queue_mu_);
  std::vector<std::shared_ptr<Pending>> finished;
  for (;;) {
    std::vector<GroupRange> group = take_prepared(lock, kMaxGroupEntries, true);
    if (group.empty()) return;
    lock.unlock();
    Status committed = commit_group(group);
    lock.lock();
    for (auto& range : group) {
      if (range.end == range.pending->items.size()) {
        queue_.pop_front();  // the group's ranges are at the head of the queue, in order
        finish_locked(range.pending, finished);
      }
    }
    if (!committed) fail_queued_locked(committed, finished);
    if (!finished.empty()) {
      lock.unlock();
      deliver(finished);
      lock.lock();
    }
  }
}

Status LedgerImpl::stage_group(lmdb::Txn& txn, std::span<GroupRange> group,
                               std::optional<KeyPolicy>& changed, tree_store::TreeEdge& edge,
                               uint64_t& next, int& rc) {
  rc = 0;
  for (auto& range : group) {
    Pending& pending = *range.pending;
    // A retry (after the map grew) stages the group again from the start.
    std::fill(pending.outcomes.begin() + range.begin, pending.outcomes.begin() + range.end,
              AppendOutcome{});
    for (size_t i = range.begin; i < range.end; ++i) {
      Prepared& item = pending.items[i];
      AppendOutcome& outcome = pending.outcomes[i];
      outcome.id = item.checked.id;
      if (!item.status) {
        outcome.status = item.status;
        continue;
      }
      // Claim the event id, and the manifest digest it registers, each in one descent of its
      // tree: an existing record means the event (or the manifest) is already present. A
      // manifest digest is registered once: later events carrying it are answered with the
      // first registration's index and not appended.
      auto key = u64_be(next);
      ByteView existing;
      rc = txn.put_new(ids_, ByteView(item.checked.id), key, &existing);
      if (rc == 0 && item.manifest) {
        rc = txn.put_new(manifests_, ByteView(*item.manifest), key, &existing);
        if (rc == MDB_KEYEXIST) {
          int undo = txn.del(ids_, ByteView(item.checked.id));
          if (undo != 0) return lmdb::error(undo, "cannot undo an id record");
        }
      }
      if (rc == MDB_KEYEXIST) {
        outcome.index = get_u64_be(existing.data());
        rc = 0;
        continue;
      }
      if (rc != 0) return lmdb::error(rc, "cannot store the id of entry " + std::to_string(next));
      const KeyPolicy& policy = changed ? *changed : policy_;
      Status allowed = policy.check(next, item.checked.body, item.subject);
      if (allowed && item.checked.body.kind() == EventKind::kGenesis &&
          !is_log_key(std::get<Genesis>(item.checked.body.payload))) {
        allowed = rejected("the genesis names another log key than the one this ledger was "
                           "opened with (" +
                           (mirror_of_ ? mirror_of_->to_string() : log_key_->name()) + ")");
      }
      if (!allowed) {
        // Rejected: take back the claims, so that nothing of the entry stays.
        rc = txn.del(ids_, ByteView(item.checked.id));
        if (rc == 0 && item.manifest) rc = txn.del(manifests_, ByteView(*item.manifest));
        if (rc != 0) return lmdb::error(rc, "cannot undo the claims of a rejected entry");
        outcome.status = allowed;
        continue;
      }
      rc = txn.put(entries_, key, *item.bytes, MDB_APPEND);
      if (rc == 0 && is_key_event(item.checked.body.kind())) {
        rc = txn.put(key_events_, key, ByteView(), 0);
        if (!changed) changed.emplace(policy_);
        changed->apply(next, item.checked.body);
      }
      if (rc != 0) return lmdb::error(rc, "cannot store entry " + std::to_string(next));
      if (maintain_tree_) {
        EVL_RETURN_IF_ERROR(tree_store::append_record(txn, tree_, next, item.leaf, edge, rc));
      }
      if (hook_) {
        lmdb::TxnKeyValueStore state(txn, state_, true), sums(txn, sums_, true);
        AppendContext context{state, sums, changed ? *changed : policy_, scanner(txn),
                              manifest_finder(txn)};
        Status hooked = hook_->on_entry(context, next, item.checked.id, item.checked.body,
                                        item.hooked.get());
        if (state.map_full() || sums.map_full()) rc = MDB_MAP_FULL;
        if (!hooked) return hooked.with_context("entry " + std::to_string(next));
      }
      outcome.index = next++;
      outcome.added = true;
      if (++staged_since_trim_ % kTrimEveryEntries == 0) release_map_locked();
    }
  }
  return Status::ok();
}

Status LedgerImpl::grow_map() {
  std::unique_lock lock(resize_mu_);
  uint64_t bigger = map_size_ * 2;
  if (auto why = lmdb::cannot_map(bigger)) {
    return io_error("cannot grow the LMDB map of " + dir_ + "/db from " +
                    std::to_string(map_size_) + " to " + std::to_string(bigger) +
                    " bytes: this process may not map that much address space (" + *why +
                    "); nothing of this commit was stored and reads go on: raise the limit "
                    "(ulimit -v), then run the command again");
  }
  int rc = mdb_env_set_mapsize(env_, bigger);
  if (rc != 0) return lmdb::error(rc, "cannot grow the LMDB map");
  map_size_ = bigger;
  locate_map();
  return Status::ok();
}

void LedgerImpl::fail_queued_locked(const Status& cause,
                                    std::vector<std::shared_ptr<Pending>>& finished) {
  write_error_ = cause;
  const Status later(cause.code(),
                     "not stored because an earlier commit failed: " + cause.message());
  // The checks may still run on these batches' items: they write only the items, never the
  // outcomes, and each batch is answered once its checks ended too (append() waits for them;
  // an append_async() batch is delivered by the last of its checks and the writer).
  for (auto& pending : queue_) {
    for (size_t i = pending->taken; i < pending->items.size(); ++i) {
      pending->outcomes[i] = not_stored(later);
    }
    pending->taken = pending->items.size();
    finish_locked(pending, finished);
  }
  queue_.clear();
}

Status LedgerImpl::commit_group(std::vector<GroupRange>& group) {
  Status failure;
  bool retried = false;
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    std::optional<KeyPolicy> changed;
    std::optional<Checkpoint> signed_checkpoint;
    tree_store::TreeEdge edge = edge_;  // advanced by this group; kept only if it commits
    const uint64_t start = size();
    uint64_t next = start;
    int rc = 0;
    {
      std::shared_lock lock(resize_mu_);
      auto txn = lmdb::Txn::begin(env_, true);
      if (!txn) {
        failure = txn.error();
        break;
      }
      if (hook_) hook_->begin_transaction();
      failure = stage_group(*txn, group, changed, edge, next, rc);
      // Until the transaction holds kMinGroupEntries, the entries checked meanwhile join it.
      // (A retry stages the group it had.)
      size_t entries = 0;
      for (const auto& range : group) entries += range.end - range.begin;
      while (failure.is_ok() && !retried && entries < kMinGroupEntries) {
        std::vector<GroupRange> more;
        {
          std::unique_lock queue_lock(queue_mu_);
          if (entries >= kStepEntries) {
            // The writer waits on the checks, and no more are left to check than it holds: commit
            // now, while the checks of the rest go on (see kStepEntries).
            const auto [ready, untaken] = count_queue_locked();
            if (ready < kStepEntries && untaken <= entries) break;
          }
          more = take_prepared(queue_lock, kMaxGroupEntries - entries, false);
        }
        if (more.empty()) break;
        for (const auto& range : more) entries += range.end - range.begin;
        const size_t from = group.size();
        group.insert(group.end(), more.begin(), more.end());
        failure = stage_group(*txn, std::span(group).subspan(from), changed, edge, next, rc);
      }
      const KeyPolicy& policy = changed ? *changed : policy_;
      if (failure.is_ok() && next > start && maintain_tree_) {
        failure = store_checkpoint(*txn, policy.genesis()->origin, next, signed_checkpoint, rc);
      }
      if (failure.is_ok() && next > start && hook_) {
        // The statement about the state at this checkpoint (or, without a tree, the sums only).
        failure = store_statement(*txn, policy, next, maintain_tree_, StatementMode::kNew, rc);
      }
      if (failure.is_ok() && next == start) {
        // Nothing appended (every entry rejected or already present): the claims of rejected
        // entries were taken back, but committing would still rewrite the pages they touched.
        // Aborting leaves the file byte for byte as it was: bad input writes nothing.
        txn->abort();
      } else if (failure.is_ok()) {
        rc = txn->commit_code();
        if (rc != 0) failure = lmdb::error(rc, "cannot commit");
      }
    }
    if (failure.is_ok()) {
      if (changed) {
        std::lock_guard policy_lock(policy_mu_);
        policy_ = std::move(*changed);
      }
      if (signed_checkpoint) last_checkpoint_ = std::move(signed_checkpoint);
      edge_ = std::move(edge);
      size_.store(next, std::memory_order_release);
      const uint64_t tree_size = maintain_tree_ ? next : 0;
      for (auto& range : group) {
        for (size_t i = range.begin; i < range.end; ++i) {
          AppendOutcome& outcome = range.pending->outcomes[i];
          if (outcome.status) outcome.tree_size = tree_size;
        }
      }
      if (on_commit_) {
        on_commit_({next, static_cast<size_t>(next - start),
                    std::chrono::steady_clock::now() - started});
      }
      return Status::ok();
    }
    if (rc == EIO || rc == ENOSPC || rc == EDQUOT) {
      failure = lmdb::write_error(rc, "cannot commit the entries from index " +
                                          std::to_string(start), dir_ + "/db");
    }
    if (rc != MDB_MAP_FULL) break;
    failure = grow_map();  // the map is full: grow it and stage the group again
    if (!failure.is_ok()) break;
    retried = true;
  }
  // Nothing of this group was stored: every entry not already rejected fails with the cause.
  for (auto& range : group) {
    for (size_t i = range.begin; i < range.end; ++i) {
      AppendOutcome& outcome = range.pending->outcomes[i];
      const bool refused = outcome.status.code() == Code::kRejected ||
                           outcome.status.code() == Code::kDenied;
      if (range.pending->items[i].status.is_ok() && !refused) {
        outcome.status = failure.with_context("entry not stored");
        outcome.added = false;
        outcome.commit_failed = true;
      }
    }
  }
  return failure;
}

Status LedgerImpl::rebuild_state() {
  if (!hook_) return usage_error("this ledger was opened without projections to rebuild");
  if (read_only_) return usage_error("ledger " + dir_ + " is open read-only");
  return reseal_state(true);
}

int LedgerImpl::empty_db(lmdb::Txn& txn, MDB_dbi dbi) {
  // Without overflow pages (the projections have none unless a run view outgrows half a page),
  // mdb_drop frees the leaves from their branch pages alone, reading none of them: a tenth of
  // a second for the projections of 10^5 catalog events, a second at 10^6.
  MDB_stat stat;
  int rc = mdb_stat(txn.get(), dbi, &stat);
  if (rc != 0) return rc;
  if (stat.ms_overflow_pages == 0) return mdb_drop(txn.get(), dbi, 0);
  // Otherwise record by record, dropping the map's pages as it goes: to free an overflow
  // record mdb_drop reads every leaf, and the kernel maps 15 neighbours with each page read,
  // so dropping the projections of 10^6 catalog events left 2 GB of the map resident.
  constexpr uint64_t kReleaseEvery = 4096;
  MDB_cursor* cursor = nullptr;
  rc = mdb_cursor_open(txn.get(), dbi, &cursor);
  if (rc != 0) return rc;
  MDB_val k, v;
  for (uint64_t n = 1; (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)) == 0; ++n) {
    rc = mdb_cursor_del(cursor, 0);
    if (rc != 0) break;
    if (n % kReleaseEvery == 0) release_map_locked();
  }
  mdb_cursor_close(cursor);
  release_map_locked();
  return rc == MDB_NOTFOUND ? 0 : rc;
}

Status LedgerImpl::reseal_state(bool refold) {
  for (;;) {
    int rc = 0;
    Status status;
    {
      std::shared_lock lock(resize_mu_);
      auto txn = lmdb::Txn::begin(env_, true);
      if (!txn) return txn.error();
      // The log as this transaction sees it (the writer thread may publish its size late).
      auto size = log_size(*txn);
      if (!size) return size.error();
      KeyPolicy keys = policy();  // the hook derives key state from the entries it scans
      hook_->begin_transaction();
      if (refold) {
        for (MDB_dbi dbi : {state_, sums_}) {
          rc = empty_db(*txn, dbi);
          if (rc != 0) return lmdb::error(rc, "cannot empty the projections");
        }
        lmdb::TxnKeyValueStore state(*txn, state_, true), sums(*txn, sums_, true);
        state.release_pages_with([this] { release_map_locked(); });
        AppendContext context{state, sums, keys, scanner(*txn), manifest_finder(*txn)};
        status = hook_->rebuild(context, *size);
        if (state.map_full() || sums.map_full()) rc = MDB_MAP_FULL;
      }
      if (status) {
        status = store_statement(*txn, keys, *size, false, StatementMode::kSameOrAdd, rc);
      }
      if (status) {
        rc = txn->commit_code();
        if (rc == 0) return Status::ok();
        status = lmdb::error(rc, "cannot commit the rebuilt projections");
      }
    }
    if (rc != MDB_MAP_FULL) return status;
    EVL_RETURN_IF_ERROR(grow_map());
  }
}

}  // namespace ledger_internal

Result<std::unique_ptr<Ledger>> Ledger::open(const OpenOptions& options) {
  auto ledger = std::make_unique<ledger_internal::LedgerImpl>(options);
  EVL_RETURN_IF_ERROR(ledger->open(options.create));
  return std::unique_ptr<Ledger>(std::move(ledger));
}

Result<uint64_t> find_entry(const Ledger& ledger, std::string_view text) {
  if (text.substr(0, 7) == "sha256:") {
    auto id = parse_digest_text(text);
    if (!id) return usage_error(id.error().message());
    return ledger.find(*id);
  }
  auto index = parse_u64(text);
  if (!index) {
    return usage_error("'" + std::string(text) +
                       "' is neither an event id (sha256:<hex>) nor an index");
  }
  return *index;
}

}  // namespace evl
