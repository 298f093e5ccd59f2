// A mirror's side of the ledger (OpenOptions::mirror_of): storing the upstream's entries with
// its own signed checkpoints and statements, checked on the way in (ledger/ledger.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/internal/ledger_impl.h"
#include "ledger/internal/lmdb.h"
#include "ledger/internal/tree_store.h"

namespace evl::ledger_internal {

namespace {

constexpr std::string_view kMirrorOfKey = "mirror_of";
constexpr std::string_view kMirrorTargetKey = "mirror_target";

std::string range_text(uint64_t first, uint64_t end) {
  return "[" + std::to_string(first) + ", " + std::to_string(end) + ")";
}

}  // namespace

bool LedgerImpl::is_log_key(const Genesis& genesis) const {
  if (mirror_of_) return VerifierKey::of(genesis.origin, genesis.log_key) == *mirror_of_;
  return genesis.log_key == log_key_->public_key();
}

Status LedgerImpl::check_mirror_record() {
  auto txn = lmdb::Txn::begin(env_, true);
  if (!txn) return txn.error();
  auto record = txn->get(meta_, as_bytes(kMirrorOfKey));
  if (!record && record.error().code() != Code::kNotFound) return record.error();
  if (record) {
    const std::string recorded(as_chars(*record));
    if (own_entries_) {
      const auto key = VerifierKey::parse(recorded);
      return usage_error("ledger " + dir_ + " is a mirror of the log " +
                         (key ? key->name : recorded) + ": a mirror holds no log key and takes "
                         "no entries of its own; publish to that log with --to URL (its "
                         "server), update this copy with 'evledger mirror' and serve it with "
                         "'evledger serve --read-only'");
    }
    if (!mirror_of_ && !log_key_ && log_key_path_.empty()) {
      // A writer that names no log key (a rebuild, say) opens a mirror as the mirror it is.
      auto key = VerifierKey::parse(recorded);
      if (!key) return corrupt("ledger " + dir_ + " records a mirrored key that does not parse: " +
                               key.error().message());
      mirror_of_ = std::move(*key);
      return Status::ok();
    }
    if (!mirror_of_) {
      return usage_error("ledger " + dir_ + " is a mirror of " + recorded + ": it holds no log "
                         "key and appends only what its upstream signed; update it with "
                         "'evledger mirror', serve it with 'evledger serve --read-only'");
    }
    if (recorded != mirror_of_->to_string()) {
      return rejected("ledger " + dir_ + " is a mirror of " + recorded + ", not of " +
                      mirror_of_->to_string() + "; mirror that log into another directory");
    }
    return Status::ok();
  }
  if (!mirror_of_) return Status::ok();
  if (size() != 0) {
    return usage_error("ledger " + dir_ + " is a log of its own, not a mirror; mirror into a new "
                       "directory");
  }
  const std::string key = mirror_of_->to_string();
  int rc = txn->put(meta_, as_bytes(kMirrorOfKey), as_bytes(key), 0);
  if (rc != 0) return lmdb::error(rc, "cannot record the mirrored log key");
  return txn->commit();
}

size_t LedgerImpl::upstream_batch_entries(size_t most) const {
  if (most <= 1) return most;
  // The pages a batch of k entries dirties: the sequential databases (entries, tree) a share
  // per entry; each random-key database of P pages taking w records per entry about
  // P·(1 − e^(−k·w/P)), the pages that k·w random inserts land on.
  struct Random {
    double pages, per_entry;
  };
  double sequential = 1.0;  // an empty mirror: a page per entry (2 KiB entries overflow one)
  std::vector<Random> random;
  Status read = with_read([&](lmdb::Txn& txn) -> Status {
    auto pages = [&](MDB_dbi dbi, MDB_stat& st) {
      if (mdb_stat(txn.get(), dbi, &st) != 0) st = MDB_stat{};
      return double(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages);
    };
    const double n = double(size());
    MDB_stat st;
    if (n > 0) sequential = (pages(entries_, st) + pages(tree_, st)) / n;
    for (MDB_dbi dbi : {ids_, manifests_, state_}) {
      const double p = std::max(1.0, pages(dbi, st));
      // Records per entry, capped: most of the fold's records are rewritten, not added.
      random.push_back({p, n > 0 ? std::min(4.0, double(st.ms_entries) / n) : 1.0});
    }
    return Status::ok();
  });
  if (!read) return most;  // the transaction will say what is wrong
  auto dirtied = [&](double k) {
    double total = k * sequential;
    for (const Random& r : random) total += r.pages * -std::expm1(-k * r.per_entry / r.pages);
    return total;
  };
  size_t low = 1, high = most;  // dirtied() grows with k: the largest k within the budget
  if (dirtied(double(high)) <= double(kUpstreamDirtyPages)) return high;
  while (low + 1 < high) {
    const size_t mid = low + (high - low) / 2;
    (dirtied(double(mid)) <= double(kUpstreamDirtyPages) ? low : high) = mid;
  }
  return low;
}

Result<std::string> LedgerImpl::mirror_target() const {
  return with_read([&](lmdb::Txn& txn) -> Result<std::string> {
    auto note = txn.get(meta_, as_bytes(kMirrorTargetKey));
    if (!note && note.error().code() == Code::kNotFound) {
      return not_found("ledger " + dir_ + " has no unfinished pull");
    }
    if (!note) return note.error();
    return std::string(as_chars(*note));
  });
}

Status LedgerImpl::store_upstream_statement(lmdb::Txn& txn, uint64_t size,
                                            const std::string& text, int& rc) {
  const std::string at = "at size " + std::to_string(size);
  auto check = [&](std::string_view note, const std::string& whose) -> Status {
    const VerifierKey keys[] = {*mirror_of_};
    auto opened = open_note(note, keys);
    if (!opened) {
      return rejected(whose + " statement about its projections " + at + " is not signed by " +
                      mirror_of_->to_string() + ": " + opened.error().message());
    }
    if (opened->text != text) {
      return rejected(whose + " signed statement about its projections " + at + " says\n" +
                      opened->text + "but this mirror's own fold of the same entries gives\n" +
                      text + "so the views the log publishes do not follow from its entries "
                      "(or the two fold them by another projection format)");
    }
    return Status::ok();
  };
  auto stored = txn.get(statements_, u64_be(size));
  if (stored) EVL_RETURN_IF_ERROR(check(as_chars(*stored), "the stored upstream's"));
  if (!stored && stored.error().code() != Code::kNotFound) return stored.error();
  if (upstream_statement_ == nullptr) return Status::ok();
  EVL_RETURN_IF_ERROR(check(*upstream_statement_, "the upstream's"));
  if (stored) return Status::ok();
  rc = txn.put(statements_, u64_be(size), as_bytes(*upstream_statement_), MDB_NOOVERWRITE);
  if (rc != 0) return lmdb::error(rc, "cannot store the upstream's statement " + at);
  return Status::ok();
}

Status LedgerImpl::stage_upstream(lmdb::Txn& txn, const UpstreamBatch& batch,
                                  const Checkpoint& checkpoint, std::shared_ptr<Pending> pending,
                                  std::optional<KeyPolicy>& changed, tree_store::TreeEdge& edge,
                                  int& rc) {
  const uint64_t end = batch.first + batch.entries.size();
  std::vector<GroupRange> group{{std::move(pending), 0, batch.entries.size()}};
  uint64_t next = batch.first;
  EVL_RETURN_IF_ERROR(stage_group(txn, group, changed, edge, next, rc));
  for (size_t i = 0; i < group[0].pending->outcomes.size(); ++i) {
    const AppendOutcome& outcome = group[0].pending->outcomes[i];
    const std::string what = "entry " + std::to_string(batch.first + i) + " of the upstream";
    if (!outcome.status) return rejected(what + ": " + outcome.status.message());
    if (!outcome.added) {
      return rejected(what + " repeats the event (or the manifest) of entry " +
                      std::to_string(outcome.index) + ": a log holds each once");
    }
  }
  tree_store::TxnHashReader reader(txn, tree_);
  auto root = tree_hash(end, reader);
  if (!root) return root.error();
  const std::string entries = "the upstream's entries " + range_text(0, end);
  if (end == checkpoint.size) {
    if (*root != checkpoint.root) {
      return rejected(entries + " give the root " + base64_encode(*root) + ", but its signed "
                      "checkpoint of that size says " + base64_encode(checkpoint.root));
    }
    rc = txn.put(checkpoints_, u64_be(end), as_bytes(batch.checkpoint), MDB_APPEND);
    if (rc != 0) return lmdb::error(rc, "cannot store the checkpoint of size " +
                                            std::to_string(end));
    rc = txn.del(meta_, as_bytes(kMirrorTargetKey));
    if (rc == MDB_NOTFOUND) rc = 0;
    if (rc != 0) return lmdb::error(rc, "cannot clear the mirror's target");
  } else {
    auto prefix = prefix_root_from_path(end, checkpoint.size, batch.path, checkpoint.root);
    if (!prefix) {
      return rejected("the upstream's tree does not match its checkpoint of size " +
                      std::to_string(checkpoint.size) + ": " + prefix.error().message());
    }
    if (*prefix != *root) {
      return rejected(entries + " give the root " + base64_encode(*root) + ", but the tree "
                      "its checkpoint of size " + std::to_string(checkpoint.size) +
                      " signs holds " + base64_encode(*prefix) + " there");
    }
    rc = txn.put(meta_, as_bytes(kMirrorTargetKey), as_bytes(batch.checkpoint), 0);
    if (rc != 0) return lmdb::error(rc, "cannot record the mirror's target");
  }
  if (!hook_) return Status::ok();
  const KeyPolicy& keys = changed ? *changed : policy_;
  upstream_statement_ = batch.statement ? &*batch.statement : nullptr;
  Status stated = store_statement(txn, keys, end, end == checkpoint.size, StatementMode::kNew, rc);
  upstream_statement_ = nullptr;
  return stated;
}

std::shared_ptr<UpstreamChecks> LedgerImpl::check_upstream(std::span<const Bytes> entries) {
  auto checks = std::make_shared<UpstreamChecks>();
  checks->pending = std::make_shared<Pending>(entries.size());
  Pending& pending = *checks->pending;
  pool_.parallel_for(entries.size(), [&](size_t i) { prepare(entries[i], pending.items[i]); });
  return checks;
}

Status LedgerImpl::append_upstream(const UpstreamBatch& batch) {
  if (!mirror_of_ || read_only_) {
    return usage_error("ledger " + dir_ + " is not open as a mirror (OpenOptions::mirror_of)");
  }
  const uint64_t end = batch.first + batch.entries.size();
  if (batch.first != size() || batch.entries.empty()) {
    return usage_error("upstream entries " + range_text(batch.first, end) +
                       " do not continue the mirror, which holds " + std::to_string(size()));
  }
  auto checkpoint = open_checkpoint(batch.checkpoint, *mirror_of_);
  if (!checkpoint) return rejected("the upstream's checkpoint: " + checkpoint.error().message());
  if (checkpoint->size < end) {
    return usage_error("upstream entries " + range_text(batch.first, end) +
                       " go past its checkpoint of size " + std::to_string(checkpoint->size));
  }
  if ((end == checkpoint->size) != batch.path.empty() ||
      (batch.statement && end != checkpoint->size)) {
    return usage_error("an upstream batch ending at its checkpoint's size has a statement and "
                       "no path; one ending short of it a path and no statement");
  }
  std::shared_ptr<UpstreamChecks> checks = batch.checks;
  if (!checks || checks->pending->items.size() != batch.entries.size() ||
      checks->pending->items[0].bytes != &batch.entries[0]) {
    checks = check_upstream(batch.entries);
  }
  const std::shared_ptr<Pending>& pending = checks->pending;
  for (;;) {
    std::optional<KeyPolicy> changed;
    tree_store::TreeEdge edge = edge_;
    int rc = 0;
    Status status;
    {
      std::shared_lock lock(resize_mu_);
      auto txn = lmdb::Txn::begin(env_, true);
      if (!txn) return txn.error();
      if (hook_) hook_->begin_transaction();
      status = stage_upstream(*txn, batch, *checkpoint, pending, changed, edge, rc);
      if (status) {
        rc = txn->commit_code();
        if (rc != 0) status = lmdb::error(rc, "cannot commit upstream entries " +
                                                  range_text(batch.first, end));
      }
    }
    if (status) {
      if (changed) {
        std::lock_guard policy_lock(policy_mu_);
        policy_ = std::move(*changed);
      }
      if (end == checkpoint->size) last_checkpoint_ = *checkpoint;
      edge_ = std::move(edge);
      size_.store(end, std::memory_order_release);
      return Status::ok();
    }
    if (rc == EIO || rc == ENOSPC || rc == EDQUOT) {
      return lmdb::write_error(rc, "cannot commit upstream entries " +
                                       range_text(batch.first, end), dir_ + "/db");
    }
    if (rc != MDB_MAP_FULL) return status;
    EVL_RETURN_IF_ERROR(grow_map());
  }
}

}  // namespace evl::ledger_internal
