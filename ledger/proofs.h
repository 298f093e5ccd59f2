// ledger/proofs.h — proofs made from a ledger's stored tree, as the documents of
// ledger/proof_format.h: what `evledger proof`, the server's proof API and the receipts of
// `POST /add-event` hand out. One function per kind, so that every front end proves the same way.
//
// Everything handed out is checked first against the ledger's own signed checkpoint: a proof
// that does not verify means the stored tree disagrees with its entries or checkpoints, which
// is kCorrupt (run evledger verify), never a document given to a client.
//
// Errors: kNotFound when the log has no checkpoint of the size asked for (one is signed per
// commit, at the size where it ended) or the entry is not in that tree; kUsage for sizes that
// make no sense (a consistency proof from 0, or from beyond the newer size); kCorrupt as above;
// the ledger's own errors unchanged.
//
// Thread safety: each call reads in its own snapshots; the ledger may be appended to meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/checkpoint.h"
#include "keys/key.h"
#include "ledger/ledger.h"
#include "ledger/proof_format.h"

namespace evl {

struct StoredCheckpoint {
  std::string note;       // the signed note, verbatim
  Checkpoint checkpoint;  // opened with the genesis's log key
  VerifierKey log_key;
};

// The size of the newest stored checkpoint, read without checking its signature (for
// messages); nullopt when there is none or it does not parse.
std::optional<uint64_t> newest_checkpoint_size(const Ledger& ledger);

// The newest checkpoint, or the one of exactly `size` entries, verified under the genesis's log
// key (a stored checkpoint that does not verify is kCorrupt).
Result<StoredCheckpoint> stored_checkpoint(const Ledger& ledger,
                                           std::optional<uint64_t> size = std::nullopt);

// {"origin", "size", "root" (base64), "note"}, in that order, on one line: a checkpoint as
// `evledger checkpoint --json` and the API's checkpoints listing show it.
std::string checkpoint_json(const StoredCheckpoint& checkpoint);

// The stored checkpoints of at least `from_size` entries, oldest first, at most `limit` of
// them, each opened as stored_checkpoint() opens one (kCorrupt for one that does not verify),
// read in one snapshot; `next` is the size of the one after them, if any.
struct CheckpointPage {
  std::vector<StoredCheckpoint> checkpoints;
  std::optional<uint64_t> next;
};
Result<CheckpointPage> stored_checkpoints(const Ledger& ledger, uint64_t from_size, size_t limit);

struct ProvenInclusion {
  InclusionProofDoc proof;
  Checkpoint checkpoint;  // the proof's checkpoint, opened: origin, size, root
};

// The inclusion proof of entry `index` in the checkpoint of `size` (the newest by default),
// with the entry's leaf hash, checked against the entry's stored bytes.
Result<ProvenInclusion> prove_inclusion(const Ledger& ledger, uint64_t index,
                                        std::optional<uint64_t> size = std::nullopt);

// Inclusion proofs of many entries in the checkpoint of exactly `size`, made in one snapshot of
// the tree (the receipts of a commit): one per index, in order. Leaf hashes come from the
// stored tree; each proof is checked against the checkpoint.
Result<std::vector<InclusionProofDoc>> prove_inclusions(const Ledger& ledger,
                                                        std::span<const uint64_t> indexes,
                                                        uint64_t size);

// The consistency proof from the tree of `from` entries to the checkpoint of `to` (the newest
// by default).
Result<ConsistencyProofDoc> prove_consistency(const Ledger& ledger, uint64_t from,
                                              std::optional<uint64_t> to = std::nullopt);

}  // namespace evl
