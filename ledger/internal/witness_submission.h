// ledger/internal/witness_submission.h — one add-checkpoint exchange with one witness
// (c2sp.org/tlog-witness), for ledger/witnessing.cpp: the request with the consistency proof
// from `old`, and what the answer means. Retries, backoff and rounds are the caller's.
//
// Thread safety: a pure function of its arguments, the network and the ledger's snapshots.
#pragma once

#include <cstdint>
#include <string>

#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/http_client.h"
#include "ledger/ledger.h"
#include "ledger/witnessing.h"

namespace evl {

struct Attempt {
  SubmissionOutcome outcome = SubmissionOutcome::kFailed;
  NoteSignature cosignature;  // kCosigned: its line, verified under the witness's key
  uint64_t size = 0;          // kConflict: the size the witness holds (its 409 body)
  std::string error;          // every other outcome: what the witness answered, or why not
};

// Sends `note` (the checkpoint's signed note) with the proof from `old` (none from 0 or from
// the checkpoint's own size). 200 counts only with a line of `witness` that verifies; 409 only
// with a text/x.tlog.size body; other 4xx are kRefused, 5xx and no answer kFailed.
Attempt submit_checkpoint(HttpClient& client, const Ledger& ledger, const CosignerKey& witness,
                          uint64_t old, const Checkpoint& checkpoint, const std::string& note);

}  // namespace evl
