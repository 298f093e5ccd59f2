#include "events/utf8.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace evl {

bool is_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    // ASCII fast path: eight bytes at a time while none has the high bit set.
    while (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080ull) != 0) break;
      p += 8;
    }
    if (p == end) break;
    uint8_t c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    auto sequence = decode_utf8_sequence(p, static_cast<size_t>(end - p));
    if (!sequence) return false;
    p += sequence->length;
  }
  return true;
}

std::optional<Utf8Sequence> decode_utf8_sequence(const unsigned char* s, size_t avail) {
  const unsigned char lead = s[0];
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range allowed for the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  }
  if (len == 0 || avail < len || s[1] < lo || s[1] > hi) return std::nullopt;
  for (size_t i = 2; i < len; ++i) {
    if (s[i] < 0x80 || s[i] > 0xBF) return std::nullopt;
  }
  uint32_t cp = len == 2 ? (lead & 0x1Fu) : len == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
  for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (s[i] & 0x3Fu);
  return Utf8Sequence{len, cp};
}

namespace {
// The code points above U+007F for which Go's unicode.IsSpace is true, UTF-8 encoded. In valid
// UTF-8 a substring match is a code point match, as no encoding is inside another.
constexpr std::string_view kNonAsciiSpaces[] = {
    "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81",
    "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86",
    "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8",
    "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80",
};

}  // namespace

bool has_unicode_space(std::string_view text) {
  return std::any_of(std::begin(kNonAsciiSpaces), std::end(kNonAsciiSpaces),
                     [&](std::string_view s) { return text.find(s) != std::string_view::npos; });
}

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xc0) != 0x80;
  return n;
}

namespace {

// Code points at or above U+0080 that a terminal does not show as themselves: C1 controls,
// those that reorder or break the text around them (bidirectional marks, embeddings,
// overrides and isolates; line and paragraph separators), and the invisible ones (zero-width
// spaces and joiners, word joiner, invisible operators, the byte order mark).
bool is_hidden_code_point(uint32_t cp) {
  return cp <= 0x9F || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

void append_hex_escape(std::string& out, const char* prefix, uint32_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) {
    out.push_back(kHex[(value >> shift) & 15]);
  }
}

}  // namespace

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = bytes[i];
    if (b >= 0x80) {
      auto seq = decode_utf8_sequence(bytes + i, text.size() - i);
      if (!seq) {
        append_hex_escape(out, "\\x", b, 2);
        ++i;
      } else if (is_hidden_code_point(seq->code_point)) {
        append_hex_escape(out, "\\u", seq->code_point, 4);
        i += seq->length;
      } else {
        out.append(text.substr(i, seq->length));
        i += seq->length;
      }
      continue;
    }
    if (b == '\n') out += "\\n";
    else if (b == '\r') out += "\\r";
    else if (b == '\t') out += "\\t";
    else if (b < 0x20 || b == 0x7F) append_hex_escape(out, "\\x", b, 2);
    else out.push_back(static_cast<char>(b));
    ++i;
  }
  return out;
}

}  // namespace evl
