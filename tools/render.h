// tools/render.h — how the CLI shows events: one JSON object per event, or text for people.
//
// Rendering only: no rule about events lives here. nlohmann stays inside render.cpp.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "events/event.h"
#include "keys/policy.h"

namespace evl::cli {

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

}  // namespace evl::cli
