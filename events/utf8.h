// events/utf8.h — UTF-8 validation (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace evl {

bool is_valid_utf8(std::string_view text);
// Whether valid UTF-8 text holds a code point above U+007F that Go's unicode.IsSpace calls a
// space (C2SP key names must not hold any Unicode space).
bool has_unicode_space(std::string_view text);

// The number of code points in valid UTF-8 text.
size_t utf8_length(std::string_view text);

}  // namespace evl
