#include "ledger/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

#include "events/observation.h"
#include "ledger/internal/lmdb.h"
#include "ledger/thread_pool.h"

namespace evl {

namespace {

// Entries verified together and handed to the writer as one unit. The writer merges units
// that are waiting into one transaction, up to kMaxGroupEntries.
constexpr size_t kChunkEntries = 1024;
constexpr size_t kMaxGroupEntries = 8192;

constexpr std::string_view kFormatKey = "format";

// After this many bytes are appended, the writer drops the pages of LMDB's read-only map from
// this process (MADV_DONTNEED on a shared file mapping only unmaps them: they stay in the page
// cache and fault back in when read). Without it the process's resident size grows with the
// file, because appending touches every page once.
constexpr uint64_t kTrimMapEvery = 32ull << 20;

struct Prepared {
  Status status;        // stateless checks
  CheckedEntry checked;
  std::string subject;  // scope subject for policy
  const Bytes* bytes = nullptr;
};

// One caller's chunk on its way through the writer.
struct Pending {
  std::vector<Prepared> items;
  std::vector<AppendOutcome> outcomes;
  std::promise<void> done;
};

bool is_key_event(EventKind kind) {
  return kind == EventKind::kGenesis || kind == EventKind::kKeyGrant ||
         kind == EventKind::kKeyRevoke;
}

class LedgerImpl final : public Ledger {
 public:
  explicit LedgerImpl(const OpenOptions& options)
      : dir_(options.dir), read_only_(options.read_only), map_size_(options.map_size),
        pool_(options.verify_threads) {}

  ~LedgerImpl() override {
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

  std::vector<AppendOutcome> append(std::span<const Bytes> batch) override;
  uint64_t size() const override { return size_.load(std::memory_order_acquire); }
  const std::string& dir() const override { return dir_; }
  Result<Bytes> entry(uint64_t index) const override;
  Result<uint64_t> find(const Digest& id) const override;
  Status scan(uint64_t from, uint64_t to, const EntryVisitor& visit) const override;
  Result<uint64_t> id_count() const override;
  KeyPolicy policy() const override {
    std::lock_guard lock(policy_mu_);
    return policy_;
  }

 private:
  Status open_env(bool create);
  Status check_format(bool create);
  Status load_state();
  void prepare(const Bytes& bytes, Prepared& out) const;
  void writer_loop();
  void commit_group(std::vector<std::shared_ptr<Pending>>& group);
  // Stages the group in `txn`; returns MDB_MAP_FULL or another LMDB code, 0 on success.
  int stage_group(lmdb::Txn& txn, std::vector<std::shared_ptr<Pending>>& group,
                  std::optional<KeyPolicy>& changed, uint64_t& next);
  Status grow_map();
  void trim_map(uint64_t appended_bytes);

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
  MDB_dbi entries_ = 0, ids_ = 0, key_events_ = 0, meta_ = 0;
  int lock_fd_ = -1;
  std::atomic<uint64_t> size_{0};
  uint64_t bytes_since_trim_ = 0;  // writer thread only

  mutable std::shared_mutex resize_mu_;  // read transactions shared; map resizing exclusive
  mutable std::mutex policy_mu_;
  KeyPolicy policy_;  // written by the writer thread only, after a commit

  ThreadPool pool_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Pending>> queue_;
  bool stop_ = false;
  std::thread writer_;
};

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
  if (!read_only_) {
    std::string lock_path = (db_dir / "writer.lock").string();
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) return io_error("cannot open " + lock_path + ": " + std::strerror(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      return io_error("ledger " + dir_ + " is open for writing by another process; wait for "
                      "it to finish or open it read-only");
    }
  }
  EVL_RETURN_IF_ERROR(open_env(create));
  EVL_RETURN_IF_ERROR(check_format(create));
  EVL_RETURN_IF_ERROR(load_state());
  if (!read_only_) writer_ = std::thread([this] { writer_loop(); });
  return Status::ok();
}

Status LedgerImpl::open_env(bool create) {
  int rc = mdb_env_create(&env_);
  if (rc != 0) return lmdb::error(rc, "cannot create an LMDB environment");
  mdb_env_set_maxdbs(env_, 16);
  mdb_env_set_mapsize(env_, map_size_);
  // MDB_NOTLS: read transactions are not tied to threads. Never MDB_WRITEMAP on the log.
  unsigned flags = MDB_NOTLS | (read_only_ ? MDB_RDONLY : 0);
  std::string path = (std::filesystem::path(dir_) / "db").string();
  rc = mdb_env_open(env_, path.c_str(), flags, 0644);
  if (rc != 0) return lmdb::error(rc, "cannot open the ledger database in " + path);
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  map_size_ = info.me_mapsize;

  auto txn = lmdb::Txn::begin(env_, !read_only_);
  if (!txn) return txn.error();
  unsigned dbi_flags = read_only_ ? 0 : MDB_CREATE;
  struct Named {
    const char* name;
    MDB_dbi* dbi;
  } named[] = {{"entries", &entries_}, {"ids", &ids_}, {"key_events", &key_events_},
               {"meta", &meta_}};
  for (auto& n : named) {
    rc = mdb_dbi_open(txn->get(), n.name, dbi_flags, n.dbi);
    if (rc == MDB_NOTFOUND) {
      return corrupt("ledger " + dir_ + " has no '" + n.name +
                     "' database: it is not an evledger ledger or it is damaged");
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
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto cursor = lmdb::Cursor::open(txn, entries_);
    if (!cursor) return cursor.error();
    MDB_val k, v;
    int rc = (*cursor)->get(k, v, MDB_LAST);
    if (rc == 0) {
      if (k.mv_size != 8) return corrupt("entries database has a key that is not 8 bytes");
      size_.store(get_u64_be(static_cast<const uint8_t*>(k.mv_data)) + 1);
    } else if (rc != MDB_NOTFOUND) {
      return lmdb::error(rc, "cannot read the last entry");
    }
    // Key state: replay the key events, which the key_events database indexes.
    auto keys = lmdb::Cursor::open(txn, key_events_);
    if (!keys) return keys.error();
    for (rc = (*keys)->get(k, v, MDB_FIRST); rc == 0; rc = (*keys)->get(k, v, MDB_NEXT)) {
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
  });
}

void LedgerImpl::prepare(const Bytes& bytes, Prepared& out) const {
  out.bytes = &bytes;
  auto checked = check_entry(bytes);
  if (!checked) {
    out.status = checked.error();
    return;
  }
  auto subject = scope_subject(checked->body);
  if (!subject) {
    out.status = subject.error();
    out.checked.id = checked->id;
    return;
  }
  out.checked = std::move(checked.value());
  out.subject = std::move(subject.value());
}

std::vector<AppendOutcome> LedgerImpl::append(std::span<const Bytes> batch) {
  std::vector<AppendOutcome> outcomes;
  outcomes.reserve(batch.size());
  if (read_only_) {
    for (size_t i = 0; i < batch.size(); ++i) {
      outcomes.push_back({usage_error("ledger " + dir_ + " is open read-only"), 0, false, {}});
    }
    return outcomes;
  }
  // Verify chunk k+1 while the writer commits chunk k.
  std::vector<std::shared_ptr<Pending>> chunks;
  std::vector<std::future<void>> waits;
  for (size_t offset = 0; offset < batch.size(); offset += kChunkEntries) {
    size_t n = std::min(kChunkEntries, batch.size() - offset);
    auto pending = std::make_shared<Pending>();
    pending->items.resize(n);
    pool_.parallel_for(n, [&](size_t i) { prepare(batch[offset + i], pending->items[i]); });
    waits.push_back(pending->done.get_future());
    {
      std::lock_guard lock(queue_mu_);
      queue_.push_back(pending);
    }
    queue_cv_.notify_one();
    chunks.push_back(std::move(pending));
  }
  for (size_t c = 0; c < chunks.size(); ++c) {
    waits[c].wait();
    for (auto& o : chunks[c]->outcomes) outcomes.push_back(std::move(o));
  }
  return outcomes;
}

void LedgerImpl::writer_loop() {
  for (;;) {
    std::vector<std::shared_ptr<Pending>> group;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      size_t entries = 0;
      while (!queue_.empty() && (group.empty() || entries + queue_.front()->items.size() <=
                                                      kMaxGroupEntries)) {
        entries += queue_.front()->items.size();
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    commit_group(group);
    for (auto& pending : group) pending->done.set_value();
  }
}

int LedgerImpl::stage_group(lmdb::Txn& txn, std::vector<std::shared_ptr<Pending>>& group,
                            std::optional<KeyPolicy>& changed, uint64_t& next) {
  for (auto& pending : group) {
    pending->outcomes.clear();
    for (auto& item : pending->items) {
      AppendOutcome outcome;
      outcome.id = item.checked.id;
      if (!item.status) {
        outcome.status = item.status;
        pending->outcomes.push_back(std::move(outcome));
        continue;
      }
      auto existing = txn.get(ids_, ByteView(item.checked.id));
      if (existing) {
        outcome.index = get_u64_be(existing->data());
        pending->outcomes.push_back(std::move(outcome));
        continue;
      }
      const KeyPolicy& policy = changed ? *changed : policy_;
      Status allowed = policy.check(next, item.checked.body, item.subject);
      if (!allowed) {
        outcome.status = allowed;
        pending->outcomes.push_back(std::move(outcome));
        continue;
      }
      auto key = u64_be(next);
      int rc = txn.put(entries_, key, *item.bytes, MDB_APPEND);
      if (rc == 0) rc = txn.put(ids_, ByteView(item.checked.id), key, MDB_NOOVERWRITE);
      if (rc == 0 && is_key_event(item.checked.body.kind())) {
        rc = txn.put(key_events_, key, ByteView(), 0);
        if (!changed) changed.emplace(policy_);
        changed->apply(next, item.checked.body);
      }
      if (rc != 0) return rc;
      outcome.index = next++;
      outcome.added = true;
      pending->outcomes.push_back(std::move(outcome));
    }
  }
  return 0;
}

Status LedgerImpl::grow_map() {
  std::unique_lock lock(resize_mu_);
  uint64_t bigger = map_size_ * 2;
  int rc = mdb_env_set_mapsize(env_, bigger);
  if (rc != 0) return lmdb::error(rc, "cannot grow the LMDB map");
  map_size_ = bigger;
  return Status::ok();
}

uint64_t appended_bytes(const std::vector<std::shared_ptr<Pending>>& group) {
  uint64_t bytes = 0;
  for (const auto& pending : group) {
    for (size_t i = 0; i < pending->outcomes.size(); ++i) {
      if (pending->outcomes[i].added) bytes += pending->items[i].bytes->size();
    }
  }
  return bytes;
}

void LedgerImpl::trim_map(uint64_t appended) {
  bytes_since_trim_ += appended;
  if (bytes_since_trim_ < kTrimMapEvery) return;
  bytes_since_trim_ = 0;
  std::shared_lock lock(resize_mu_);  // the map must not move while we advise on it
  // LMDB does not publish its map's address (me_mapaddr is only set for MDB_FIXEDMAP): find
  // the mapping of data.mdb in /proc/self/maps.
  std::string data_file = std::filesystem::canonical(std::filesystem::path(dir_) / "db" /
                                                     "data.mdb").string();
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < data_file.size() ||
        line.compare(line.size() - data_file.size(), data_file.size(), data_file) != 0) {
      continue;
    }
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2 && end > begin) {
      ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
    }
  }
}

void LedgerImpl::commit_group(std::vector<std::shared_ptr<Pending>>& group) {
  Status failure;
  for (;;) {
    std::optional<KeyPolicy> changed;
    uint64_t next = size();
    int rc;
    {
      std::shared_lock lock(resize_mu_);
      auto txn = lmdb::Txn::begin(env_, true);
      if (!txn) {
        failure = txn.error();
        break;
      }
      rc = stage_group(*txn, group, changed, next);
      if (rc == 0) rc = txn->commit_code();
    }
    if (rc == 0) {
      if (changed) {
        std::lock_guard policy_lock(policy_mu_);
        policy_ = std::move(*changed);
      }
      size_.store(next, std::memory_order_release);
      trim_map(appended_bytes(group));
      return;
    }
    if (rc != MDB_MAP_FULL) {
      failure = lmdb::error(rc, "cannot store entries");
      break;
    }
    failure = grow_map();  // the map is full: grow it and stage the group again
    if (!failure.is_ok()) break;
  }
  // Nothing of this group was stored: every entry not already rejected fails with the cause.
  for (auto& pending : group) {
    pending->outcomes.resize(pending->items.size());
    for (size_t i = 0; i < pending->items.size(); ++i) {
      AppendOutcome& outcome = pending->outcomes[i];
      if (pending->items[i].status.is_ok() &&
          (outcome.status.is_ok() || outcome.status.code() != Code::kRejected)) {
        outcome.status = failure.with_context("entry not stored");
        outcome.added = false;
      }
    }
  }
}

Result<Bytes> LedgerImpl::entry(uint64_t index) const {
  return with_read([&](lmdb::Txn& txn) -> Result<Bytes> {
    auto v = txn.get(entries_, u64_be(index));
    if (!v) {
      if (v.error().code() == Code::kNotFound) {
        return not_found("no entry at index " + std::to_string(index) + " (the log has " +
                         std::to_string(size()) + " entries)");
      }
      return v.error();
    }
    return Bytes(v->begin(), v->end());
  });
}

Result<uint64_t> LedgerImpl::find(const Digest& id) const {
  return with_read([&](lmdb::Txn& txn) -> Result<uint64_t> {
    auto v = txn.get(ids_, ByteView(id));
    if (!v) {
      if (v.error().code() == Code::kNotFound) {
        return not_found("no event " + digest_text(id) + " in this ledger");
      }
      return v.error();
    }
    if (v->size() != 8) return corrupt("id record of " + digest_text(id) + " is not 8 bytes");
    return get_u64_be(v->data());
  });
}

Status LedgerImpl::scan(uint64_t from, uint64_t to, const EntryVisitor& visit) const {
  return with_read([&](lmdb::Txn& txn) -> Status {
    auto cursor = lmdb::Cursor::open(txn, entries_);
    if (!cursor) return cursor.error();
    auto start = u64_be(from);
    MDB_val k = lmdb::val(ByteView(start)), v;
    uint64_t expected = from;
    for (int rc = (*cursor)->get(k, v, MDB_SET_RANGE); expected < to;
         rc = (*cursor)->get(k, v, MDB_NEXT)) {
      if (rc == MDB_NOTFOUND) {
        return corrupt("entry " + std::to_string(expected) + " is missing: the log ends early");
      }
      if (rc != 0) return lmdb::error(rc, "cannot read entry " + std::to_string(expected));
      uint64_t index = k.mv_size == 8 ? get_u64_be(static_cast<const uint8_t*>(k.mv_data)) : ~0ull;
      if (index != expected) {
        return corrupt("entry " + std::to_string(expected) + " is missing: found key " +
                       hex_encode(lmdb::view(k)) + " in its place");
      }
      EVL_RETURN_IF_ERROR(visit(index, lmdb::view(v)));
      ++expected;
    }
    return Status::ok();
  });
}

Result<uint64_t> LedgerImpl::id_count() const {
  return with_read([&](lmdb::Txn& txn) -> Result<uint64_t> {
    MDB_stat st;
    int rc = mdb_stat(txn.get(), ids_, &st);
    if (rc != 0) return lmdb::error(rc, "cannot read the ids database");
    return static_cast<uint64_t>(st.ms_entries);
  });
}

}  // namespace

Result<std::unique_ptr<Ledger>> Ledger::open(const OpenOptions& options) {
  auto ledger = std::make_unique<LedgerImpl>(options);
  EVL_RETURN_IF_ERROR(ledger->open(options.create));
  return std::unique_ptr<Ledger>(std::move(ledger));
}

}  // namespace evl
