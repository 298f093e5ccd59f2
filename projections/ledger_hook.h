// projections/ledger_hook.h — the projections kept by the ledger, in its append transactions.
//
// make_projection_hook() gives the AppendHook that feeds every appended entry to the
// Projector, with the author's name and scope from the key state at that position and the
// void cause the key policy gives. A compromise that voids earlier events makes the hook
// rebuild the whole state from the log (in the same transaction), so the incremental state
// always equals a fresh fold of the same prefix: each event is folded with its author as the
// key state at its position knew it (names, scopes) and its void cause as the key state of the
// whole prefix gives it. A rebuild folds the whole log in memory and writes each record once;
// each appended entry writes what it changed in the append transaction.
//
// Thread safety: called by the ledger's writer only.
#pragma once

#include <cstdint>
#include <memory>

#include "ledger/append_hook.h"

namespace evl {

struct ProjectionHookOptions {
  // A rebuild keeps the records of this many events in memory (about 5 KB per event of a
  // catalog), then writes them and drops them: its memory is bounded whatever the log's length.
  uint64_t rebuild_batch_events = 16384;
};

std::shared_ptr<AppendHook> make_projection_hook(const ProjectionHookOptions& options = {});

}  // namespace evl
