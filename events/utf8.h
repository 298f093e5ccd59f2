// events/utf8.h — UTF-8 validation (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace evl {

bool is_valid_utf8(std::string_view text);
// Whether valid UTF-8 text holds a code point above U+007F that Go's unicode.IsSpace calls a
// space (C2SP key names must not hold any Unicode space).
bool has_unicode_space(std::string_view text);

// The number of code points in valid UTF-8 text.
size_t utf8_length(std::string_view text);

// One multi-byte sequence: its length in bytes and the code point it encodes.
struct Utf8Sequence {
  size_t length;
  uint32_t code_point;
};
// Decodes the multi-byte sequence whose lead byte (0x80 or above) is s[0], with `avail` bytes
// available; nullopt when it is not valid UTF-8 (Unicode Table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF, no truncated sequence).
std::optional<Utf8Sequence> decode_utf8_sequence(const unsigned char* s, size_t avail);

// Whether `cp` is a Unicode noncharacter (U+FDD0..U+FDEF, or U+xFFFE/U+xFFFF in any plane),
// which I-JSON (RFC 7493 §2.1) forbids.
inline bool is_unicode_noncharacter(uint32_t cp) {
  return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

// Text from an input, fit to be quoted in a message on a terminal: valid UTF-8 stays as it
// is, but control characters (C0, DEL, C1), bidirectional controls and line and paragraph
// separators are written as \n, \r, \t or \u00XX-style escapes, and each byte that is not
// UTF-8 as \xNN. Messages that quote what an input holds pass it through here.
std::string visible_text(std::string_view text);

}  // namespace evl
