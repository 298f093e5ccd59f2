// ledger/mirror.h — `evledger mirror`: brings a mirror ledger (OpenOptions::mirror_of) up to
// its upstream's newest checkpoint, verifying everything on the way in.
//
// One pull: the upstream's checkpoint must verify under the mirrored key (and, with a policy,
// carry its quorum of cosignatures); it must be consistent with the checkpoint the mirror last
// verified (its newest stored one, or the target of a pull that was interrupted). Then the
// entries the mirror lacks are fetched in parallel and stored, at most kMirrorChunkEntries at a
// time (fewer as the mirror grows: Ledger::upstream_batch_entries bounds the pages a
// transaction dirties, so a pull's memory stays flat), by Ledger::append_upstream: each chunk
// is checked as the audit checks entries and proved part of the signed tree (its root leads
// to the checkpoint's along the upstream's consistency path),
// so an interrupted pull resumes after the last stored chunk without fetching it again. Each
// chunk's checks (signatures, on all cores) run while the chunk before is stored, on a thread
// of its own, so that they overlap its single-threaded transaction and durable commit. The
// last chunk stores the checkpoint and the upstream's projection statement of that size (when
// it serves one), which must match the mirror's own fold.
//
// A split view (the upstream now shows a checkpoint that is not consistent with one verified
// before) is written as evidence (ledger/split_view.h) under <mirror>/evidence/ and ends the
// pull with kRejected naming the file.
//
// Thread safety: one pull at a time per mirror; fetching threads run inside the call.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "keys/tlog_policy.h"
#include "ledger/ledger.h"
#include "ledger/upstream.h"

namespace evl {

inline constexpr size_t kMirrorChunkEntries = 8192;

struct MirrorOptions {
  VerifierKey log_key;               // the upstream's log key (the mirror's mirror_of)
  std::optional<TlogPolicy> policy;  // --policy: demand the witnessed quorum
  size_t chunk_entries = kMirrorChunkEntries;  // the most entries of one transaction
  size_t window_bundles = 96;        // bundles fetched ahead of the verification
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct MirrorReport {
  Status status;                   // ok, or why the pull stopped (nothing after it is stored)
  uint64_t previous_size = 0;      // entries held before the pull
  uint64_t size = 0;               // entries held after it
  uint64_t upstream_size = 0;      // the size of the upstream's checkpoint
  bool statement_checked = false;  // the upstream's statement matched the mirror's fold
  std::optional<std::string> evidence;  // the split-view evidence file written, if any
};

MirrorReport pull_upstream(Ledger& mirror, Upstream& upstream, const MirrorOptions& options);

}  // namespace evl
