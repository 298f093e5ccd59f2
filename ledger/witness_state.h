// ledger/witness_state.h — a witness's memory (c2sp.org/tlog-witness): for each log origin,
// the latest checkpoint it cosigned, in an LMDB environment of its own under DIR/db, changed
// only by an atomic, durable compare-and-store.
//
// An update names the size the submitter believes the witness holds (old), a consistency
// proof from there, and the new checkpoint, already opened under a trusted key of its origin
// (ledger/witness.h does that). The single writer thread takes the updates queued meanwhile,
// and in ONE write transaction, for each in order: reads the latest record of its origin (as
// this transaction left it, so two updates of one origin in one batch see each other), decides
// (decide_update), cosigns and stores; then commits durably (fsync) and only then answers each.
// So a cosignature is never returned for a state that is not on disk, two racing updates from
// the same old size cannot both win, a cosigned size never shrinks and one size never gets two
// roots. Updates for many origins share one commit, which is what bounds the rate by fsync
// per batch, not per update.
//
// Cosignature times (unix seconds, cosignature/v1) are the clock's, but never 0 and never
// before the time of the origin's previous cosignature, even if the clock steps back.
//
// Storage (ledger/STORAGE.md, "Witness state"): databases `meta` (format
// evledger-witness-v1; another is refused) and `latest`: SHA-256(origin) → u8 1 ‖ u64be time ‖
// the cosigned note (the checkpoint, the log signatures that verified, the witness's line).
// One process at a time (a flock on DIR/db/writer.lock).
//
// Errors: open() is kIo when DIR cannot be made, locked or opened, kCorrupt for a foreign
// format. latest() is kCorrupt for a record that does not parse, kIo for LMDB failures.
//
// Thread safety: submit(), update() and latest() may be called from any thread. `done`
// callbacks run on the writer thread and must not destroy the WitnessState.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "keys/note.h"
#include "ledger/merkle.h"

namespace evl {

struct WitnessedCheckpoint {
  Checkpoint checkpoint;
  uint64_t time = 0;  // of the witness's cosignature on it
  std::string note;   // the cosigned note: what the monitoring endpoint serves
};

struct CheckpointUpdate {
  uint64_t old_size = 0;
  std::vector<Hash> proof;                    // consistency proof from old_size
  Checkpoint checkpoint;                      // opened under a trusted key of its origin
  std::vector<NoteSignature> log_signatures;  // the log's lines that verified, kept in the note
};

enum class UpdateVerdict {
  kCosigned,      // stored durably; the cosignature is the witness's answer (200)
  kOldTooLarge,   // old size beyond the checkpoint's size (400)
  kConflict,      // old size is not the latest cosigned size; latest_size is (409)
  kInconsistent,  // a failing proof, a proof from 0, another root at the same size, or a size
                  // 0 whose root is not the empty tree's (422)
  kBusy,          // the queue is full or closing (503): resend later
  kFailed,        // the store failed (500): nothing was stored or answered as stored
};

struct UpdateOutcome {
  UpdateVerdict verdict = UpdateVerdict::kFailed;
  uint64_t latest_size = 0;    // kConflict: the witness's size for the origin
  NoteSignature cosignature;   // kCosigned
  uint64_t time = 0;           // kCosigned: the cosignature's time
  Status status;               // all but kCosigned: why, in the CLI's words
  // kInconsistent for another root at the cosigned size: the cosigned note it contradicts,
  // which with the refused one proves that the log signed two trees of one size.
  std::string contradicted;
};

// The compare of compare-and-store, pure: may `update` be cosigned, given the origin's latest
// cosigned checkpoint (nullopt: none, which counts as size 0)? kCosigned or the verdict that
// refuses it (never kBusy or kFailed).
UpdateOutcome decide_update(const std::optional<Checkpoint>& latest,
                            const CheckpointUpdate& update);

// The cosignature time for a cosignature made now: max(now, previous, 1), at most
// kMaxCosignatureTime.
uint64_t next_cosignature_time(uint64_t now, std::optional<uint64_t> previous);

struct WitnessStateOptions {
  std::string dir;
  std::shared_ptr<const SecretKey> cosigner;  // signs under type 0x04 (cosign_checkpoint)
  std::function<uint64_t()> clock;            // unix seconds; the system clock when empty
  size_t max_queued = 4096;                   // updates waiting for the writer; then kBusy
  size_t max_batch = 1024;                    // updates in one write transaction
};

struct WitnessStateStats {
  uint64_t commits = 0;  // durable write transactions that stored at least one update
  uint64_t stored = 0;   // updates cosigned and stored
};

class WitnessState {
 public:
  using Done = std::function<void(UpdateOutcome)>;

  static Result<std::unique_ptr<WitnessState>> open(WitnessStateOptions options);
  // Answers every queued update, then stops the writer.
  virtual ~WitnessState() = default;

  // Queues a compare-and-store; `done` gets its outcome after the commit (or kBusy at once,
  // on this thread, when the queue is full or closing). Exactly one call per submit.
  virtual void submit(CheckpointUpdate update, Done done) = 0;
  // submit() and wait.
  UpdateOutcome update(CheckpointUpdate update);

  // The latest cosigned checkpoint of an origin, or nullopt; read in its own snapshot.
  virtual Result<std::optional<WitnessedCheckpoint>> latest(const std::string& origin) const = 0;
  // The same by SHA-256(origin), the monitoring endpoint's key.
  virtual Result<std::optional<WitnessedCheckpoint>> latest_by_hash(
      const Digest& origin_hash) const = 0;

  virtual WitnessStateStats stats() const = 0;
};

}  // namespace evl
