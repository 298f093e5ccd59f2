#include "ledger/audit.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "events/observation.h"
#include "keys/checkpoint.h"
#include "ledger/internal/lmdb_check.h"
#include "ledger/thread_pool.h"
#include "ledger/witnessing.h"

namespace evl {

namespace {

constexpr size_t kAuditChunk = 1024;
constexpr size_t kVoidExamples = 10;
constexpr size_t kHashWindow = 4096;  // stored hashes a ledger source reads at a time
constexpr size_t kIdRange = size_t{1} << 20;  // event ids checked against the id index at once

// The compact range of the entries seen so far: it yields Go tlog's stored nodes in order and
// the root at any size, in O(log n) memory.
class CompactRange {
 public:
  // Adds entry n's leaf; calls emit(level, index, hash) for the leaf and each node it completes.
  template <typename Emit>
  Status append(const Hash& leaf, Emit&& emit) {
    uint64_t n = size_;
    EVL_RETURN_IF_ERROR(emit(0, n, leaf));
    stack_.push_back({0, leaf});
    while (stack_.size() >= 2 && stack_[stack_.size() - 2].level == stack_.back().level) {
      Node right = stack_.back();
      stack_.pop_back();
      Node& left = stack_.back();
      left.hash = node_hash(left.hash, right.hash);
      left.level++;
      EVL_RETURN_IF_ERROR(emit(left.level, n >> left.level, left.hash));
    }
    size_++;
    return Status::ok();
  }

  Hash root() const {
    if (stack_.empty()) return empty_tree_hash();
    Hash h = stack_.back().hash;
    for (size_t i = stack_.size() - 1; i-- > 0;) h = node_hash(stack_[i].hash, h);
    return h;
  }

 private:
  struct Node {
    int level;
    Hash hash;
  };
  std::vector<Node> stack_;
  uint64_t size_ = 0;
};

struct CheckedChunk {
  uint64_t from = 0;
  // The chunk's entries, each at an 8-byte aligned offset of one buffer reused from chunk to
  // chunk (entry i is arena[begins[i], ends[i])): no allocation per entry, and Cap'n Proto
  // reads them in place.
  Bytes arena;
  std::vector<size_t> begins, ends;
  std::vector<Result<CheckedEntry>> entries;  // the stateless checks
  std::vector<std::string> subjects;
  std::vector<Hash> leaves;
  Status status;  // a read failure

  size_t size() const { return ends.size(); }
  ByteView entry(size_t i) const {
    return ByteView(arena).subspan(begins[i], ends[i] - begins[i]);
  }
};

class LedgerSource final : public AuditSource {
 public:
  explicit LedgerSource(const Ledger& ledger) : ledger_(ledger) {}

  std::string name() const override { return "ledger " + ledger_.dir(); }

  Status scan_checkpoints(const std::function<Status(std::string_view)>& visit) const override {
    return ledger_.scan_checkpoints([&](uint64_t size, std::string_view note) -> Status {
      auto body = parse_checkpoint_body(note.substr(0, note.find("\n\n") + 1));
      if (body && body->size != size) {
        return corrupt("the checkpoint stored under size " + std::to_string(size) +
                       " is for size " + std::to_string(body->size));
      }
      return visit(note);
    });
  }

  Result<std::optional<std::string>> published_checkpoint() const override {
    auto note = read_witnessed_checkpoint(witnessing_dir(ledger_.dir()));
    if (!note && note.error().code() == Code::kNotFound) {
      return rejected(note.error().message() + "; a policy's quorum is checked on it");
    }
    if (!note) return note.error();
    return std::optional<std::string>(std::move(*note));
  }

  Status scan_entries(uint64_t from, uint64_t to, const EntryVisitor& visit) override {
    // A few hundred entries at a time, dropping their pages after each: the kernel maps 16
    // pages around every fault, so a whole chunk at once left tens of MB mapped.
    for (uint64_t begin = from; begin < to; begin += kScanStep) {
      Status s = ledger_.scan(begin, std::min(to, begin + kScanStep), visit);
      ledger_.release_mapped_pages();
      if (!s) return s;
    }
    return Status::ok();
  }

  Status check_node(int level, uint64_t n, const Hash& hash, uint64_t) override {
    uint64_t index = stored_hash_index(level, n);
    if (index < window_from_ || index >= window_from_ + window_.size()) {
      window_.clear();
      window_from_ = index;
      Status read = ledger_.scan_stored_hashes(
          index, index + kHashWindow, [&](uint64_t, const Hash& h) {
            window_.push_back(h);
            return Status::ok();
          });
      ledger_.release_mapped_pages();  // tree pages sit among entry pages: drop them
      // The last window ends early: the tree is shorter than the window, which is fine as
      // long as this node is there.
      if (window_.empty()) return read.is_ok() ? corrupt("tree node missing") : read;
    }
    const Hash& stored = window_[index - window_from_];
    if (stored != hash) {
      return corrupt("stored tree hash of node (level " + std::to_string(level) + ", " +
                     std::to_string(n) + ") is " + hex_encode(stored) + "; the entries give " +
                     hex_encode(hash));
    }
    return Status::ok();
  }

  Status check_ids(uint64_t from, std::span<const Digest> ids, uint64_t& failed) override {
    // One pass over the id index in id order, instead of a random lookup per entry: each leaf
    // page is read once (random lookups faulted a page, and the kernel's 15 neighbours, per
    // entry). Keys are unique, so a record that matches its entry's id is that entry's only one.
    std::vector<bool> found(ids.size());
    Status scanned = ledger_.scan_ids([&](const Digest& id, uint64_t index) -> Status {
      if (index < from || index - from >= ids.size()) return Status::ok();  // another range
      const Digest& computed = ids[index - from];
      if (id != computed) {
        failed = index;
        return corrupt("the id index says event " + digest_text(id) + " is entry " +
                       std::to_string(index) + ", whose event id is " + digest_text(computed));
      }
      found[index - from] = true;
      return Status::ok();
    });
    if (!scanned) return scanned;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!found[i]) {
        failed = from + i;
        return corrupt("event id " + digest_text(ids[i]) + " of entry " + std::to_string(from + i) +
                       " has no id record pointing at it: the event appears twice in the log, "
                       "or its id record was removed or changed");
      }
    }
    return Status::ok();
  }

  Status finish(uint64_t size) const override {
    // A mirror part way through a pull holds entries past its newest checkpoint, each batch
    // proved against the checkpoint it pulls towards (mirror_target): the audit covers them
    // once that checkpoint is stored.
    const uint64_t held = ledger_.size();
    if (held != size && !(held > size && ledger_.mirror_target())) {
      return corrupt("the log holds " + std::to_string(held) +
                     " entries but its newest checkpoint covers " + std::to_string(size));
    }
    auto ids = ledger_.id_count();
    if (!ids) return ids.error();
    if (*ids != held) {
      return corrupt("the ids database has " + std::to_string(*ids) + " records for " +
                     std::to_string(held) +
                     " entries: an id record was added or lost outside the log");
    }
    return Status::ok();
  }

 private:
  static constexpr uint64_t kScanStep = 512;
  const Ledger& ledger_;
  std::vector<Hash> window_;
  uint64_t window_from_ = 0;
};

class Auditor {
 public:
  Auditor(AuditSource& source, const AuditOptions& options)
      : source_(source), options_(options), pool_(options.threads) {}

  AuditReport run();

 private:
  Status read_genesis_key();
  Status read_checkpoints();
  Status read_saved_checkpoint();
  Status check_quorum();
  Status scan_all();
  Status process(CheckedChunk& chunk);
  Status count_voided();
  // Compares the ids gathered so far with the source's id index.
  Status check_ids();
  // Reads entries [from, to) into `chunk` (its status says whether they were all there).
  void read_chunk(uint64_t from, uint64_t to, CheckedChunk& chunk);
  // Runs the stateless checks of a chunk that was read, on all cores.
  void check_chunk(CheckedChunk& chunk);

  Status fail_at(uint64_t index, Status status) {
    report_.failed_index = index;
    return status.with_context("entry " + std::to_string(index));
  }

  AuditSource& source_;
  const AuditOptions& options_;
  ThreadPool pool_;
  AuditReport report_;
  VerifierKey log_key_;
  std::vector<std::pair<uint64_t, Hash>> checkpoints_;  // (size, root), increasing sizes
  std::optional<Checkpoint> saved_;
  KeyPolicy policy_;
  CompactRange tree_;
  size_t next_checkpoint_ = 0;
  std::vector<Digest> ids_;  // event ids of entries [ids_from_, ...), awaiting check_ids
  uint64_t ids_from_ = 0;
  uint64_t size_ = 0;  // the newest checkpoint's size: the entries audited
  std::string newest_note_;  // with a policy: the newest checkpoint, verbatim
};

AuditReport Auditor::run() {
  Status status = read_genesis_key();
  if (status) status = read_checkpoints();
  if (status) status = read_saved_checkpoint();
  if (status) status = check_quorum();
  if (status) status = scan_all();
  if (status) status = check_ids();
  if (status) status = source_.finish(size_);
  if (status) status = count_voided();
  report_.status = status;
  return report_;
}

Status Auditor::read_genesis_key() {
  std::optional<Genesis> genesis;
  Status scanned = source_.scan_entries(0, 1, [&](uint64_t, ByteView bytes) -> Status {
    auto entry = check_entry(bytes);
    if (!entry) return corrupt("entry 0: " + entry.error().message());
    if (const auto* g = std::get_if<Genesis>(&entry->body.payload)) genesis = *g;
    return Status::ok();
  });
  if (!scanned) return scanned.with_context(source_.name());
  if (!genesis) {
    report_.failed_index = 0;
    return corrupt("entry 0 of " + source_.name() + " is not a genesis");
  }
  report_.origin = genesis->origin;
  VerifierKey from_genesis = VerifierKey::of(genesis->origin, genesis->log_key);
  if (options_.log_key && !(*options_.log_key == from_genesis)) {
    return rejected("the pinned log key " + options_.log_key->to_string() +
                    " is not this log's key: its genesis names " + from_genesis.to_string());
  }
  log_key_ = from_genesis;
  return Status::ok();
}

Status Auditor::read_checkpoints() {
  std::vector<std::string> notes;
  std::vector<Result<Checkpoint>> opened;
  auto verify_batch = [&]() -> Status {
    opened.assign(notes.size(), rejected("unchecked"));
    pool_.parallel_for(notes.size(), [&](size_t i) { opened[i] = open_checkpoint(notes[i], log_key_); });
    for (size_t i = 0; i < notes.size(); ++i) {
      if (!opened[i]) {
        return corrupt("checkpoint " + std::to_string(report_.checkpoints) + " of " +
                       source_.name() + ": " + opened[i].error().message());
      }
      const Checkpoint& c = *opened[i];
      if (!checkpoints_.empty() && c.size <= checkpoints_.back().first) {
        return corrupt("checkpoint for size " + std::to_string(c.size) + " follows one for size " +
                       std::to_string(checkpoints_.back().first) + ": sizes must grow");
      }
      checkpoints_.emplace_back(c.size, c.root);
      report_.checkpoints++;
    }
    notes.clear();
    return Status::ok();
  };
  Status scanned = source_.scan_checkpoints([&](std::string_view note) -> Status {
    notes.emplace_back(note);
    if (options_.policy) newest_note_ = note;
    return notes.size() >= kAuditChunk ? verify_batch() : Status::ok();
  });
  if (!scanned) return scanned;
  EVL_RETURN_IF_ERROR(verify_batch());
  if (checkpoints_.empty()) return corrupt(source_.name() + " has no signed checkpoint");
  size_ = checkpoints_.back().first;
  report_.root = base64_encode(checkpoints_.back().second);
  return Status::ok();
}

Status Auditor::read_saved_checkpoint() {
  if (!options_.saved_checkpoint) return Status::ok();
  auto saved = open_checkpoint(*options_.saved_checkpoint, log_key_);
  if (!saved) return rejected("the saved checkpoint: " + saved.error().message());
  if (saved->size > size_) {
    return corrupt("the log was truncated: the saved checkpoint covers " +
                   std::to_string(saved->size) + " entries, the log's newest only " +
                   std::to_string(size_));
  }
  saved_ = *saved;
  return Status::ok();
}

Status Auditor::check_quorum() {
  if (!options_.policy) return Status::ok();
  auto published = source_.published_checkpoint();
  if (!published) return published.error().with_context(source_.name());
  const std::string& note = published->has_value() ? **published : newest_note_;
  const VerifierKey keys[] = {log_key_};
  auto checkpoint = options_.policy->verify(note, keys);
  if (!checkpoint) return checkpoint.error().with_context(source_.name() + ": --policy");
  auto signed_at = std::find_if(checkpoints_.begin(), checkpoints_.end(),
                                [&](const auto& c) { return c.first == checkpoint->size; });
  if (signed_at == checkpoints_.end() || signed_at->second != checkpoint->root) {
    return corrupt(source_.name() + ": the witnessed checkpoint of size " +
                   std::to_string(checkpoint->size) +
                   " is not the checkpoint the log signed at that size");
  }
  auto report = options_.policy->evaluate(note, keys);
  if (report) report_.witnessed_by = report->cosigned;
  report_.witnessed_size = checkpoint->size;
  return Status::ok();
}

void Auditor::read_chunk(uint64_t from, uint64_t to, CheckedChunk& chunk) {
  chunk.from = from;
  chunk.arena.clear();
  chunk.begins.clear();
  chunk.ends.clear();
  chunk.status = source_.scan_entries(from, to, [&](uint64_t, ByteView bytes) {
    chunk.arena.resize((chunk.arena.size() + 7) / 8 * 8);
    chunk.begins.push_back(chunk.arena.size());
    chunk.arena.insert(chunk.arena.end(), bytes.begin(), bytes.end());
    chunk.ends.push_back(chunk.arena.size());
    return Status::ok();
  });
  if (!chunk.status) return;
  if (chunk.size() != to - from) {
    chunk.status = corrupt(source_.name() + " gave " + std::to_string(chunk.size()) +
                           " entries from index " + std::to_string(from) + ", expected " +
                           std::to_string(to - from));
  }
}

void Auditor::check_chunk(CheckedChunk& chunk) {
  chunk.entries.assign(chunk.size(), rejected("unchecked"));
  chunk.subjects.resize(chunk.size());
  chunk.leaves.resize(chunk.size());
  // Everything that needs no replayed state runs here, on all cores: the entry's own checks,
  // its id record, its leaf hash.
  pool_.parallel_for(chunk.size(), [&](size_t i) {
    CheckedEntry checked;
    Status s = check_log_entry(chunk.entry(i), checked, chunk.subjects[i]);
    if (!s) {
      chunk.entries[i] = s;
      return;
    }
    chunk.entries[i] = std::move(checked);
    chunk.leaves[i] = leaf_hash(chunk.entry(i));
  });
}

Status Auditor::scan_all() {
  // Three stages run at once, each on its own thread: one reads chunk k+2 out of the source,
  // one checks chunk k+1 on all cores, and this thread replays policy and the tree for chunk
  // k. Four chunk buffers circulate between them, so memory is bounded.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::unique_ptr<CheckedChunk>> spare, read, checked;
  for (int i = 0; i < 4; ++i) spare.push_back(std::make_unique<CheckedChunk>());
  bool stop = false;
  // The next chunk of `queue`, or none once the audit stops.
  auto take = [&](std::deque<std::unique_ptr<CheckedChunk>>& queue) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stop || !queue.empty(); });
    std::unique_ptr<CheckedChunk> chunk;
    if (!queue.empty()) {
      chunk = std::move(queue.front());
      queue.pop_front();
    }
    return chunk;
  };
  auto put = [&](std::deque<std::unique_ptr<CheckedChunk>>& queue,
                 std::unique_ptr<CheckedChunk> chunk) {
    std::lock_guard lock(mu);
    queue.push_back(std::move(chunk));
    cv.notify_all();
  };
  auto reader = start_thread([&] {
    for (uint64_t from = 0; from < size_; from += kAuditChunk) {
      auto chunk = take(spare);
      if (!chunk) return;
      read_chunk(from, std::min<uint64_t>(size_, from + kAuditChunk), *chunk);
      bool failed = !chunk->status;
      put(read, std::move(chunk));
      if (failed) return;
    }
  }, "the audit's reader thread");
  if (!reader) return reader.error();
  auto checker = start_thread([&] {
    for (uint64_t from = 0; from < size_; from += kAuditChunk) {
      auto chunk = take(read);
      if (!chunk) return;
      bool failed = !chunk->status;
      if (!failed) check_chunk(*chunk);
      put(checked, std::move(chunk));
      if (failed) return;
    }
  }, "the audit's checking thread");
  Status status = checker.status();  // without a checker, only stop the reader below
  for (uint64_t done = 0; done < size_ && status;) {
    auto chunk = take(checked);  // never empty: only this thread stops the audit
    status = chunk->status ? process(*chunk) : chunk->status.with_context(source_.name());
    done += chunk->size();
    if (options_.progress) options_.progress(done, size_);
    put(spare, std::move(chunk));
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  reader->join();
  if (checker) checker->join();
  return status;
}

Status Auditor::process(CheckedChunk& chunk) {
  for (size_t i = 0; i < chunk.size(); ++i) {
    const uint64_t index = chunk.from + i;
    auto& entry = chunk.entries[i];
    if (!entry) {
      Status e = entry.error();
      return fail_at(index, e.code() == Code::kRejected ? corrupt(e.message()) : e);
    }
    Status s = policy_.check(index, entry->body, chunk.subjects[i]);
    if (!s) return fail_at(index, rejected(s.message()));
    policy_.apply(index, entry->body);
    s = tree_.append(chunk.leaves[i], [&](int level, uint64_t n, const Hash& h) {
      report_.tree_nodes++;
      return source_.check_node(level, n, h, size_);
    });
    if (!s) return fail_at(index, s);
    if (ids_.empty()) ids_.reserve(std::min<uint64_t>(kIdRange, size_ - index));
    ids_.push_back(entry->id);
    if (ids_.size() == kIdRange) EVL_RETURN_IF_ERROR(check_ids());
    report_.signatures += entry->signers.size();
    report_.kinds[static_cast<size_t>(entry->body.kind())]++;
    report_.entries++;
    const uint64_t tree_size = index + 1;
    if (saved_ && saved_->size == tree_size && tree_.root() != saved_->root) {
      return corrupt("history was rewritten: the saved checkpoint's root at size " +
                     std::to_string(tree_size) + " is " + base64_encode(saved_->root) +
                     ", the log's entries give " + base64_encode(tree_.root()));
    }
    while (next_checkpoint_ < checkpoints_.size() &&
           checkpoints_[next_checkpoint_].first == tree_size) {
      if (checkpoints_[next_checkpoint_].second != tree_.root()) {
        return corrupt("the signed checkpoint at size " + std::to_string(tree_size) +
                       " has root " + base64_encode(checkpoints_[next_checkpoint_].second) +
                       "; the entries give " + base64_encode(tree_.root()));
      }
      ++next_checkpoint_;
    }
  }
  return Status::ok();
}

Status Auditor::check_ids() {
  uint64_t failed = 0;
  Status s = source_.check_ids(ids_from_, ids_, failed);
  if (!s) {
    report_.failed_index = failed;  // the message names the entry
    return s;
  }
  ids_from_ += ids_.size();
  ids_.clear();
  return Status::ok();
}

Status Auditor::count_voided() {
  if (!policy_.voids_anything()) return Status::ok();
  return source_.scan_entries(0, size_, [&](uint64_t index, ByteView bytes) {
    auto entry = decode_entry(bytes);
    if (!entry) return Status::ok();  // checked above
    if (auto cause = policy_.void_cause(entry->signatures[0].public_key, index)) {
      report_.voided++;
      if (report_.voided_examples.size() < kVoidExamples) {
        report_.voided_examples.emplace_back(index, *cause);
      }
    }
    return Status::ok();
  });
}

}  // namespace

std::unique_ptr<AuditSource> ledger_audit_source(const Ledger& ledger) {
  return std::make_unique<LedgerSource>(ledger);
}

AuditReport audit_log(AuditSource& source, const AuditOptions& options) {
  Auditor auditor(source, options);
  return auditor.run();
}

AuditReport audit_ledger(const Ledger& ledger, const AuditOptions& options) {
  auto source = ledger_audit_source(ledger);
  return audit_log(*source, options);
}

Status check_ledger_storage(const std::string& dir) {
  auto checked = lmdb_check::check_file(dir + "/db/data.mdb");
  if (!checked && checked.error().code() != Code::kNotFound) return checked.error();
  return Status::ok();
}

}  // namespace evl
