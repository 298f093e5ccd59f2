// tools/projection_cli.h — reading the projections for the CLI: open a ledger read-only and
// run a query over one snapshot of its projection state.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "events/json.h"
#include "projections/query.h"
#include "ledger/ledger.h"
#include "tools/cli.h"
#include "tools/json_text.h"

namespace evl::cli {

// Opens --ledger read-only and runs `fn` over one snapshot of its projection state
// (read_projections, projections/ledger_hook.h). kRejected when the state does not cover the
// log (a writer has not caught it up yet), saying to run 'evledger rebuild'.
Status with_projections(const Args& args,
                        const std::function<Status(const KeyValueStore& state, uint64_t size)>& fn);
// The same, also handing over the ledger (for checkpoints and the origin).
Status with_projections(
    const Args& args,
    const std::function<Status(const Ledger& ledger, const KeyValueStore& state, uint64_t size)>&
        fn);

// Runs and groups are named on the command line as projections/query.h's parse_run_prefix and
// parse_group_prefix take them, and resolved there (resolve_run, resolve_group).

}  // namespace evl::cli
