// ledger/audit.h — re-checking a whole log from its stored bytes, wherever it is kept.
//
// The audit trusts nothing but the entries and the log key: for every index it checks the
// canonical envelope and body, that carried manifests are RFC 8785 canonical, the event id (and the id index, for a ledger directory), every
// DSSE signature (in parallel), and that the signer held the needed role at that position
// (replaying key policy from the genesis). It recomputes the RFC 6962 tree, compares every
// stored tree node the source keeps, checks every stored checkpoint's signature and root (so
// successive checkpoints are consistent: they are roots of one sequence of entries), and, with
// a checkpoint the auditor saved earlier, catches truncation and rewritten history. It stops at
// the first failure and names the index or node, what was expected and what was found (the id
// index of a ledger directory is compared in one sequential pass per 2^20 entries, so its
// failures surface at the end of that range).
// Events voided by a compromise are not failures; they are counted and explained.
// Memory is flat in the entries: they are read in bounded chunks, and at most 2^20 event ids
// (32 MiB) wait for the id index pass; per checkpoint the audit keeps 40 bytes (its size and
// root).
//
// Thread safety: runs on the caller's thread plus a private pool.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "keys/key.h"
#include "keys/tlog_policy.h"
#include "ledger/ledger.h"
#include "ledger/merkle.h"

namespace evl {

// Where an audit reads a log from: a ledger directory, a tile export, or a URL serving tiles.
class AuditSource {
 public:
  virtual ~AuditSource() = default;

  // Names the source in messages ("ledger /srv/l", "tiles ./out", "https://...").
  virtual std::string name() const = 0;

  // Visits the checkpoints (signed notes) the source holds, oldest first. A ledger keeps one per
  // commit; a tile layout only its latest. The text is valid during the call only.
  [[nodiscard]] virtual Status scan_checkpoints(
      const std::function<Status(std::string_view note)>& visit) const = 0;

  // Visits entries [from, to) in index order; the bytes are valid during the call only.
  [[nodiscard]] virtual Status scan_entries(uint64_t from, uint64_t to,
                                            const EntryVisitor& visit) = 0;

  // Compares the source's stored copy of tree node (level, n), if it keeps one, with the
  // recomputed `hash`. Called for every node of the tree of `size` entries in stored-hash
  // order (Go tlog's: after entry n, its leaf and the nodes it completes). kCorrupt names the
  // node on a mismatch; ok when the source keeps no copy (tiles keep levels 0, 8, 16, ...).
  [[nodiscard]] virtual Status check_node(int level, uint64_t n, const Hash& hash,
                                          uint64_t size) = 0;

  // Checks the source's id index (a ledger directory keeps one; others: ok) against `ids`, the
  // event ids of entries [from, from + ids.size()) as the audit computed them: each must have
  // the one record that points at its index. Called for consecutive ranges in index order;
  // finish() then checks that the index holds no other records. On a failure, `failed` is the
  // entry at fault.
  [[nodiscard]] virtual Status check_ids(uint64_t from, std::span<const Digest> ids,
                                         uint64_t& failed) = 0;

  // Whole-source checks once the `size` entries were read (e.g. no extra entries or ids).
  [[nodiscard]] virtual Status finish(uint64_t size) const = 0;

  // The checkpoint the source publishes to readers, for AuditOptions::policy: nullopt means
  // its newest (a tile layout's only one); a ledger directory publishes the witnessed
  // checkpoint `serve --policy` keeps (ledger/witnessing.h), kNotFound when it has none.
  [[nodiscard]] virtual Result<std::optional<std::string>> published_checkpoint() const {
    return std::optional<std::string>();
  }
};

// The audit source of an open ledger directory.
std::unique_ptr<AuditSource> ledger_audit_source(const Ledger& ledger);

struct AuditReport {
  Status status;                         // ok, or the first failure
  std::optional<uint64_t> failed_index;  // the entry at fault, when there is one
  uint64_t entries = 0;                  // entries checked (the newest checkpoint's size)
  uint64_t signatures = 0;               // entry signatures verified
  uint64_t checkpoints = 0;              // checkpoints verified
  uint64_t tree_nodes = 0;               // stored tree nodes compared
  std::array<uint64_t, 8> kinds{};       // entries per EventKind
  uint64_t voided = 0;                   // events void by a compromise (still in the log)
  std::vector<std::pair<uint64_t, std::string>> voided_examples;  // the first few, with causes
  std::string origin;
  std::string root;                      // base64 root of the newest checkpoint
  std::optional<uint64_t> saved_checkpoint_size;  // --from-checkpoint, when given and consistent
  std::optional<uint64_t> witnessed_size;  // with a policy: the published checkpoint's size
  std::vector<Cosignature> witnessed_by;   // and its cosignatures that verified (policy names)
};

struct AuditOptions {
  unsigned threads = 0;  // 0: one per hardware thread
  std::function<void(uint64_t done, uint64_t total)> progress;
  // A pinned log key (--vkey). Without it the audit trusts the genesis's log key, which only
  // shows that the log is self-consistent: pin the key to know it is the log you meant.
  std::optional<VerifierKey> log_key;
  // A checkpoint note the auditor saved earlier (--from-checkpoint): the log must still
  // contain that tree as a prefix.
  std::optional<std::string> saved_checkpoint;
  // A C2SP tlog-policy (--policy): the checkpoint the source publishes must carry its quorum
  // of valid cosignatures (TlogPolicy::verify, which names the witnesses missing or invalid)
  // and be one the log signed at its size; kRejected otherwise.
  std::optional<TlogPolicy> policy;
};

AuditReport audit_log(AuditSource& source, const AuditOptions& options = {});

// audit_log over ledger_audit_source(ledger).
AuditReport audit_ledger(const Ledger& ledger, const AuditOptions& options = {});

// The structure of a ledger directory's LMDB file (<dir>/db/data.mdb), checked with pread()
// before LMDB maps it: LMDB trusts its file, and a damaged one crashes whoever walks it (a
// wild page number is a SIGSEGV, a truncated file a SIGBUS, a wrong page type an assertion).
// Every page LMDB can reach from the meta page it picks is checked (ledger/STORAGE.md lists
// what), so that an audit of a file that passes cannot crash. Call it before opening a ledger
// to audit it. kCorrupt "the database file <dir>/db/data.mdb is damaged at page N (byte offset
// B): what is wrong; the fix"; kIo when the file cannot be read; ok when there is no file
// (opening the ledger then says so).
Status check_ledger_storage(const std::string& dir);

}  // namespace evl
