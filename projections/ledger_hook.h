// projections/ledger_hook.h — the projections kept by the ledger, in its append transactions.
//
// make_projection_hook() gives the AppendHook that feeds every appended entry to the
// Projector, with the author's name and scope from the key state at that position and the
// void cause the key policy gives. A compromise that voids earlier events makes the hook
// rebuild the whole state from the log (in the same transaction), so the incremental state
// always equals a fresh fold of the same prefix: each event is folded with its author as the
// key state at its position knew it (names, scopes) and its void cause as the key state of the
// whole prefix gives it. A rebuild folds the log in batches, decoding and preparing the entries
// on a second thread and on its own when it would wait (projections/internal/log_scan.h), and
// writes each changed record once per batch; each appended entry writes
// what it changed in the append transaction. The ledger's checking threads prepare each
// appended manifest (AppendHook::prepare), and a seal serializes run views and hashes changed
// records on a pool of its own.
//
// The hook keeps the projection digest (projections/digest.h) as it goes: every write of the
// fold passes through a DigestedStore (projections/digested_store.h), and seal() folds the
// changed records into the sums, stores them in the "projection_sums" database (one record,
// "sums": u64be(projected size) ‖ the serialized accumulator; not part of the state, so not
// digested) and returns projection_statement(origin, size, digest). Sums that are missing,
// damaged or of another size than the state are recomputed by one full scan. A rebuild, and
// the refold after a compromise, write the state from nothing through a SummingStore, which
// keeps the sums as they write: their seal reads nothing back.
//
// Thread safety: the hook is called by the ledger's writer only (prepare() by its checking
// threads); the threads a rebuild starts end before it returns, and the pool that serializes
// and hashes for a seal lives as long as the hook. fold_projection_digests is a pure function
// of the log it reads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "events/sha256.h"
#include "ledger/append_hook.h"
#include "ledger/ledger.h"
#include "projections/manifests.h"
#include "projections/store.h"

namespace evl {

struct ProjectionHookOptions {
  // A rebuild keeps the records of a batch of events in memory (about 5 KB per event of a
  // catalog), then writes them and drops them: its memory is bounded whatever the log's length.
  // A batch is a sixteenth of the log, at least rebuild_batch_events and at most
  // rebuild_batch_events_max events. On a long log, fewer and larger batches write more
  // records into each B-tree page they touch and reread fewer forgotten ones: a rebuild of
  // 10^6 catalog events took 30 s in batches of 16,384 and 25.7 s in batches of 65,536, with
  // the same peak memory (LMDB's dirty pages, capped per transaction, dominate it there).
  uint64_t rebuild_batch_events = 16384;
  uint64_t rebuild_batch_events_max = 65536;
  // A log of at most this many events folds in one batch, whose records are then written in
  // key order into the empty state: the store appends them (KeyValueStore::
  // expect_ascending_writes) and fills its pages. A catalog of 20,502 events rebuilt in about
  // 4% less time as one batch than as two, at 12 MB more peak memory, and appending took about
  // 4% more off. At 97,902 events one batch took 10-13% less wall time than batches of a
  // sixteenth and left 42,136 leaf pages instead of 58,834, at a peak of about 500 MB instead
  // of 370-400 (724 MB at 131,000 events): twice the largest batch of a longer log. Longer
  // logs fold in batches, and those do not append: the full pages of a first batch would
  // split on every insert of the batches after it (7% slower at 96,502 events).
  uint64_t rebuild_one_batch_max = 131072;
  // Told how far a rebuild has folded (`folded` of `total` entries), on the rebuilding thread,
  // every few hundred entries and at the end of each pass over the log; null tells nobody.
  // A rebuild passes over the log twice when a compromise voids earlier events.
  std::function<void(uint64_t folded, uint64_t total)> rebuild_progress;
};

std::shared_ptr<AppendHook> make_projection_hook(const ProjectionHookOptions& options = {});

// The manifests that the events of `ledger`'s log register (the registry is the log: the
// ledger's manifests index, the entries it names and the void causes of the ledger's current
// keys), for read_run_view (query.h). Reads through the ledger's own snapshots; the ledger must
// outlive it.
std::unique_ptr<ManifestLookup> log_manifests(const Ledger& ledger);

// Runs `fn` over one read snapshot of the projections `ledger` keeps, with the log's size in
// that snapshot, when they cover the whole of it: what every reader of the projections (the
// CLI's listings, the server's API) reads. Otherwise kRejected "the projections cover A of S
// entries" and `*lagging` (optional) is set: a writer has not caught them up yet (any append
// or 'evledger rebuild' does). `fn`'s errors unchanged.
[[nodiscard]] Status read_projections(
    const Ledger& ledger,
    const std::function<Status(const ProjectionStore& state, uint64_t size)>& fn,
    bool* lagging = nullptr);

// The auditor's fold: folds the log of `ledger` from index 0 into a fresh in-memory state,
// exactly as the hook keeps it (a compromise refolds), and calls `visit(n, digest)` with the
// projection digest of the state of n entries for each n of `sizes` (strictly ascending, at
// most the log's size). kUsage when the sizes do not ascend; kCorrupt when an entry does not
// decode; the visitor's and the ledger's errors unchanged.
[[nodiscard]] Status fold_projection_digests(
    const Ledger& ledger, std::span<const uint64_t> sizes,
    const std::function<Status(uint64_t size, const Digest& digest)>& visit);

}  // namespace evl
