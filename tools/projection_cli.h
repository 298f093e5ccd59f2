// tools/projection_cli.h — reading the projections for the CLI: open a ledger read-only and
// run a query over one snapshot of its projection state.
#pragma once

#include <functional>
#include <string>
#include <string_view>

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

// The hex digits of a run named on the command line: a digest, or the start of one as `runs`
// prints it ("sha256:0012c2de8659…"; the "sha256:" and the ellipsis may be left out), at least
// kMinRunPrefix lowercase hex digits. kUsage naming `what` otherwise.
inline constexpr size_t kMinRunPrefix = 6;
// What ends a shortened digest in the text listings (U+2026), which run_prefix_arg drops.
inline constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
Result<std::string> run_prefix_arg(const std::string& text, const std::string& what);
// The one observed run whose digest starts with `hex_prefix` (from run_prefix_arg): kNotFound
// when none does, kUsage listing some when several do.
Result<Digest> resolve_run(const KeyValueStore& state, const std::string& hex_prefix,
                           const std::string& what);
// The same for a comparison group named by its key or a start of it, as 'evledger groups'
// prints the key or 'evledger show' its start ("sha256:0ce6d84b5b5aa97dec7d…").
Result<std::string> group_prefix_arg(const std::string& text, const std::string& what);
Result<Digest> resolve_group(const KeyValueStore& state, const std::string& hex_prefix,
                             const std::string& what);

// Compact canonical JSON of a value (one line).
std::string json_line(const Json& value);

// A member as text: strings bare, numbers in JCS form, null as "-".
std::string text_of(const Json* value);

// A digest's text cut after its first `hex_digits` hex digits and ended with kEllipsis
// ("sha256:0012c2de8659…"), as the listings and the run page print digests; shorter text ("-")
// whole.
std::string short_digest(std::string text, size_t hex_digits);

// `text` followed by spaces up to `width` characters (UTF-8: "µ" and "…" count one each); text
// as long or longer is returned whole.
std::string padded(std::string text, size_t width);

}  // namespace evl::cli
