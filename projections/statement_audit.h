// projections/statement_audit.h — the auditor's check of the signed projection statements.
//
// audit_projection_statements opens every statement a ledger stores (each must verify under
// `key` and state the size it is stored under, within the log), folds the log into a fresh
// in-memory state and compares the digest at each statement's size, then compares the
// projections the ledger serves with the newest statement. It stops at the first mismatch and
// fills the report with the size, the digest expected (folded from the log) and the one found.
// Checkpoints without a statement (signed before statements existed, or by a writer without
// projections) are counted, not failures; so are statements of another projection format (made
// by an evledger that folds the log otherwise), whose signature is still checked. No statement
// of this format at all is kNotFound.
//
// Thread safety: reads the ledger through its own snapshots; the report is the caller's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "keys/key.h"
#include "ledger/ledger.h"
#include "ledger/proofs.h"
#include "projections/digest.h"

namespace evl {

struct StatementAudit {
  Status status;
  uint64_t entries = 0;
  std::vector<std::pair<uint64_t, ProjectionStatement>> statements;  // by size, ascending
  uint64_t checkpoints = 0;
  std::vector<uint64_t> unstated;          // checkpoint sizes without a statement
  // Statements of another projection format, by size: their format line.
  std::vector<std::pair<uint64_t, std::string>> other_format;
  std::string stored_state = "unchecked";  // the stored projections against the newest statement
  std::optional<uint64_t> failed_size;
  std::optional<Digest> expected, found;
};

// One stored statement, as `evledger statement` and the API's statement print it: the note
// verbatim, the size it is stored under, and what it says (of this projection format: origin,
// size, digest; of another: only its format line).
struct StoredStatement {
  std::string note;
  uint64_t size = 0;
  OpenedStatement opened;
};

// The statement of the newest checkpoint, or of the one of exactly `size` entries, its
// signature checked under the genesis's log key. kNotFound saying why there is none (and the
// newest statement's size); kCorrupt when the stored note does not verify or states another
// size (run 'evledger rebuild --check'); the ledger's errors unchanged.
Result<StoredStatement> stored_statement(const Ledger& ledger, std::optional<uint64_t> size);

// {"origin", "size", "digest" (base64), "note"} for a statement of this format, {"format",
// "size", "note"} for one of another, in that order, on one line.
std::string statement_json(const StoredStatement& statement);

// `progress` (optional) is called with the number of entries folded so far.
StatementAudit audit_projection_statements(
    const Ledger& ledger, const VerifierKey& key,
    const std::function<void(uint64_t folded)>& progress = {});

}  // namespace evl
