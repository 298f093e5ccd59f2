#include "events/jcs.h"

#include <double-conversion/double-conversion.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "events/internal/json_number.h"
#include "events/utf8.h"

namespace evl {
namespace {

// Objects up to this many members are sorted in a stack buffer, without a heap allocation.
constexpr size_t kStackSortMax = 32;

// The escape each byte needs in a canonical string: 0 for none, else the letter after the
// backslash ('u' for \u00xx). RFC 8785 §3.2.2.2.
constexpr std::array<char, 256> make_escape_table() {
  std::array<char, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = 'u';
  table['\b'] = 'b';
  table['\t'] = 't';
  table['\n'] = 'n';
  table['\f'] = 'f';
  table['\r'] = 'r';
  table['"'] = '"';
  table['\\'] = '\\';
  return table;
}
constexpr std::array<char, 256> kEscape = make_escape_table();

// Whether any of the 8 bytes in `w` needs an escape: below 0x20, '"' or '\\'. (The usual
// "has a byte below n" and "has a zero byte" tests; exact as a whole, not per byte.)
bool needs_escape(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  return (((w - kOnes * 0x20) & ~w & kHigh) | has_zero(w ^ (kOnes * '"')) |
          has_zero(w ^ (kOnes * '\\'))) != 0;
}

void append_string(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    // Eight bytes at a time while none needs an escape: stored texts are mostly plain.
    for (uint64_t w; i + 8 <= s.size(); i += 8) {
      std::memcpy(&w, s.data() + i, 8);
      if (needs_escape(w)) break;
    }
    if (i >= s.size()) break;
    char escape = kEscape[static_cast<unsigned char>(s[i])];
    if (escape == 0) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    out.push_back('\\');
    out.push_back(escape);
    if (escape == 'u') {
      static constexpr char kHex[] = "0123456789abcdef";
      unsigned char c = static_cast<unsigned char>(s[i]);
      char tail[4] = {'0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(tail, 4);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

void append_number(std::string& out, double value) {
  EVL_ASSERT(std::isfinite(value));
  // Integers below 2^53 print the same in every form; to_chars is quicker than the shortest
  // digit search. -0 takes this path and prints as "0".
  if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
    char buf[24];
    auto result = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
    out.append(buf, result.ptr);
    return;
  }
  char buf[64];
  double_conversion::StringBuilder builder(buf, sizeof buf);
  bool ok =
      double_conversion::DoubleToStringConverter::EcmaScriptConverter().ToShortest(value, &builder);
  EVL_ASSERT(ok);
  int length = builder.position();
  out.append(builder.Finalize(), static_cast<size_t>(length));
}

void append_object(std::string& out, const Json::Object& members) {
  std::array<const Json::Member*, kStackSortMax> stack_order;
  std::vector<const Json::Member*> heap_order;
  const Json::Member** order = stack_order.data();
  if (members.size() > kStackSortMax) {
    heap_order.resize(members.size());
    order = heap_order.data();
  }
  for (size_t i = 0; i < members.size(); ++i) order[i] = &members[i];
  std::sort(order, order + members.size(), [](const Json::Member* a, const Json::Member* b) {
    return jcs_key_less(a->first, b->first);
  });
  out.push_back('{');
  for (size_t i = 0; i < members.size(); ++i) {
    if (i > 0) {
      EVL_ASSERT(order[i - 1]->first != order[i]->first);  // duplicate keys have no canonical form
      out.push_back(',');
    }
    append_string(out, order[i]->first);
    out.push_back(':');
    jcs_append(out, order[i]->second);
  }
  out.push_back('}');
}

}  // namespace

bool jcs_key_less(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  // UTF-8 byte order is code point order; UTF-16 order differs only in that characters above
  // U+FFFF (lead bytes F0..F4, surrogate pairs D800..DFFF) sort before U+E000..U+FFFF (lead
  // bytes EE, EF). The first differing byte is at the same offset within a character in both,
  // so two lead bytes decide it.
  unsigned char x = static_cast<unsigned char>(a[i]);
  unsigned char y = static_cast<unsigned char>(b[i]);
  bool x_high_bmp = x == 0xEE || x == 0xEF, y_high_bmp = y == 0xEE || y == 0xEF;
  if (x_high_bmp && y >= 0xF0) return false;
  if (y_high_bmp && x >= 0xF0) return true;
  return x < y;
}

void jcs_append_string(std::string& out, std::string_view utf8) { append_string(out, utf8); }

void jcs_append_number(std::string& out, double value) { append_number(out, value); }

std::string jcs_number(double value) {
  std::string out;
  append_number(out, value);
  return out;
}

void jcs_append(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::Type::kNull: out += "null"; return;
    case Json::Type::kBool: out += value.as_bool() ? "true" : "false"; return;
    case Json::Type::kNumber: append_number(out, value.as_number()); return;
    case Json::Type::kString: append_string(out, value.as_string()); return;
    case Json::Type::kArray: {
      out.push_back('[');
      bool first = true;
      for (const Json& element : value.as_array()) {
        if (!first) out.push_back(',');
        first = false;
        jcs_append(out, element);
      }
      out.push_back(']');
      return;
    }
    case Json::Type::kObject: append_object(out, value.as_object()); return;
  }
}

std::string jcs_serialize(const Json& value) {
  std::string out;
  jcs_append(out, value);
  return out;
}

Result<std::string> jcs_canonicalize(std::string_view json_text, const JsonLimits& limits) {
  Result<Json> parsed = parse_json(json_text, limits);
  if (!parsed) return parsed.error();
  std::string out;
  out.reserve(json_text.size());
  jcs_append(out, *parsed);
  return out;
}

// ---- jcs_check_canonical: a single pass over text that is supposed to be canonical already ----

namespace {

// Bytes a canonical string holds as they are and that need no UTF-8 check: printable ASCII and
// DEL, but the quote and the backslash.
constexpr std::array<bool, 256> make_canonical_plain_table() {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}
constexpr std::array<bool, 256> kCanonicalPlain = make_canonical_plain_table();

// The length of the run of plain bytes (kCanonicalPlain) at [s, end). Eight bytes at a time
// while none of them is '"', '\\', a control or non-ASCII (the word tests are exact for "some
// byte is": x - 0x01.. & ~x & 0x80.. is nonzero iff a byte of x is zero, and with 0x20.. iff
// a byte is below 0x20); the bytes that need a look end the run one at a time.
size_t plain_run(const char* s, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const char* p = s;
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if ((has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) |
         ((w - kOnes * 0x20) & ~w & kHighs) | (w & kHighs)) != 0) {
      break;
    }
    p += 8;
  }
  while (p < end && kCanonicalPlain[static_cast<unsigned char>(*p)]) ++p;
  return static_cast<size_t>(p - s);
}
constexpr char kLowerHex[] = "0123456789abcdef";

constexpr const char* kCanonicalizeFix =
    "canonicalize the document with RFC 8785 (evledger import does)";

// Nesting levels whose state lives on the stack; deeper documents spill to the heap.
constexpr size_t kInlineDepth = 64;

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// The text of jcs_number(value) written to buf (at least 64 bytes); returns its length. Mirrors
// append_number without a std::string.
size_t format_number(double value, char* buf) {
  if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
    auto result = std::to_chars(buf, buf + 24, static_cast<int64_t>(value));
    return static_cast<size_t>(result.ptr - buf);
  }
  double_conversion::StringBuilder builder(buf, 64);
  bool ok =
      double_conversion::DoubleToStringConverter::EcmaScriptConverter().ToShortest(value, &builder);
  EVL_ASSERT(ok);
  size_t length = static_cast<size_t>(builder.position());
  builder.Finalize();
  return length;
}

// Whether a number token's digits "I.F" (grammar checked, no exponent, last digit not 0) are
// certainly the ECMAScript form of their value, without converting: a decimal of at most 15
// significant digits is the only such decimal that rounds to its double (15 <= DBL_DIG), so it
// is the shortest round-trip text, and values from 1e-6 up print in fixed notation. Anything
// else (exponents, more digits) takes the exact path.
bool fixed_decimal_is_canonical(const char* digits, const char* end) {
  const char* s = digits;
  size_t significant = 0;
  if (*s == '0') {
    if (s[1] != '.') return false;  // "0e5"
    s += 2;
    const char* first = s;
    while (s < end && *s == '0') ++s;
    if (s - first > 5) return false;  // below 1e-6: exponent form
    significant = static_cast<size_t>(end - s);
  } else {
    for (; s < end; ++s) {
      if (*s == 'e' || *s == 'E') return false;
      significant += *s != '.';
    }
    return significant <= 15;
  }
  for (const char* t = s; t < end; ++t) {
    if (*t == 'e' || *t == 'E') return false;
  }
  return significant <= 15;
}

// The next decoded byte of a string's raw text that passed the canonical checks (so its only
// escapes are \" \\ \b \t \n \f \r and \u00xx); advances p.
unsigned char next_decoded_byte(const char*& p) {
  unsigned char c = static_cast<unsigned char>(*p);
  if (c != '\\') {
    ++p;
    return c;
  }
  char e = p[1];
  p += 2;
  switch (e) {
    case 'b': return '\b';
    case 't': return '\t';
    case 'n': return '\n';
    case 'f': return '\f';
    case 'r': return '\r';
    case 'u': {
      auto hex = [](char h) { return h <= '9' ? h - '0' : h - 'a' + 10; };
      unsigned char v = static_cast<unsigned char>(hex(p[2]) * 16 + hex(p[3]));
      p += 4;
      return v;
    }
    default: return static_cast<unsigned char>(e);  // '"' or '\\'
  }
}

// Orders two different bytes at the same offset of two UTF-8 strings by UTF-16 code units
// (see jcs_key_less): -1 or 1.
int differing_byte_order(unsigned char x, unsigned char y) {
  bool x_high_bmp = x == 0xEE || x == 0xEF, y_high_bmp = y == 0xEE || y == 0xEF;
  if (x_high_bmp && y >= 0xF0) return 1;
  if (y_high_bmp && x >= 0xF0) return -1;
  return x < y ? -1 : 1;
}

// Three-way JCS order of two keys given by their raw (still escaped) canonical text; decodes
// escapes on the fly when a key has any.
int compare_raw_keys(std::string_view a, bool a_escaped, std::string_view b, bool b_escaped) {
  if (!a_escaped && !b_escaped) {
    size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    if (i == n) return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
    return differing_byte_order(static_cast<unsigned char>(a[i]), static_cast<unsigned char>(b[i]));
  }
  const char *p = a.data(), *p_end = p + a.size();
  const char *q = b.data(), *q_end = q + b.size();
  for (;;) {
    if (p == p_end) return q == q_end ? 0 : -1;
    if (q == q_end) return 1;
    unsigned char x = next_decoded_byte(p), y = next_decoded_byte(q);
    if (x != y) return differing_byte_order(x, y);
  }
}

// State of one open array or object. Trivial, so that the inline stack costs nothing to set up.
struct CheckFrame {
  const char* key;  // raw text of the object's last key; nullptr before the first
  size_t key_size;
  bool key_escaped;
  bool is_object;
};

class CanonicalChecker {
 public:
  CanonicalChecker(std::string_view text, const JsonLimits& limits)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), limits_(limits) {}

  Status run();

 private:
  bool push(bool is_object);
  CheckFrame& top() {
    size_t i = depth_ - 1;
    return i < kInlineDepth ? inline_[i] : heap_[i - kInlineDepth];
  }
  bool check_key();
  bool scan_string(bool& escaped);
  bool scan_escape();
  bool scan_utf8();
  bool scan_number();
  bool scan_literal();
  bool unexpected(const char* at, const char* expected);
  bool fail(const char* at, const std::string& what, const char* rule, const std::string& fix);
  std::string show(const char* from, const char* to) const;

  const char* begin_;
  const char* p_;
  const char* end_;
  const JsonLimits& limits_;
  size_t depth_ = 0;
  CheckFrame inline_[kInlineDepth];
  std::vector<CheckFrame> heap_;
  std::string error_;
};

Status CanonicalChecker::run() {
  if (static_cast<size_t>(end_ - begin_) > limits_.max_bytes) {
    return rejected("JSON document of " + std::to_string(end_ - begin_) +
                    " bytes exceeds the limit of " + std::to_string(limits_.max_bytes) +
                    " bytes; split it or raise JsonLimits::max_bytes");
  }
  enum class Expect { kValue, kKey, kAfterValue };
  Expect expect = Expect::kValue;
  for (;;) {
    switch (expect) {
      case Expect::kValue: {
        if (p_ == end_) {
          fail(p_, p_ == begin_ ? "empty document" : "the document ends where a value should be",
               "RFC 8259 §2: a JSON text is one value", "complete the document");
          return rejected(error_);
        }
        char c = *p_;
        if (c == '{' || c == '[') {
          bool is_object = c == '{';
          if (!push(is_object)) return rejected(error_);
          ++p_;
          if (p_ < end_ && *p_ == (is_object ? '}' : ']')) {
            ++p_;
            --depth_;
            expect = Expect::kAfterValue;
          } else {
            expect = is_object ? Expect::kKey : Expect::kValue;
          }
          continue;
        }
        bool escaped = false;
        bool ok = c == '"'                        ? scan_string(escaped)
                  : c == '-' || is_ascii_digit(c) ? scan_number()
                                                  : scan_literal();
        if (!ok) return rejected(error_);
        expect = Expect::kAfterValue;
        continue;
      }
      case Expect::kKey: {
        if (!check_key()) return rejected(error_);
        if (p_ == end_ || *p_ != ':') {
          unexpected(p_, "':' after the object key");
          return rejected(error_);
        }
        ++p_;
        expect = Expect::kValue;
        continue;
      }
      case Expect::kAfterValue: {
        if (depth_ == 0) {
          if (p_ == end_) return Status::ok();
          unexpected(p_, "the end of the document after the JSON value");
          return rejected(error_);
        }
        bool is_object = top().is_object;
        if (p_ < end_ && *p_ == ',') {
          ++p_;
          expect = is_object ? Expect::kKey : Expect::kValue;
          continue;
        }
        if (p_ < end_ && *p_ == (is_object ? '}' : ']')) {
          ++p_;
          --depth_;
          continue;
        }
        unexpected(p_, is_object ? "',' or '}' after an object member"
                                 : "',' or ']' after an array element");
        return rejected(error_);
      }
    }
  }
}

bool CanonicalChecker::push(bool is_object) {
  if (limits_.max_depth < 0 || depth_ + 1 > static_cast<size_t>(limits_.max_depth)) {
    return fail(p_,
                std::string(is_object ? "object" : "array") + " nested deeper than " +
                    std::to_string(limits_.max_depth) + " levels",
                "evledger's JSON nesting limit", "flatten the document");
  }
  CheckFrame frame{nullptr, 0, false, is_object};
  if (depth_ < kInlineDepth) {
    inline_[depth_] = frame;
  } else if (depth_ - kInlineDepth < heap_.size()) {
    heap_[depth_ - kInlineDepth] = frame;
  } else {
    heap_.push_back(frame);
  }
  ++depth_;
  return true;
}

// Reads an object key and checks that it sorts strictly after the object's previous key.
bool CanonicalChecker::check_key() {
  const char* at = p_;
  if (p_ == end_ || *p_ != '"') return unexpected(p_, "a double-quoted object key");
  bool escaped = false;
  if (!scan_string(escaped)) return false;
  std::string_view key(at + 1, static_cast<size_t>(p_ - at - 2));
  CheckFrame& frame = top();
  if (frame.key != nullptr) {
    int order = compare_raw_keys(std::string_view(frame.key, frame.key_size), frame.key_escaped,
                                 key, escaped);
    if (order == 0) {
      return fail(at, "duplicate key \"" + show(key.data(), key.data() + key.size()) + "\"",
                  "I-JSON, RFC 7493 §2.3: member names must be unique",
                  "keep one of the members");
    }
    if (order > 0) {
      return fail(at,
                  "key \"" + show(key.data(), key.data() + key.size()) + "\" comes after \"" +
                      show(frame.key, frame.key + frame.key_size) + "\"",
                  "RFC 8785 §3.2.3: members sorted by their keys' UTF-16 code units",
                  std::string("sort the members, or ") + kCanonicalizeFix);
    }
  }
  frame.key = key.data();
  frame.key_size = key.size();
  frame.key_escaped = escaped;
  return true;
}

bool CanonicalChecker::scan_string(bool& escaped) {
  const char* open = p_;
  ++p_;  // '"'
  for (;;) {
    p_ += plain_run(p_, end_);
    if (p_ == end_) {
      return fail(open, "unterminated string", "RFC 8259 §7: a string ends with '\"'",
                  "add the closing quote");
    }
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return true;
    }
    if (c == '\\') {
      escaped = true;
      if (!scan_escape()) return false;
    } else if (c < 0x20) {
      char escape = kEscape[c];
      std::string as = escape == 'u' ? std::string("\\u00") + kLowerHex[c >> 4] + kLowerHex[c & 0xF]
                                     : std::string("\\") + escape;
      return fail(p_, "unescaped control character in a string",
                  "RFC 8259 §7: U+0000..U+001F must be escaped", "write it as " + as);
    } else if (!scan_utf8()) {
      return false;
    }
  }
}

// The escape at p_; canonical strings use only \" \\ \b \t \n \f \r and lowercase \u00xx for the
// other controls (RFC 8785 §3.2.2.2).
bool CanonicalChecker::scan_escape() {
  const char* at = p_;
  if (end_ - p_ < 2) {
    return fail(at, "unterminated escape", "RFC 8259 §7", "complete the escape sequence");
  }
  char e = p_[1];
  switch (e) {
    case '"':
    case '\\':
    case 'b':
    case 't':
    case 'n':
    case 'f':
    case 'r': p_ += 2; return true;
    case '/':
      return fail(at, "escape \\/", "RFC 8785 §3.2.2.2: only \" \\ and controls are escaped",
                  std::string("write '/' itself, or ") + kCanonicalizeFix);
    case 'u': break;
    default:
      return fail(at, std::string("unknown escape \\") + e,
                  "RFC 8259 §7: only \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                  "write the character itself");
  }
  uint32_t cp = 0;
  bool hex_ok = end_ - p_ >= 6;
  for (int i = 2; hex_ok && i < 6; ++i) {
    char h = p_[i];
    uint32_t digit = is_ascii_digit(h)          ? h - '0'
                     : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                     : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                              : 16;
    hex_ok = digit < 16;
    cp = cp * 16 + digit;
  }
  if (!hex_ok) {
    return fail(at, "\\u must be followed by four hex digits", "RFC 8259 §7",
                "write \\u plus four hex digits");
  }
  std::string text(at, 6);
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return fail(at, "lone low surrogate " + text,
                "I-JSON, RFC 7493 §2.1: strings must be valid Unicode", "remove it");
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    bool paired = end_ - p_ >= 12 && p_[6] == '\\' && p_[7] == 'u' &&
                  (p_[8] == 'd' || p_[8] == 'D') &&
                  std::string_view("cdefCDEF").find(p_[9]) != std::string_view::npos;
    if (!paired) {
      return fail(at, "lone high surrogate " + text,
                  "I-JSON, RFC 7493 §2.1: strings must be valid Unicode", "remove it");
    }
    return fail(at, "escaped surrogate pair " + std::string(at, 12),
                "RFC 8785 §3.2.2.2: characters other than controls are written as UTF-8",
                std::string("write the character itself, or ") + kCanonicalizeFix);
  }
  if (cp >= 0x20) {
    return fail(at, "unnecessary escape " + text,
                "RFC 8785 §3.2.2.2: characters other than controls are written as UTF-8",
                std::string("write the character itself, or ") + kCanonicalizeFix);
  }
  char short_form = kEscape[cp];
  if (short_form != 'u') {
    return fail(at, "escape " + text + " where \\" + short_form + " is required",
                "RFC 8785 §3.2.2.2: the short escapes are used where they exist",
                std::string("write \\") + short_form + ", or " + kCanonicalizeFix);
  }
  if (p_[4] != kLowerHex[cp >> 4] || p_[5] != kLowerHex[cp & 0xF]) {
    return fail(at, "escape " + text + " with uppercase hex digits",
                "RFC 8785 §3.2.2.2: \\u00xx escapes use lowercase hex",
                std::string("write \\u00") + kLowerHex[cp >> 4] + kLowerHex[cp & 0xF] + ", or " +
                    kCanonicalizeFix);
  }
  p_ += 6;
  return true;
}

// One multi-byte UTF-8 sequence at p_, validated as parse_json does (Unicode Table 3-7, no
// noncharacters).
bool CanonicalChecker::scan_utf8() {
  auto sequence = decode_utf8_sequence(reinterpret_cast<const unsigned char*>(p_),
                                       static_cast<size_t>(end_ - p_));
  if (!sequence) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "invalid UTF-8 (byte 0x%02X starts no valid sequence here)",
                  static_cast<unsigned char>(*p_));
    return fail(p_, buf, "RFC 8259 §8.1 and I-JSON: text must be UTF-8",
                "re-encode the document as UTF-8");
  }
  const size_t len = sequence->length;
  const uint32_t cp = sequence->code_point;
  if (is_unicode_noncharacter(cp)) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "Unicode noncharacter U+%04X", static_cast<unsigned>(cp));
    return fail(p_, buf, "I-JSON, RFC 7493 §2.1 forbids noncharacters", "remove it");
  }
  p_ += len;
  return true;
}

// A number: the RFC 8259 grammar, then the token must be exactly jcs_number of its value.
bool CanonicalChecker::scan_number() {
  using json_internal::NumberError;
  const char* start = p_;
  json_internal::NumberToken t = json_internal::scan_number_token(p_, end_);
  p_ = t.end;
  switch (t.error) {
    case NumberError::kNone:
      break;
    case NumberError::kNoDigit:
      return fail(start, "'-' must be followed by a digit", "RFC 8259 §6 number grammar",
                  "write e.g. -1 or -0.5");
    case NumberError::kLeadingZero:
      return fail(start, "leading zero in number", "RFC 8259 §6: no leading zeros",
                  "remove the leading zeros");
    case NumberError::kNoFractionDigit:
      return fail(start, "'.' in a number must be followed by a digit",
                  "RFC 8259 §6 number grammar", "write e.g. 1.5 or 1");
    case NumberError::kNoExponentDigit:
      return fail(start, "exponent without digits", "RFC 8259 §6 number grammar",
                  "write e.g. 1e+21 or 1e-7");
  }
  const bool negative = t.negative, simple = t.simple;
  const char* digits = t.digits;
  const size_t int_digits = t.int_digits;
  const char* rule = "RFC 8785 §3.2.2.3: numbers in ECMAScript Number::toString form";
  if (simple && int_digits <= 15) {
    // Exact in a double and printed as its digits, except that -0 is written 0.
    if (negative && *digits == '0') {
      return fail(start, "number -0", rule, std::string("write 0, or ") + kCanonicalizeFix);
    }
    return true;
  }
  if (!simple && *(p_ - 1) != '0' && fixed_decimal_is_canonical(digits, p_)) return true;
  double value = 0;
  auto [end, ec] = std::from_chars(start, p_, value);
  if (ec == std::errc::result_out_of_range) {
    return fail(start, "number " + std::string(start, p_) + " is outside the range of a double",
                "I-JSON, RFC 7493 §2.2 and RFC 8785 §3.2.2.3",
                "write it as a string if it must be exact; a value below the smallest "
                "subnormal is written 0");
  }
  if (ec != std::errc() || end != p_) {
    return fail(start, "malformed number", "RFC 8259 §6 number grammar", "write a decimal number");
  }
  char buf[64];
  size_t n = format_number(value, buf);
  if (n != static_cast<size_t>(p_ - start) || std::memcmp(buf, start, n) != 0) {
    return fail(start,
                "number " + std::string(start, p_) + " is not in canonical form " +
                    std::string(buf, n),
                rule, "write " + std::string(buf, n) + ", or " + kCanonicalizeFix);
  }
  return true;
}

bool CanonicalChecker::scan_literal() {
  auto matches = [this](std::string_view word) {
    return static_cast<size_t>(end_ - p_) >= word.size() &&
           std::memcmp(p_, word.data(), word.size()) == 0;
  };
  for (std::string_view word : {std::string_view("true"), std::string_view("false"),
                                std::string_view("null")}) {
    if (matches(word)) {
      p_ += word.size();
      return true;
    }
  }
  if (matches("NaN") || matches("Infinity")) {
    return fail(p_, "NaN and Infinity are not JSON numbers",
                "RFC 8259 §6 and JCS: numbers are finite", "write null or a string");
  }
  return unexpected(p_, "a value (object, array, string, number, true, false or null)");
}

bool CanonicalChecker::unexpected(const char* at, const char* expected) {
  if (at == end_) {
    return fail(at, std::string("the document ends where ") + expected + " should be",
                "RFC 8259 grammar", "complete the document");
  }
  unsigned char c = static_cast<unsigned char>(*at);
  if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
    char buf[40];
    std::snprintf(buf, sizeof buf, "whitespace (byte 0x%02X) outside a string", c);
    return fail(at, buf, "RFC 8785 §3.2.1: canonical JSON has no whitespace between tokens",
                std::string("remove it, or ") + kCanonicalizeFix);
  }
  char shown[24];
  if (c >= 0x21 && c < 0x7F) {
    std::snprintf(shown, sizeof shown, "'%c'", c);
  } else {
    std::snprintf(shown, sizeof shown, "byte 0x%02X", c);
  }
  return fail(at, std::string("unexpected ") + shown + ", expected " + expected,
              "RFC 8259 grammar", std::string("write ") + expected);
}

bool CanonicalChecker::fail(const char* at, const std::string& what, const char* rule,
                            const std::string& fix) {
  if (error_.empty()) {
    error_ = "byte offset " + std::to_string(at - begin_) + ": " + what + " (" + rule + "); " + fix;
  }
  return false;
}

// Raw text for a message, cut to 64 bytes.
std::string CanonicalChecker::show(const char* from, const char* to) const {
  constexpr size_t kMax = 64;
  size_t n = static_cast<size_t>(to - from);
  return n <= kMax ? std::string(from, n) : std::string(from, kMax) + "...";
}

}  // namespace

Status jcs_check_canonical(std::string_view text, const JsonLimits& limits) {
  return CanonicalChecker(text, limits).run();
}

}  // namespace evl
