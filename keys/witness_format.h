// keys/witness_format.h — the bodies of C2SP tlog-witness (c2sp.org/tlog-witness), parsed and
// written; pure, no I/O, no verification (ledger/witness.h decides what a request means).
//
//   POST <prefix>/add-checkpoint   request body:
//     old <size>\n                       decimal, no leading zeros ("0" for none)
//     <base64 hash>\n                    0 to 63 consistency-proof lines, 32-byte hashes
//     \n                                 an empty line
//     <signed checkpoint note>           c2sp.org/tlog-checkpoint, verbatim to the end
//   200 body   one or more cosignature lines "— <name> <base64(key id ‖ signature)>\n"
//   409 body   "<size>\n", Content-Type text/x.tlog.size: the witness's latest size
//
// Security limits: a request body is at most kMaxAddCheckpointBody bytes and holds at most
// kMaxConsistencyProofLines proof lines (the spec's bound: no tree has a longer proof); the
// checkpoint note in it is bounded by keys/note.h's kMaxNoteSignatures.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/sha256.h"
#include "events/status.h"
#include "keys/note.h"

namespace evl {

inline constexpr size_t kMaxConsistencyProofLines = 63;
// Room for the old line, 63 proof lines (2.8 KiB) and a checkpoint carrying the 16 signatures
// a note verifier must accept even when they are ML-DSA-44 cosignatures (about 3.3 KiB each
// in base64), with a long origin and extension lines to spare.
inline constexpr size_t kMaxAddCheckpointBody = 64 * 1024;
inline constexpr std::string_view kTlogSizeContentType = "text/x.tlog.size";

struct AddCheckpointRequest {
  uint64_t old_size = 0;
  std::vector<Digest> proof;  // the consistency proof from old_size to the checkpoint's size
  std::string checkpoint;     // the signed checkpoint note, verbatim (not checked here)
  friend bool operator==(const AddCheckpointRequest&, const AddCheckpointRequest&) = default;
};

// Strict: the old line exactly "old <decimal>", each proof line standard padded base64 of 32
// bytes, at most 63 of them, then an empty line and a non-empty rest (the note, whose own rules
// are keys/note.h's). kRejected naming the line and the rule otherwise, and for a body over
// kMaxAddCheckpointBody.
Result<AddCheckpointRequest> parse_add_checkpoint_request(std::string_view body);

// The body of a request. Precondition: at most 63 proof hashes (EVL_ASSERT); the checkpoint is
// written as given.
std::string format_add_checkpoint_request(const AddCheckpointRequest& request);

// "<size>\n": the body of a 409 answer.
std::string format_tlog_size(uint64_t size);
// The size of a 409 body: exactly one decimal line. kRejected otherwise.
Result<uint64_t> parse_tlog_size(std::string_view body);

// The body of a 200 answer: one note signature line per cosignature, in order.
std::string format_cosignature_lines(std::span<const NoteSignature> cosignatures);
// Parses a 200 body: one or more signature lines (keys/note.h's rules for each, at most
// kMaxNoteSignatures), nothing else. Whether they verify is the caller's question: append them
// to the checkpoint note and open it with the witnesses' keys (keys/checkpoint.h).
Result<std::vector<NoteSignature>> parse_cosignature_lines(std::string_view body);

}  // namespace evl
