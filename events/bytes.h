// events/bytes.h — byte strings and their text forms: lowercase hex and standard base64.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"

namespace evl {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

inline ByteView as_bytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}
inline std::string_view as_chars(ByteView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}
inline Bytes to_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

std::string hex_encode(ByteView bytes);
// Appends the lowercase hex of `bytes` to `out` (without a second string to copy from).
void hex_append(std::string& out, ByteView bytes);
// Accepts lowercase or uppercase hex of even length; anything else is kRejected.
Result<Bytes> hex_decode(std::string_view text);
// Decodes exactly 2 × out.size() hex digits of `text` into `out`, without allocating; false when
// one is not a hex digit (with `lowercase_only`, also when one is an uppercase letter).
bool hex_decode_into(std::string_view text, std::span<uint8_t> out, bool lowercase_only = false);

// RFC 4648 standard alphabet with padding.
std::string base64_encode(ByteView bytes);
// Strict: only the alphabet and '=', padding required, no whitespace, no non-zero trailing bits.
Result<Bytes> base64_decode(std::string_view text);

// Big-endian fixed-width integers (LMDB keys, tile bundle prefixes).
void put_u64_be(uint64_t v, uint8_t out[8]);
uint64_t get_u64_be(const uint8_t in[8]);
std::array<uint8_t, 8> u64_be(uint64_t v);

// Decimal parsing of an unsigned integer with no sign, spaces or leading zeros ("0" is fine).
Result<uint64_t> parse_u64(std::string_view text);

// Constant-time comparison for secrets and MACs.
bool constant_time_equal(ByteView a, ByteView b);

}  // namespace evl
