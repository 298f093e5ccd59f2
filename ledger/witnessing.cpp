#include "ledger/witnessing.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "keys/note.h"
#include "ledger/http_client.h"
#include "ledger/internal/witness_submission.h"
#include "ledger/proofs.h"

namespace evl {
namespace {

using Clock = std::chrono::steady_clock;

// Commits remembered for the publication delay while witnesses are down; beyond it the
// oldest (whose delays are the longest) are kept and newer commits go unmeasured.
constexpr size_t kMaxTimedCommits = size_t{1} << 16;

std::string errno_text() { return std::strerror(errno); }

// One round: the checkpoint every witness is sent, and the cosignature lines collected.
struct Round {
  Checkpoint checkpoint;
  Note note;                                        // the log's signed note, parsed
  std::string text;                                 // the same, verbatim
  std::vector<std::optional<NoteSignature>> lines;  // per witness, in the policy's order
};

struct Slot {
  PolicyWitness witness;
  WitnessProgress progress;
  std::unique_ptr<HttpClient> client;
  unsigned failures = 0;
  Clock::time_point retry_at{};
  uint64_t ahead_at = UINT64_MAX;  // the round size at which it was found ahead of the log
};

struct Waiter {
  uint64_t size = 0;
  Clock::time_point deadline;
  std::chrono::milliseconds timeout{};
  Witnessing::Waited done;
};

class WitnessingImpl final : public Witnessing {
 public:
  WitnessingImpl(const Ledger& ledger, WitnessingOptions options, VerifierKey log_key)
      : ledger_(ledger), options_(std::move(options)), log_key_(std::move(log_key)) {}

  ~WitnessingImpl() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    coord_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void add(Slot slot) { slots_.push_back(std::move(slot)); }
  Status load_stored();
  // Starts the threads, the log being at `size` entries.
  void run(uint64_t size) {
    newest_ = std::max(newest_, size);
    threads_.emplace_back([this] { coordinate(); });
    for (size_t w = 0; w < slots_.size(); ++w) threads_.emplace_back([this, w] { work(w); });
  }

  void committed(const CommitInfo& commit) override {
    {
      std::lock_guard lock(mu_);
      if (commit.size <= newest_) return;
      newest_ = commit.size;
      if (timed_commits_.size() < kMaxTimedCommits) {
        timed_commits_.emplace_back(commit.size, Clock::now());
      }
    }
    coord_cv_.notify_one();
  }

  std::shared_ptr<const Publication> published() const override {
    std::lock_guard lock(mu_);
    return published_;
  }

  void when_published(uint64_t size, std::chrono::milliseconds timeout, Waited done) override {
    std::unique_lock lock(mu_);
    if (published_ && published_->checkpoint.size >= size) {
      auto p = published_;
      lock.unlock();
      done(p);
      return;
    }
    if (stop_) {
      lock.unlock();
      done(io_error("the server is stopping; the witnessed checkpoint will be at /checkpoint"));
      return;
    }
    waiters_.push_back({size, Clock::now() + timeout, timeout, std::move(done)});
    lock.unlock();
    coord_cv_.notify_one();
  }

  std::vector<WitnessProgress> progress() const override {
    std::lock_guard lock(mu_);
    std::vector<WitnessProgress> out;
    for (const Slot& s : slots_) out.push_back(s.progress);
    return out;
  }

  const TlogPolicy& policy() const override { return options_.policy; }

 private:
  void work(size_t w);
  void record(size_t w, uint64_t size, uint64_t old, const Attempt& attempt);
  void coordinate();
  std::optional<Publication> publication_due() const;
  void published_now(std::shared_ptr<const Publication> publication,
                     std::unique_lock<std::mutex>& lock);
  bool start_round(std::unique_lock<std::mutex>& lock);
  void expire_waiters(std::unique_lock<std::mutex>& lock);
  std::string waiting_for() const;
  // Removes the waiters `pick` chooses and returns them (under the lock).
  template <class Pick>
  std::vector<Waiter> take_waiters(Pick pick) {
    auto rest = std::partition(waiters_.begin(), waiters_.end(),
                               [&](const Waiter& w) { return !pick(w); });
    std::vector<Waiter> taken(std::make_move_iterator(rest), std::make_move_iterator(waiters_.end()));
    waiters_.erase(rest, waiters_.end());
    return taken;
  }
  void notice(const std::string& text) const {
    if (options_.notice) options_.notice(text);
  }
  uint64_t published_size() const { return published_ ? published_->checkpoint.size : 0; }
  bool has_published() const { return published_ != nullptr; }

  const Ledger& ledger_;
  WitnessingOptions options_;
  VerifierKey log_key_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // workers: a new round, a retry time, stop
  std::condition_variable coord_cv_;  // coordinator: commits, cosignatures, waiters, stop
  bool stop_ = false;
  uint64_t newest_ = 0;
  std::map<uint64_t, Round> rounds_;  // by size: the published one (if kept) and the current
  std::shared_ptr<const Publication> published_;
  std::deque<std::pair<uint64_t, Clock::time_point>> timed_commits_;
  std::vector<Waiter> waiters_;
  Clock::time_point round_retry_at_{};
  std::vector<Slot> slots_;  // one per policy witness, fixed once the threads run
  std::vector<std::thread> threads_;
};

Status WitnessingImpl::load_stored() {
  const std::string path = witnessed_checkpoint_path(options_.dir);
  auto stored = read_witnessed_checkpoint(options_.dir);
  if (!stored && stored.error().code() == Code::kNotFound) return Status::ok();
  if (!stored) return stored.error();
  const VerifierKey keys[] = {log_key_};
  auto report = options_.policy.evaluate(*stored, keys);
  if (!report || !report->satisfied) {
    notice("not serving the stored witnessed checkpoint " + path + ": " +
           (report ? "its cosignatures do not satisfy the policy's quorum "
                   : report.error().message()) +
           "; the next quorum replaces it");
    return Status::ok();
  }
  const Checkpoint& cp = report->checkpoint;
  auto root = cp.size <= ledger_.size() ? ledger_.root(cp.size) : Result<Hash>(not_found(""));
  if (!root || *root != cp.root) {
    return corrupt("the witnessed checkpoint " + path + " (size " + std::to_string(cp.size) +
                   ") is not of this ledger's tree: the directory holds another ledger's "
                   "publication; remove the file to publish afresh");
  }
  auto publication = std::make_shared<Publication>();
  publication->note = std::move(*stored);
  publication->checkpoint = cp;
  for (const Cosignature& c : report->cosigned) publication->witnesses.push_back(c.name);
  for (Slot& s : slots_) {
    if (std::find(publication->witnesses.begin(), publication->witnesses.end(),
                  s.witness.name) != publication->witnesses.end()) {
      s.progress.known_size = cp.size;
    }
  }
  published_ = std::move(publication);
  newest_ = std::max(newest_, cp.size);
  return Status::ok();
}

// ---- the witnesses' threads ---------------------------------------------------------------

void WitnessingImpl::work(size_t w) {
  std::unique_lock lock(mu_);
  while (!stop_) {
    Slot& s = slots_[w];
    if (rounds_.empty()) {
      work_cv_.wait(lock);
      continue;
    }
    const auto& [size, round] = *rounds_.rbegin();
    if (round.lines[w] || s.ahead_at == size) {
      work_cv_.wait(lock);
      continue;
    }
    if (Clock::now() < s.retry_at) {
      work_cv_.wait_until(lock, s.retry_at);
      continue;
    }
    const uint64_t old = s.progress.known_size.value_or(0);
    if (old > size) {
      s.ahead_at = size;
      s.progress.last_error = "it holds size " + std::to_string(old) + ", beyond this log's " +
                              std::to_string(size) + ": it saw another branch of the log (a "
                              "split view) or this ledger was rolled back";
      notice("witness " + s.witness.name + ": " + s.progress.last_error);
      continue;
    }
    const Round copy = round;
    lock.unlock();
    Attempt attempt = submit_checkpoint(*s.client, ledger_, s.witness.key, old, copy.checkpoint,
                                        copy.text);
    lock.lock();
    record(w, copy.checkpoint.size, old, attempt);
  }
}

void WitnessingImpl::record(size_t w, uint64_t size, uint64_t old, const Attempt& a) {
  Slot& s = slots_[w];
  WitnessProgress& p = s.progress;
  if (options_.on_submission) options_.on_submission(w, a.outcome);
  const bool recovered = s.failures > 0;
  switch (a.outcome) {
    case SubmissionOutcome::kCosigned: {
      ++p.cosigned;
      p.known_size = size;
      p.cosigned_size = std::max(p.cosigned_size, size);
      p.last_cosigned_unix = static_cast<int64_t>(std::time(nullptr));
      p.last_error.clear();
      s.failures = 0;
      if (auto r = rounds_.find(size); r != rounds_.end()) r->second.lines[w] = a.cosignature;
      if (recovered) notice("witness " + s.witness.name + " cosigns again, at size " + std::to_string(size));
      coord_cv_.notify_one();
      return;
    }
    case SubmissionOutcome::kConflict:
      ++p.conflicts;
      p.known_size = a.size;
      if (a.size != old) return;  // send again at once, from its size
      p.last_error = "it answered 409 with the size that was sent, " + std::to_string(old);
      break;
    case SubmissionOutcome::kRefused: ++p.refused; p.last_error = a.error; break;
    case SubmissionOutcome::kFailed: ++p.failed; p.last_error = a.error; break;
  }
  ++s.failures;
  auto backoff = options_.min_backoff * (1u << std::min(s.failures - 1, 16u));
  s.retry_at = Clock::now() + std::min<std::chrono::milliseconds>(backoff, options_.max_backoff);
  if (s.failures == 1) notice("witness " + s.witness.name + ": " + p.last_error + "; retrying");
}

// ---- rounds and publication ---------------------------------------------------------------

void WitnessingImpl::coordinate() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (auto due = publication_due()) {
      const std::string text = due->note;
      lock.unlock();
      Status s = store_witnessed_checkpoint(options_.dir, text);
      lock.lock();
      if (!s) {
        notice("cannot publish the checkpoint of size " + std::to_string(due->checkpoint.size) +
               ": " + s.message() + "; retrying");
        coord_cv_.wait_for(lock, options_.max_backoff);
        continue;
      }
      published_now(std::make_shared<const Publication>(std::move(*due)), lock);
      continue;
    }
    const bool round_done =
        rounds_.empty() || (has_published() && rounds_.rbegin()->first <= published_size());
    if (round_done && newest_ > published_size() && Clock::now() >= round_retry_at_) {
      if (start_round(lock)) continue;
    }
    expire_waiters(lock);
    if (stop_) break;
    Clock::time_point until = Clock::time_point::max();
    for (const Waiter& w : waiters_) until = std::min(until, w.deadline);
    if (round_done && newest_ > published_size()) until = std::min(until, round_retry_at_);
    if (until == Clock::time_point::max()) {
      coord_cv_.wait(lock);
    } else {
      coord_cv_.wait_until(lock, until);
    }
  }
  std::vector<Waiter> left = std::move(waiters_);
  lock.unlock();
  for (Waiter& w : left) w.done(io_error("the server is stopping before a checkpoint of " +
                                         std::to_string(w.size) + " entries had its quorum"));
}

// The note to publish now, if any: the newest round once its lines meet the quorum, or the
// published round with lines that came after its publication.
std::optional<Publication> WitnessingImpl::publication_due() const {
  // The round's note with the lines collected for it, and the witnesses who wrote them.
  auto collected = [this](const Round& round) {
    Publication p{"", round.checkpoint, {}};
    Note note = round.note;
    for (size_t w = 0; w < slots_.size(); ++w) {
      if (!round.lines[w]) continue;
      p.witnesses.push_back(slots_[w].witness.name);
      note.signatures.push_back(*round.lines[w]);
    }
    // More lines than a note may hold: keep what is published.
    if (auto text = format_note(note)) p.note = std::move(*text);
    return p;
  };
  if (rounds_.empty()) return std::nullopt;
  const auto& [size, round] = *rounds_.rbegin();
  if (!has_published() || size > published_size()) {
    Publication p = collected(round);
    if (!p.note.empty() && options_.policy.satisfied_by(p.witnesses)) return p;
  }
  if (!has_published()) return std::nullopt;
  auto it = rounds_.find(published_size());
  if (it == rounds_.end()) return std::nullopt;
  Publication p = collected(it->second);
  if (p.note.empty() || p.witnesses.size() <= published_->witnesses.size()) return std::nullopt;
  return p;
}

void WitnessingImpl::published_now(std::shared_ptr<const Publication> publication,
                                   std::unique_lock<std::mutex>& lock) {
  const uint64_t size = publication->checkpoint.size;
  const bool fresh = size > published_size() || !has_published();
  published_ = publication;
  rounds_.erase(rounds_.begin(), rounds_.lower_bound(size));
  if (!fresh) return;
  const auto now = Clock::now();
  std::vector<std::chrono::nanoseconds> delays;
  while (!timed_commits_.empty() && timed_commits_.front().first <= size) {
    delays.push_back(now - timed_commits_.front().second);
    timed_commits_.pop_front();
  }
  std::vector<Waiter> ready = take_waiters([size](const Waiter& w) { return w.size <= size; });
  lock.unlock();
  if (options_.on_publication_delay) {
    for (auto d : delays) options_.on_publication_delay(d);
  }
  for (Waiter& w : ready) w.done(publication);
  lock.lock();
}

bool WitnessingImpl::start_round(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  auto stored = stored_checkpoint(ledger_);
  Result<Note> note = stored ? parse_note(stored->note) : Result<Note>(stored.error());
  lock.lock();
  if (!note) {
    notice("cannot read the newest checkpoint to witness: " + note.error().message());
    round_retry_at_ = Clock::now() + options_.max_backoff;
    return false;
  }
  const uint64_t size = stored->checkpoint.size;
  if (size <= published_size() && has_published()) return false;
  Round& r = rounds_[size];
  r.checkpoint = stored->checkpoint;
  r.note = std::move(*note);
  r.text = std::move(stored->note);
  r.lines.assign(slots_.size(), std::nullopt);
  for (Slot& s : slots_) s.ahead_at = UINT64_MAX;
  newest_ = std::max(newest_, size);
  work_cv_.notify_all();
  return true;
}

void WitnessingImpl::expire_waiters(std::unique_lock<std::mutex>& lock) {
  const auto now = Clock::now();
  std::vector<Waiter> expired = take_waiters([now](const Waiter& w) { return w.deadline <= now; });
  if (expired.empty()) return;
  const std::string why = waiting_for();
  lock.unlock();
  for (Waiter& w : expired) {
    w.done(io_error("no checkpoint of at least " + std::to_string(w.size) +
                    " entries had its witness quorum within " +
                    std::to_string(w.timeout.count()) + " ms (" + why + ")"));
  }
  lock.lock();
}

// "quorum Q; published size P; waiting for w2 (connection refused), w3 (...)".
std::string WitnessingImpl::waiting_for() const {
  std::string out = "quorum " + options_.policy.quorum() + "; published size " +
                    (has_published() ? std::to_string(published_size()) : "none");
  std::string missing;
  const Round* round = rounds_.empty() ? nullptr : &rounds_.rbegin()->second;
  for (size_t w = 0; w < slots_.size(); ++w) {
    if (round && round->lines[w]) continue;
    if (!missing.empty()) missing += ", ";
    missing += slots_[w].witness.name;
    if (!slots_[w].progress.last_error.empty()) missing += " (" + slots_[w].progress.last_error + ")";
  }
  if (!missing.empty()) out += "; waiting for " + missing;
  return out;
}

}  // namespace

std::string_view submission_outcome_name(SubmissionOutcome outcome) {
  switch (outcome) {
    case SubmissionOutcome::kCosigned: return "cosigned";
    case SubmissionOutcome::kConflict: return "conflict";
    case SubmissionOutcome::kRefused: return "refused";
    case SubmissionOutcome::kFailed: return "failed";
  }
  return "failed";
}

Result<std::unique_ptr<Witnessing>> Witnessing::start(const Ledger& ledger,
                                                      WitnessingOptions options) {
  const TlogPolicy& policy = options.policy;
  if (policy.quorum() == kQuorumNone) {
    return usage_error("the policy's quorum is none: there is nothing to wait for; serve "
                       "without --policy, or name a witness or group on the quorum line");
  }
  auto log_key = ledger.log_verifier();
  if (!log_key) return log_key.error().with_context("the ledger has no log key to witness");
  if (!policy.logs().empty()) {
    auto keys = policy.log_keys(log_key->name);
    if (std::find(keys.begin(), keys.end(), *log_key) == keys.end()) {
      return usage_error("the policy's log lines do not name this log's key " +
                         log_key->to_string() + "; add 'log " + log_key->to_string() + "'");
    }
  }
  auto impl = std::make_unique<WitnessingImpl>(ledger, options, *log_key);
  for (const PolicyWitness& w : policy.witnesses()) {
    if (w.url.empty()) {
      return usage_error("witness " + w.name + " of the policy has no submission URL: write it "
                         "after the key, 'witness " + w.name + " <vkey> http://host:port/'");
    }
    auto client = HttpClient::open(w.url, options.http);
    if (!client) return client.error().with_context("witness " + w.name);
    Slot slot;
    slot.witness = w;
    slot.progress.name = w.name;
    slot.progress.url = w.url;
    slot.client = std::move(*client);
    impl->add(std::move(slot));
  }
  if (::mkdir(options.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return io_error("cannot make " + options.dir + ": " + errno_text());
  }
  if (Status s = impl->load_stored(); !s) return s;
  impl->run(ledger.size());
  return std::unique_ptr<Witnessing>(std::move(impl));
}

}  // namespace evl
