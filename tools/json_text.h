// tools/json_text.h — members of projection views as text for people: what the CLI's
// listings, `evledger show` and the server's pages print of a view.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>

#include "events/json.h"

namespace evl::cli {

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
