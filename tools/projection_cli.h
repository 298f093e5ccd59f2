// tools/projection_cli.h — reading the projections for the CLI: open a ledger read-only and
// run a query over one snapshot of its projection state.
#pragma once

#include <functional>
#include <string>

#include "events/json.h"
#include "ledger/ledger.h"
#include "tools/cli.h"

namespace evl::cli {

// Opens --ledger read-only and runs `fn` over its projection state. kRejected when the state
// does not cover the log (a writer has not caught it up yet): run 'evledger rebuild'.
Status with_projections(const Args& args,
                        const std::function<Status(const KeyValueStore& state, uint64_t size)>& fn);
// The same, also handing over the ledger (for checkpoints and the origin).
Status with_projections(
    const Args& args,
    const std::function<Status(const Ledger& ledger, const KeyValueStore& state, uint64_t size)>&
        fn);

// Parses "sha256:<hex>" or a unique hex prefix is not supported: the full digest text.
Result<Digest> digest_arg(const std::string& text, const std::string& what);

// Compact canonical JSON of a value (one line).
std::string json_line(const Json& value);

// A member as text: strings bare, numbers in JCS form, null as "-".
std::string text_of(const Json* value);

}  // namespace evl::cli
