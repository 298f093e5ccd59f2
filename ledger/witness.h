// ledger/witness.h — a C2SP tlog witness (c2sp.org/tlog-witness) for any C2SP log: the logs it
// trusts, the checks of an add-checkpoint request, and its state (ledger/witness_state.h).
// What `evledger witness serve` answers over HTTP; the server maps each verdict to the spec's
// status and nothing else.
//
// add_checkpoint checks a request in the spec's order and answers with the first rule broken:
//   kMalformed     400  the body is not an add-checkpoint request, the note or its checkpoint
//                       body does not parse, or old > the checkpoint's size
//   kUnknownLog    404  no trusted key for the checkpoint's origin
//   kForbidden     403  no signature by a trusted key of the origin, or such a key's line (same
//                       name and key id) does not verify; other keys' lines are ignored
//   kConflict      409  old is not the size the witness cosigned last; `body` is "<size>\n"
//   kInconsistent  422  the proof fails, a proof from 0, another root at the cosigned size, or
//                       a size-0 checkpoint whose root is not the empty tree's. Another root
//                       at the cosigned size is a split view that the two signed notes prove:
//                       the witness writes them as evidence (ledger/split_view.h) under
//                       DIR/evidence/ and names the file in the message.
//   kCosigned      200  stored durably; `body` is the witness's cosignature line
//   kBusy          503  the state's queue is full or closing; resend
//   kFailed        500  the state could not be stored; nothing was cosigned
// Signatures are checked on the calling thread (many I/O threads verify at once); the
// compare-and-store runs on the state's single writer.
//
// Thread safety: add_checkpoint and checkpoint_note may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "events/sha256.h"
#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "ledger/witness_state.h"

namespace evl {

enum class WitnessVerdict {
  kCosigned, kMalformed, kUnknownLog, kForbidden, kConflict, kInconsistent, kBusy, kFailed
};

struct WitnessAnswer {
  WitnessVerdict verdict = WitnessVerdict::kFailed;
  std::string body;     // kCosigned: the cosignature line(s); kConflict: "<size>\n"
  std::string message;  // every other verdict: why, naming the rule (and for kConflict too)
  uint64_t latest_size = 0;  // kConflict
};

struct WitnessOptions {
  std::string dir;                            // the state (ledger/witness_state.h)
  std::shared_ptr<const SecretKey> key;       // the witness's key: cosigns under type 0x04
  std::vector<VerifierKey> logs;              // trusted log keys; each one's name is its origin
  std::function<uint64_t()> clock;            // unix seconds; the system clock when empty
  size_t max_queued = 4096;                   // see WitnessStateOptions
  // Called with the log's origin and the evidence file's path for each split view proved
  // (on the state's writer thread), for the operator's log.
  std::function<void(const std::string& origin, const std::string& path)> on_split_view;
};

class Witness {
 public:
  using Done = std::function<void(WitnessAnswer)>;

  // kUsage for no log, or two trusted keys of one name and key id (they could not be told
  // apart in a signature line); the state's errors otherwise.
  static Result<std::unique_ptr<Witness>> open(WitnessOptions options);

  // Answers one request body; `done` runs exactly once: on this thread when the answer needs
  // no state (400, 403, 404, 503), else on the state's writer after its commit.
  void add_checkpoint(std::string_view body, Done done) const;
  // The same, waiting for the answer.
  WitnessAnswer add_checkpoint(std::string_view body) const;

  // The monitoring endpoint: the latest cosigned note of the origin whose SHA-256 is
  // `origin_hash` (its log signatures and this witness's cosignature); kNotFound when it
  // never cosigned one.
  Result<std::string> checkpoint_note(const Digest& origin_hash) const;

  const CosignerKey& cosigner() const { return cosigner_; }
  const std::map<std::string, std::vector<VerifierKey>>& logs() const { return logs_; }
  WitnessState& state() const { return *state_; }

 private:
  Witness() = default;

  // A refused update's answer; with the note it contradicts, the evidence is written first.
  WitnessAnswer answer_of(const UpdateOutcome& outcome, const std::string& origin,
                          const std::string& note) const;

  CosignerKey cosigner_;
  std::string dir_;
  std::function<void(const std::string&, const std::string&)> on_split_view_;
  std::map<std::string, std::vector<VerifierKey>> logs_;  // by origin
  std::unique_ptr<WitnessState> state_;
};

// The verdict of a state outcome.
WitnessVerdict witness_verdict(UpdateVerdict verdict);

}  // namespace evl
