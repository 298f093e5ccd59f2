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

// Compact canonical JSON of a value (one line).
std::string json_line(const Json& value);

// A member as text for a terminal: strings bare with control characters made visible
// (visible_text, events/utf8.h), numbers in JCS form, null as "-".
std::string text_of(const Json* value);

// A digest's text cut after its first `hex_digits` hex digits and ended with kEllipsis
// ("sha256:0012c2de8659…"), as the listings and the run page print digests; shorter text ("-")
// whole.
std::string short_digest(std::string text, size_t hex_digits);

// `text` followed by spaces up to `width` characters (UTF-8: "µ" and "…" count one each); text
// as long or longer is returned whole.
std::string padded(std::string text, size_t width);

}  // namespace evl::cli
