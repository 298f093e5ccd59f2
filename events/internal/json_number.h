// events/internal/json_number.h — the RFC 8259 §6 number grammar, shared by the JSON parser
// (events/json.cpp) and the one-pass canonical check (events/jcs.cpp), which each turn an
// error into their own message. Thread safety: pure function.
#pragma once

#include <cstddef>

namespace evl::json_internal {

enum class NumberError { kNone, kNoDigit, kLeadingZero, kNoFractionDigit, kNoExponentDigit };

struct NumberToken {
  const char* end = nullptr;     // past the token, or where the error was found
  const char* digits = nullptr;  // the first digit of the integer part
  size_t int_digits = 0;
  bool negative = false;
  bool simple = true;            // no fraction and no exponent
  NumberError error = NumberError::kNone;
};

inline bool is_number_digit(char c) { return c >= '0' && c <= '9'; }

// Scans the number that starts at `p` (a '-' or a digit).
inline NumberToken scan_number_token(const char* p, const char* end) {
  NumberToken t;
  t.negative = *p == '-';
  if (t.negative) ++p;
  auto stop = [&](NumberError e) {
    t.end = p;
    t.error = e;
    return t;
  };
  if (p == end || !is_number_digit(*p)) return stop(NumberError::kNoDigit);
  t.digits = p;
  if (*p == '0') {
    ++p;
    if (p < end && is_number_digit(*p)) return stop(NumberError::kLeadingZero);
  } else {
    while (p < end && is_number_digit(*p)) ++p;
  }
  t.int_digits = static_cast<size_t>(p - t.digits);
  if (p < end && *p == '.') {
    t.simple = false;
    ++p;
    if (p == end || !is_number_digit(*p)) return stop(NumberError::kNoFractionDigit);
    while (p < end && is_number_digit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    t.simple = false;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p == end || !is_number_digit(*p)) return stop(NumberError::kNoExponentDigit);
    while (p < end && is_number_digit(*p)) ++p;
  }
  t.end = p;
  return t;
}

}  // namespace evl::json_internal
