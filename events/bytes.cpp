#include "events/bytes.h"

#include <sodium.h>

#include <charconv>
#include <cstring>
#include <cstdio>

namespace evl {

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kRejected: return "rejected";
    case Code::kCorrupt: return "corrupt";
    case Code::kNotFound: return "not found";
    case Code::kUsage: return "usage";
    case Code::kIo: return "i/o";
    case Code::kDenied: return "denied";
  }
  return "unknown";
}

void assertion_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "evledger bug: assertion '%s' failed at %s:%d\n", expr, file, line);
  std::abort();
}

namespace {

// Each byte's two lowercase hex digits: one load and one two-byte store a byte (a rebuild
// writes some twenty digests as text for every event).
struct HexPairs {
  char pair[256][2];
  constexpr HexPairs() : pair() {
    constexpr char kDigits[] = "0123456789abcdef";
    for (int b = 0; b < 256; ++b) {
      pair[b][0] = kDigits[b >> 4];
      pair[b][1] = kDigits[b & 0xf];
    }
  }
};
constexpr HexPairs kHexPairs;

}  // namespace

void hex_append(std::string& out, ByteView bytes) {
  const size_t at = out.size();
  out.resize(at + 2 * bytes.size());
  char* to = out.data() + at;
  for (uint8_t b : bytes) {
    std::memcpy(to, kHexPairs.pair[b], 2);
    to += 2;
  }
}

std::string hex_encode(ByteView bytes) {
  std::string out;
  hex_append(out, bytes);
  return out;
}

namespace {

// Each byte's value as a hex digit, or -1: kLower takes 0-9 a-f, kAny also A-F. One load per
// digit instead of three range tests (the fold decodes the digests its views hold as text).
struct HexTable {
  int8_t value[256];
  constexpr explicit HexTable(bool uppercase) : value() {
    for (int c = 0; c < 256; ++c) value[c] = -1;
    for (int c = '0'; c <= '9'; ++c) value[c] = static_cast<int8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) value[c] = static_cast<int8_t>(c - 'a' + 10);
    if (uppercase) {
      for (int c = 'A'; c <= 'F'; ++c) value[c] = static_cast<int8_t>(c - 'A' + 10);
    }
  }
};
constexpr HexTable kLower(false), kAny(true);

}  // namespace

bool hex_decode_into(std::string_view text, std::span<uint8_t> out, bool lowercase_only) {
  if (text.size() != 2 * out.size()) return false;
  const int8_t* value = lowercase_only ? kLower.value : kAny.value;
  int bad = 0;  // the sign bit of any -1, checked once at the end
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = value[static_cast<uint8_t>(text[2 * i])];
    const int lo = value[static_cast<uint8_t>(text[2 * i + 1])];
    bad |= hi | lo;
    out[i] = static_cast<uint8_t>((hi & 0xf) << 4 | (lo & 0xf));
  }
  return bad >= 0;
}

Result<Bytes> hex_decode(std::string_view text) {
  if (text.size() % 2 != 0) {
    return rejected("hex text has an odd number of digits (" + std::to_string(text.size()) + ")");
  }
  Bytes out(text.size() / 2);
  if (!hex_decode_into(text, out)) {
    return rejected("hex text has a character that is not a hex digit");
  }
  return out;
}

std::string base64_encode(ByteView bytes) {
  std::string out(sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes.data(), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

Result<Bytes> base64_decode(std::string_view text) {
  // libsodium's decoder reads every byte above 0x7f as '/' (fuzz target `note`, regressions
  // note/ and proof/), which would let two texts decode to the same bytes: only the alphabet
  // and '=' reach it.
  for (char c : text) {
    const bool in_alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                             (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
    if (!in_alphabet) {
      return rejected("text is not strict base64 (standard alphabet, padded, no spaces)");
    }
  }
  Bytes out(text.size() / 4 * 3 + 3);
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(out.data(), out.size(), text.data(), text.size(), nullptr, &len, &end,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size()) {
    return rejected("text is not strict base64 (standard alphabet, padded, no spaces)");
  }
  out.resize(len);
  return out;
}

void put_u64_be(uint64_t v, uint8_t out[8]) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

uint64_t get_u64_be(const uint8_t in[8]) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | in[i];
  return v;
}

std::array<uint8_t, 8> u64_be(uint64_t v) {
  std::array<uint8_t, 8> out;
  put_u64_be(v, out.data());
  return out;
}

Result<uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) {
    return rejected("'" + std::string(text) + "' is not a decimal number without leading zeros");
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return rejected("'" + std::string(text) + "' is not an unsigned 64-bit decimal number");
  }
  return v;
}

bool constant_time_equal(ByteView a, ByteView b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace evl
