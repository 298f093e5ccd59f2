// tools/render.h — how the CLI and the server's API show events and keys: one JSON object per
// event, or text for people.
//
// Rendering only: no rule about events lives here. nlohmann stays inside render.cpp.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "keys/key.h"
#include "keys/policy.h"

namespace evl::cli {

// Text for people that the command composed, of one line or several, from what it quotes:
// each '\n' is kept, everything else is shown as visible_text (events/utf8.h) shows it, so
// that nothing an event or an input holds can move the cursor, recolour, rewrite a line or
// reorder what a terminal shows. Every command that prints text for people passes what it
// did not write itself through one of the two; JSON output needs no such pass (its strings
// escape C0 controls).
std::string visible_lines(std::string_view text);

// RFC 3339 UTC with milliseconds: 2026-11-30T05:37:09.123Z.
std::string format_time_ms(int64_t ms);

// One line of JSON (no trailing newline) describing the entry at `index`.
std::string entry_json(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys);

// A multi-line description for people.
std::string entry_text(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys);

// One short line: index, kind, author, id, summary.
std::string entry_line(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys);

// The stored entry at `index` (its bytes), decoded; kCorrupt, saying to run evledger verify,
// when the bytes do not decode.
struct StoredEvent {
  SignedEvent entry;
  EventBody body;
};
Result<StoredEvent> decode_stored_entry(uint64_t index, ByteView stored);

// The stored entry at `index` (its bytes) decoded and shown as entry_json shows it: what
// `evledger get --json`, `evledger log --json` and the API's events answer; kCorrupt as above.
Result<std::string> stored_entry_json(uint64_t index, ByteView stored, const KeyPolicy& keys);

// The key registry of `keys` (the key state at the head, for `key list --json` and the API),
// one JSON object per key: name, verifierKey, roles, scope, grantedAt, and revokedAt, reason,
// voidFrom when they apply. In public key order, from the first key whose hex is at least
// `from` (empty: the first), at most `limit`; `next` gets the hex of the key after them.
std::vector<std::string> key_registry_json(const KeyPolicy& keys, std::string_view from,
                                           size_t limit, std::optional<std::string>& next);

}  // namespace evl::cli
