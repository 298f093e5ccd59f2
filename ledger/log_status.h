// ledger/log_status.h — what `evledger status` shows an operator about a log, a server or a
// mirror, on one screen: the log's size, the checkpoint it publishes and its age, the
// cosignatures on it per witness, and the lag behind an upstream.
//
// Sources: a URL (its /checkpoint, and /healthz for the log's own size when it serves one), or
// a ledger directory (its newest checkpoint, and the witnessed one `serve --policy` keeps in
// DIR/witnessing/checkpoint, which is then the published one). The age of a checkpoint is
// the time since its newest cosignature (checkpoints carry no time of their own; with no
// cosignature it is unknown). With a policy every cosignature line is verified and the quorum
// decided (TlogPolicy::evaluate); without one the lines are listed as unverified, and the log's
// signature is checked only when its key is known (a ledger's genesis, --vkey).
//
// Errors: kIo when the source cannot be read (a URL that does not answer), kRejected when the
// checkpoint is not a signed checkpoint note or its log signature does not verify.
//
// Thread safety: pure functions of their inputs (and the network or the ledger they read).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "keys/tlog_policy.h"
#include "ledger/ledger.h"

namespace evl {

enum class CosignatureState { kValid, kInvalid, kMissing, kUnverified };
std::string_view cosignature_state_name(CosignatureState state);  // "valid", ...

struct WitnessCosignature {
  std::string witness;  // the policy's name, or (without a policy) the line's key name
  CosignatureState state = CosignatureState::kUnverified;
  uint64_t time = 0;    // unix seconds the line claims (0 when missing)
};

struct LogStatus {
  std::string source;                  // the URL or "ledger DIR"
  std::optional<uint64_t> log_size;    // the log's own newest checkpoint size, when known
  std::optional<Checkpoint> published; // the checkpoint readers get; nullopt: none yet
  std::string published_note;          // verbatim
  std::string unpublished_reason;      // why there is none (a server's 503 before a quorum)
  bool log_signature_checked = false;  // the log's signature was verified under a known key
  bool witnessed = false;              // a ledger: the note is its witnessed publication
  std::vector<WitnessCosignature> cosignatures;
  std::optional<uint64_t> age_seconds;  // now minus the newest cosignature's time
  std::optional<bool> quorum;           // with a policy: whether the note meets it
  std::string quorum_detail;            // TlogPolicy::verify's message when it does not
  std::string upstream;                 // with an upstream: its URL and size
  std::optional<uint64_t> upstream_size;
};

struct StatusOptions {
  std::optional<TlogPolicy> policy;
  std::optional<VerifierKey> log_key;  // checks the log's signature (a ledger's genesis key else)
  std::string upstream;                // a URL whose /checkpoint size gives the lag
  uint64_t now = 0;                    // unix seconds; 0: the system clock
};

Result<LogStatus> url_status(const std::string& url, const StatusOptions& options);
Result<LogStatus> ledger_status(const Ledger& ledger, const StatusOptions& options);

}  // namespace evl
