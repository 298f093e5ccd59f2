#include "ledger/witness_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "ledger/internal/lmdb.h"

namespace evl {

namespace {

constexpr std::string_view kFormatKey = "format";
constexpr std::string_view kWitnessFormat = "evledger-witness-v1";
constexpr uint8_t kRecordVersion = 1;
constexpr size_t kRecordHeader = 1 + 8;  // version, u64be time
// Address space only: the file grows with what is stored (a record is at most a note of a
// 64 KiB request), so this is room for about a million logs.
constexpr size_t kMapSize = size_t{64} << 30;

UpdateOutcome refused(UpdateVerdict verdict, std::string message) {
  UpdateOutcome o;
  o.verdict = verdict;
  o.status = rejected(std::move(message));
  return o;
}

std::string checkpoint_name(const Checkpoint& c) {
  return "checkpoint " + c.origin.substr(0, 200) + " at size " + std::to_string(c.size);
}

uint64_t system_seconds() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// The stored bytes of a cosigned checkpoint.
Result<std::string> encode_record(const CheckpointUpdate& update,
                                  const NoteSignature& cosignature, uint64_t time) {
  Note note{checkpoint_body(update.checkpoint), update.log_signatures};
  note.signatures.push_back(cosignature);
  auto text = format_note(note);
  if (!text) return text.error().with_context("cannot store the cosigned checkpoint");
  std::string record(kRecordHeader, '\0');
  record[0] = static_cast<char>(kRecordVersion);
  put_u64_be(time, reinterpret_cast<uint8_t*>(record.data() + 1));
  return record + *text;
}

Result<WitnessedCheckpoint> decode_record(ByteView bytes, const Digest& origin_hash) {
  const std::string what = "witness state record " + hex_encode(origin_hash);
  if (bytes.size() < kRecordHeader || bytes[0] != kRecordVersion) {
    return corrupt(what + " has no version-1 header: the state is damaged or of another "
                          "evledger");
  }
  WitnessedCheckpoint out;
  out.time = get_u64_be(bytes.data() + 1);
  out.note = std::string(as_chars(bytes.subspan(kRecordHeader)));
  auto note = parse_note(out.note);
  auto body = note ? parse_checkpoint_body(note->text) : Result<Checkpoint>(note.error());
  if (!body) return corrupt(what + ": " + body.error().message());
  if (sha256(as_bytes(body->origin)) != origin_hash) {
    return corrupt(what + " holds a checkpoint of origin '" + body->origin.substr(0, 200) +
                   "', whose hash is another");
  }
  out.checkpoint = std::move(*body);
  return out;
}

class WitnessStateImpl final : public WitnessState {
 public:
  explicit WitnessStateImpl(WitnessStateOptions options) : options_(std::move(options)) {
    if (!options_.clock) options_.clock = system_seconds;
  }

  ~WitnessStateImpl() override {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
    if (env_ != nullptr) mdb_env_close(env_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  Status open();

  void submit(CheckpointUpdate update, Done done) override {
    bool closing = false;
    {
      std::lock_guard lock(mu_);
      if (!closed_ && jobs_.size() < options_.max_queued) {
        jobs_.push_back({std::move(update), std::move(done)});
        cv_.notify_one();
        return;
      }
      closing = closed_;
    }
    UpdateOutcome busy;
    busy.verdict = UpdateVerdict::kBusy;
    busy.status = io_error(closing ? "the witness is shutting down; send the checkpoint again "
                                     "in a moment"
                                   : "the witness has " + std::to_string(options_.max_queued) +
                                         " checkpoints waiting to be stored; retry shortly");
    done(std::move(busy));
  }

  Result<std::optional<WitnessedCheckpoint>> latest(const std::string& origin) const override {
    return latest_by_hash(sha256(as_bytes(origin)));
  }

  Result<std::optional<WitnessedCheckpoint>> latest_by_hash(
      const Digest& origin_hash) const override {
    auto txn = lmdb::Txn::begin(env_, false);
    if (!txn) return txn.error();
    return read(*txn, origin_hash);
  }

  WitnessStateStats stats() const override {
    return {commits_.load(std::memory_order_relaxed), stored_.load(std::memory_order_relaxed)};
  }

 private:
  struct Job {
    CheckpointUpdate update;
    Done done;
  };

  Result<std::optional<WitnessedCheckpoint>> read(const lmdb::Txn& txn,
                                                  const Digest& origin_hash) const {
    auto bytes = txn.get(latest_, origin_hash);
    if (!bytes) {
      if (bytes.error().code() == Code::kNotFound) return std::optional<WitnessedCheckpoint>();
      return bytes.error();
    }
    auto record = decode_record(*bytes, origin_hash);
    if (!record) return record.error();
    return std::optional<WitnessedCheckpoint>(std::move(*record));
  }

  void work();
  std::vector<UpdateOutcome> apply(std::vector<Job>& jobs);
  // Decides, cosigns and stages one update in `txn`; false when `txn` failed and must go.
  bool stage(lmdb::Txn& txn, const CheckpointUpdate& update, UpdateOutcome& outcome);

  WitnessStateOptions options_;
  MDB_env* env_ = nullptr;
  MDB_dbi meta_ = 0, latest_ = 0;
  int lock_fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool closed_ = false;
  std::thread writer_;
  std::atomic<uint64_t> commits_{0}, stored_{0};
};

Status WitnessStateImpl::open() {
  namespace fs = std::filesystem;
  const fs::path db = fs::path(options_.dir) / "db";
  std::error_code ec;
  fs::create_directories(db, ec);
  if (ec) return io_error("cannot create the witness state directory " + db.string() + ": " +
                          ec.message());
  const std::string lock_path = (db / "writer.lock").string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return io_error("cannot open " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return io_error("witness state " + options_.dir + " is in use by another witness process; "
                    "stop it or give another --dir");
  }
  int rc = mdb_env_create(&env_);
  if (rc != 0) return lmdb::error(rc, "cannot create an LMDB environment");
  mdb_env_set_maxdbs(env_, 4);
  mdb_env_set_mapsize(env_, kMapSize);
  rc = mdb_env_open(env_, db.c_str(), MDB_NOTLS, 0644);
  if (rc != 0) return lmdb::error(rc, "cannot open the witness state in " + db.string());
  auto txn = lmdb::Txn::begin(env_, true);
  if (!txn) return txn.error();
  for (auto [name, dbi] : {std::pair{"meta", &meta_}, std::pair{"latest", &latest_}}) {
    rc = mdb_dbi_open(txn->get(), name, MDB_CREATE, dbi);
    if (rc != 0) return lmdb::error(rc, std::string("cannot open database ") + name);
  }
  auto format = txn->get(meta_, as_bytes(kFormatKey));
  if (format && as_chars(*format) != kWitnessFormat) {
    return corrupt("witness state " + options_.dir + " has format '" +
                   std::string(as_chars(*format)).substr(0, 100) + "', not " +
                   std::string(kWitnessFormat) + "; give the --dir of an evledger witness");
  }
  if (!format) {
    if (format.error().code() != Code::kNotFound) return format.error();
    rc = txn->put(meta_, as_bytes(kFormatKey), as_bytes(kWitnessFormat), 0);
    if (rc != 0) return lmdb::error(rc, "cannot write the witness state's format");
  }
  EVL_RETURN_IF_ERROR(txn->commit());
  writer_ = std::thread([this] { work(); });
  return Status::ok();
}

void WitnessStateImpl::work() {
  for (;;) {
    std::vector<Job> jobs;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closed_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // closed, and every update answered
      const size_t n = std::min(jobs_.size(), std::max<size_t>(1, options_.max_batch));
      for (size_t i = 0; i < n; ++i) {
        jobs.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
    }
    std::vector<UpdateOutcome> outcomes = apply(jobs);
    for (size_t i = 0; i < jobs.size(); ++i) jobs[i].done(std::move(outcomes[i]));
  }
}

std::vector<UpdateOutcome> WitnessStateImpl::apply(std::vector<Job>& jobs) {
  std::vector<UpdateOutcome> outcomes(jobs.size());
  // A refusal may rest on what an earlier update of the batch staged (a 409 naming its size),
  // so when the transaction fails, every update of the batch fails with it.
  auto fail_all = [&](const Status& why) {
    for (UpdateOutcome& o : outcomes) {
      o = UpdateOutcome{};
      o.status = why;
    }
    return outcomes;
  };
  auto txn = lmdb::Txn::begin(env_, true);
  if (!txn) return fail_all(txn.error().with_context("witness state"));
  size_t stored = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!stage(*txn, jobs[i].update, outcomes[i])) {
      return fail_all(outcomes[i].status.with_context("witness state"));
    }
    if (outcomes[i].verdict == UpdateVerdict::kCosigned) ++stored;
  }
  if (stored == 0) return outcomes;  // nothing changed: the transaction aborts
  // The one durable commit of the batch; nothing is answered as cosigned before it.
  if (Status s = txn->commit(); !s) return fail_all(s.with_context("witness state"));
  commits_.fetch_add(1, std::memory_order_relaxed);
  stored_.fetch_add(stored, std::memory_order_relaxed);
  return outcomes;
}

bool WitnessStateImpl::stage(lmdb::Txn& txn, const CheckpointUpdate& update,
                             UpdateOutcome& outcome) {
  const Digest key = sha256(as_bytes(update.checkpoint.origin));
  auto latest = read(txn, key);
  if (!latest) {
    // A damaged record refuses its own origin only; an LMDB failure ends the transaction.
    outcome = UpdateOutcome{};
    outcome.status = latest.error();
    return latest.error().code() == Code::kCorrupt;
  }
  std::optional<Checkpoint> latest_checkpoint;
  if (*latest) latest_checkpoint = (*latest)->checkpoint;
  outcome = decide_update(latest_checkpoint, update);
  if (outcome.verdict == UpdateVerdict::kInconsistent && latest_checkpoint &&
      latest_checkpoint->size == update.checkpoint.size &&
      latest_checkpoint->root != update.checkpoint.root) {
    outcome.contradicted = (*latest)->note;
  }
  if (outcome.verdict != UpdateVerdict::kCosigned) return true;
  const uint64_t time = next_cosignature_time(
      options_.clock(), *latest ? std::optional<uint64_t>((*latest)->time) : std::nullopt);
  outcome.cosignature = cosign_checkpoint(update.checkpoint, *options_.cosigner, time);
  outcome.time = time;
  auto record = encode_record(update, outcome.cosignature, time);
  if (!record) {
    outcome = UpdateOutcome{};
    outcome.status = record.error();
    return true;
  }
  const int rc = txn.put(latest_, key, as_bytes(*record), 0);
  if (rc != 0) {
    outcome = UpdateOutcome{};
    outcome.status = lmdb::error(rc, "cannot store the cosigned checkpoint");
    return false;
  }
  return true;
}

}  // namespace

UpdateOutcome decide_update(const std::optional<Checkpoint>& latest,
                            const CheckpointUpdate& update) {
  const Checkpoint& next = update.checkpoint;
  const std::string what = checkpoint_name(next);
  if (update.old_size > next.size) {
    return refused(UpdateVerdict::kOldTooLarge,
                   what + ": old size " + std::to_string(update.old_size) +
                       " is beyond the checkpoint's size; old is the size this witness "
                       "cosigned last");
  }
  const uint64_t latest_size = latest ? latest->size : 0;
  if (update.old_size != latest_size) {
    UpdateOutcome o = refused(UpdateVerdict::kConflict,
                              what + ": old size " + std::to_string(update.old_size) +
                                  " is not the size this witness cosigned last, " +
                                  std::to_string(latest_size) + "; send a proof from there");
    o.latest_size = latest_size;
    return o;
  }
  if (next.size == 0 && next.root != empty_tree_hash()) {
    return refused(UpdateVerdict::kInconsistent,
                   what + ": the root of an empty tree is SHA-256 of nothing, not this hash");
  }
  if (update.old_size == 0) {
    if (!update.proof.empty()) {
      return refused(UpdateVerdict::kInconsistent,
                     what + ": a proof from size 0 must be empty (the empty tree is consistent "
                            "with every tree), not " + std::to_string(update.proof.size()) +
                            " hashes");
    }
  } else if (next.size == latest_size && next.root != latest->root) {
    return refused(UpdateVerdict::kInconsistent,
                   what + ": this witness cosigned another root at this size; the log has "
                          "signed two trees of one size (a fork)");
  } else if (Status s = verify_consistency(update.old_size, next.size, update.proof,
                                           latest->root, next.root);
             !s) {
    return refused(UpdateVerdict::kInconsistent,
                   what + ": the consistency proof from the cosigned size " +
                       std::to_string(update.old_size) + " does not verify: " + s.message());
  }
  UpdateOutcome ok;
  ok.verdict = UpdateVerdict::kCosigned;
  ok.latest_size = next.size;
  return ok;
}

uint64_t next_cosignature_time(uint64_t now, std::optional<uint64_t> previous) {
  uint64_t t = std::max<uint64_t>({now, previous.value_or(0), 1});
  return std::min(t, kMaxCosignatureTime);
}

UpdateOutcome WitnessState::update(CheckpointUpdate update) {
  std::promise<UpdateOutcome> answer;
  auto future = answer.get_future();
  submit(std::move(update), [&answer](UpdateOutcome o) { answer.set_value(std::move(o)); });
  return future.get();
}

Result<std::unique_ptr<WitnessState>> WitnessState::open(WitnessStateOptions options) {
  EVL_ASSERT(options.cosigner != nullptr);
  auto state = std::make_unique<WitnessStateImpl>(std::move(options));
  EVL_RETURN_IF_ERROR(state->open());
  return std::unique_ptr<WitnessState>(std::move(state));
}

}  // namespace evl
