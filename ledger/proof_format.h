// ledger/proof_format.h — offline proofs as documents, and their verification from the document
// alone (plus the entry and the log's verifier key): no ledger, no network.
//
// Inclusion, C2SP tlog-proof (c2sp.org/tlog-proof), file extension .tlog-proof:
//
//   c2sp.org/tlog-proof@v1\n
//   [extra <base64 of opaque, unauthenticated data>\n]        only when there is extra data
//   index <decimal, no leading zeros>\n
//   <base64 hash>\n ...                   RFC 6962 PATH, the leaf's sibling first (0 or more)
//   \n
//   <the signed tlog-checkpoint note, verbatim, cosignatures included>
//
// JSON, for scripts (one object, UTF-8; numbers are integers of at most 2^53, as I-JSON says):
//
//   {"type":"inclusion","index":I,"size":S,"leafHash":"<b64>","hashes":["<b64>",...],
//    "checkpoint":"<note of size S>"[,"extra":"<b64>"]}
//   {"type":"consistency","from":M,"to":N,"hashes":[...],"checkpoint":"<note of size N>"}
//
// Parsing is strict and checks structure only: every hash 32 bytes of standard padded base64,
// the checkpoint a well-formed signed note whose body is a checkpoint (and, in JSON, of the
// stated size). Trust comes from the verify_* functions, which check the log's signature.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "events/bytes.h"
#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "ledger/merkle.h"

namespace evl {

inline constexpr std::string_view kTlogProofHeader = "c2sp.org/tlog-proof@v1";
// Security limits for parsing untrusted proofs: a tree of at most 2^64 entries needs at most 64
// hashes in either kind of proof, and no honest proof document comes near 1 MiB.
inline constexpr size_t kMaxProofHashes = 64;
inline constexpr size_t kMaxProofDocumentBytes = size_t{1} << 20;

struct InclusionProofDoc {
  uint64_t index = 0;
  std::vector<Hash> hashes;     // inclusion proof in the checkpoint's tree
  std::string checkpoint_note;  // the signed checkpoint, verbatim
  // tlog-proof's optional extra data: opaque and unauthenticated. Empty means none (the line is
  // then omitted, as the spec says).
  Bytes extra;
  // The leaf hash the proof claims to be for. The JSON form states it (and needs it: formatting
  // JSON without it is a bug); tlog-proof does not, so parsing one leaves it empty and
  // formatting one drops it. Verification checks it against the entry when present.
  std::optional<Hash> leaf_hash;
  friend bool operator==(const InclusionProofDoc&, const InclusionProofDoc&) = default;
};

struct ConsistencyProofDoc {
  uint64_t from = 0;            // the older tree size, >= 1
  uint64_t to = 0;              // the newer tree size, the checkpoint's
  std::vector<Hash> hashes;     // consistency proof from `from` to `to`
  std::string checkpoint_note;  // the signed checkpoint of size `to`, verbatim
  friend bool operator==(const ConsistencyProofDoc&, const ConsistencyProofDoc&) = default;
};

using ProofDoc = std::variant<InclusionProofDoc, ConsistencyProofDoc>;

// ---- C2SP tlog-proof ----------------------------------------------------------------------

std::string format_tlog_proof(const InclusionProofDoc& proof);

// Strict: the header line; an optional non-empty "extra" line; "index N"; hash lines; one blank
// line; a signed note with a checkpoint body (signatures not checked here). Only "\n" line ends.
// kRejected naming the line and the rule otherwise; at most kMaxProofHashes hashes and
// kMaxProofDocumentBytes bytes.
Result<InclusionProofDoc> parse_tlog_proof(std::string_view text);

// ---- JSON -------------------------------------------------------------------------------------

// Preconditions (EVL_ASSERT): the note is a well-formed checkpoint note (the size is read from
// it), leaf_hash is set, and the numbers are at most 2^53.
std::string format_inclusion_proof_json(const InclusionProofDoc& proof);
// Precondition (EVL_ASSERT): the numbers are at most 2^53.
std::string format_consistency_proof_json(const ConsistencyProofDoc& proof);

// Strict (events/json.h's parser: no duplicate keys, I-JSON); every listed member required
// (only "extra" is optional), no other member; "size" and "to" must equal the checkpoint's size.
// kRejected naming the member otherwise.
Result<ProofDoc> parse_proof_json(std::string_view text);

// Either form, told apart by the first line: tlog-proof or a JSON object.
Result<ProofDoc> parse_proof(std::string_view text);

// ---- verification -------------------------------------------------------------------------

struct VerifiedInclusion {
  uint64_t index = 0;
  Hash leaf_hash{};
  Checkpoint checkpoint;  // opened with the log key: origin, size, root
};

struct VerifiedConsistency {
  Checkpoint old_checkpoint;
  Checkpoint new_checkpoint;
};

// Ok when the checkpoint note carries a valid signature by `log_key` (whose name is the origin),
// the index is below its size, the proof's stated leaf hash (if any) is `leaf`, and the hashes
// lead from `leaf` at `index` to the checkpoint's root. kRejected with the failing rule.
[[nodiscard]] Result<VerifiedInclusion> verify_inclusion_proof(const InclusionProofDoc& proof,
                                                               const Hash& leaf,
                                                               const VerifierKey& log_key);

// Verifies the receipts of many entries of one log (the tlog-proofs a server answers an append
// with), opening each distinct checkpoint note once: the receipts of one commit share one, so a
// batch costs one signature check per commit, not one per entry. Ok when `receipt` is a
// tlog-proof that `entry` is at `index` in a checkpoint signed by the log key; kRejected with
// the failing rule otherwise. Thread safety: one thread at a time.
class ReceiptVerifier {
 public:
  explicit ReceiptVerifier(VerifierKey log_key) : log_key_(std::move(log_key)) {}
  [[nodiscard]] Status verify(std::string_view receipt, ByteView entry, uint64_t index);
  const VerifierKey& log_key() const { return log_key_; }

 private:
  VerifierKey log_key_;
  std::string note_;                  // the last checkpoint note opened
  std::optional<Checkpoint> opened_;  // and what it says
};

// Ok when both notes (the proof's and `old_checkpoint_note`) are checkpoints signed by
// `log_key`, of sizes `from` and `to`, and the hashes show the newer tree extends the older.
// kRejected with the failing rule.
[[nodiscard]] Result<VerifiedConsistency> verify_consistency_proof(
    const ConsistencyProofDoc& proof, std::string_view old_checkpoint_note,
    const VerifierKey& log_key);

}  // namespace evl
