#include "events/json.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>

#include "events/internal/json_number.h"
#include "events/utf8.h"

namespace evl {

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const Member& member : as_object()) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

Json* Json::find(std::string_view key) {
  return const_cast<Json*>(static_cast<const Json*>(this)->find(key));
}

Json& Json::set(std::string key, Json value) {
  if (Json* existing = find(key)) return *existing = std::move(value);
  Object& members = as_object();
  members.emplace_back(std::move(key), std::move(value));
  return members.back().second;
}

const char* json_type_name(Json::Type type) {
  switch (type) {
    case Json::Type::kNull: return "null";
    case Json::Type::kBool: return "boolean";
    case Json::Type::kNumber: return "number";
    case Json::Type::kString: return "string";
    case Json::Type::kArray: return "array";
    case Json::Type::kObject: return "object";
  }
  return "?";
}

namespace {

// Objects up to this size find duplicate keys by a linear scan (cheaper than any index for the
// small objects manifests are made of); larger ones switch to an ordered set, which keeps a
// hostile document with many keys at O(n log n).
constexpr size_t kLinearKeyScanMax = 16;

// Bytes a string may hold as they are and that need no UTF-8 check: printable ASCII but the
// quote and the backslash.
constexpr std::array<bool, 256> make_plain_table() {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}
constexpr std::array<bool, 256> kPlain = make_plain_table();

// Whether all 8 bytes of `w` are plain (kPlain): none has its high bit set, none is below 0x20,
// none is '"' or '\\'. (The usual "has a byte below n" and "has a zero byte" tests, exact as a
// whole once no byte is above 0x7F.)
bool all_plain(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  return ((w & kHigh) | ((w - kOnes * 0x20) & ~w & kHigh) | has_zero(w ^ (kOnes * '"')) |
          has_zero(w ^ (kOnes * '\\'))) == 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    char b[2] = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 2);
  } else if (cp < 0x10000) {
    char b[3] = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                 static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 3);
  } else {
    char b[4] = {
        static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
        static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 4);
  }
}

// Reads the four hex digits of a \u escape.
bool read_hex4(const char* from, const char* end, uint32_t& value) {
  if (end - from < 4) return false;
  value = 0;
  for (int i = 0; i < 4; ++i) {
    char h = from[i];
    uint32_t digit = is_digit(h)              ? h - '0'
                     : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                     : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                              : 16;
    if (digit > 15) return false;
    value = value * 16 + digit;
  }
  return true;
}

std::string hex4(uint32_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04X", static_cast<unsigned>(v));
  return buf;
}

// The escape a message suggests for a control character.
std::string control_escape(unsigned char c) {
  switch (c) {
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return "\\u" + hex4(c);
  }
}

// How a byte is shown in a message.
std::string describe_byte(unsigned char c) {
  if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  if (c == ' ') return "a space";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
  return buf;
}

bool is_identifier_like(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// One level of the path from the top-level value to where the parser is: an object member
// (key set once the key is read) or an array element.
struct PathSegment {
  const std::string* key = nullptr;  // the member's key, owned by the object parser's frame
  size_t index = 0;
  bool in_array = false;
};

class Parser {
 public:
  Parser(std::string_view text, const JsonLimits& limits)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), limits_(limits) {
    path_.reserve(static_cast<size_t>(limits.max_depth > 0 ? limits.max_depth : 0) + 1);
  }

  Result<Json> run();

 private:
  bool parse_value(Json& out, int depth);
  bool parse_object(Json& out, int depth);
  bool parse_array(Json& out, int depth);
  bool parse_key(std::string& key, Json::Object& members,
                 std::set<std::string, std::less<>>& index);
  bool parse_string(std::string& out);
  bool parse_escape(std::string& out);
  bool parse_unicode_escape(const char* at, std::string& out);
  bool parse_utf8(std::string& out);
  bool parse_number(Json& out);
  bool convert_number(const char* start, const char* digits, bool small_integer, Json& out);
  bool parse_literal(Json& out);
  bool unexpected(const char* at, const char* expected);

  void skip_whitespace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // Records the first error and returns false so that callers unwind with `return fail(...)`.
  bool fail(const char* at, const std::string& what, const char* rule, const std::string& fix);
  std::string position(const char* at) const;
  std::string path_text() const;

  const char* begin_;
  const char* p_;
  const char* end_;
  JsonLimits limits_;
  std::vector<PathSegment> path_;
  std::string error_;
};

Result<Json> Parser::run() {
  if (static_cast<size_t>(end_ - begin_) > limits_.max_bytes) {
    return rejected("JSON document of " + std::to_string(end_ - begin_) +
                    " bytes exceeds the limit of " + std::to_string(limits_.max_bytes) +
                    " bytes; split it or raise JsonLimits::max_bytes");
  }
  if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) {
    fail(p_, "UTF-8 byte order mark before the JSON value",
         "RFC 8259 §8.1: senders must not add one", "save the file as UTF-8 without a BOM");
    return rejected(error_);
  }
  Json value;
  skip_whitespace();
  if (!parse_value(value, 1)) return rejected(error_);
  skip_whitespace();
  if (p_ != end_) {
    fail(p_,
         "unexpected " + describe_byte(static_cast<unsigned char>(*p_)) + " after the JSON value",
         "RFC 8259 §2: a document is exactly one value",
         "remove the trailing text or wrap the values in an array");
    return rejected(error_);
  }
  return value;
}

bool Parser::parse_value(Json& out, int depth) {
  if (p_ == end_) {
    return fail(p_,
                depth == 1 && path_.empty() ? "empty document"
                                            : "the document ends where a value should be",
                "RFC 8259 §2: a JSON text is one value", "complete the document");
  }
  switch (*p_) {
    case '{': return parse_object(out, depth);
    case '[': return parse_array(out, depth);
    case '"':
      // Parsed into the value's own string: no temporary to move and destroy.
      return parse_string(out.make_string());
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return parse_number(out);
    default: return parse_literal(out);
  }
}

bool Parser::parse_object(Json& out, int depth) {
  if (depth > limits_.max_depth) {
    return fail(p_, "object nested deeper than " + std::to_string(limits_.max_depth) + " levels",
                "evledger's JSON nesting limit", "flatten the document");
  }
  ++p_;  // '{'
  // Members are parsed in place, into the object's own vector: no temporaries to move.
  Json::Object& members = out.make_object();
  members.reserve(4);  // most have a few: growing from 1 cost a quarter of a manifest's parse
  std::set<std::string, std::less<>> index;  // used only past kLinearKeyScanMax members
  path_.push_back(PathSegment{});
  skip_whitespace();
  if (p_ < end_ && *p_ == '}') {
    ++p_;
  } else {
    for (;;) {
      path_.back().key = nullptr;
      std::string key;
      if (!parse_key(key, members, index)) return false;
      skip_whitespace();
      if (p_ == end_ || *p_ != ':') {
        path_.back().key = &key;
        return unexpected(p_, "':' after the object key");
      }
      ++p_;
      skip_whitespace();
      // The member's key stays where the path points while its value is parsed: a nested
      // value grows its own vectors, never this one.
      Json::Member& member = members.emplace_back(
          std::piecewise_construct, std::forward_as_tuple(std::move(key)), std::tuple<>());
      path_.back().key = &member.first;
      if (!parse_value(member.second, depth + 1)) return false;
      skip_whitespace();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        skip_whitespace();
        continue;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        break;
      }
      return unexpected(p_, "',' or '}' after an object member");
    }
  }
  path_.pop_back();
  return true;
}

// Reads a member's key and checks that the object does not hold it already.
bool Parser::parse_key(std::string& key, Json::Object& members,
                       std::set<std::string, std::less<>>& index) {
  const char* at = p_;
  if (p_ == end_ || *p_ != '"') {
    if (p_ < end_ && *p_ == '}') {
      return fail(p_, "trailing comma before '}'",
                  "RFC 8259 §4: members are separated, not terminated, by commas",
                  "remove the last comma");
    }
    return unexpected(p_, "a double-quoted object key");
  }
  if (!parse_string(key)) return false;
  bool duplicate = false;
  if (members.size() < kLinearKeyScanMax) {
    for (const Json::Member& member : members) {
      if (member.first == key) duplicate = true;
    }
  } else {
    if (index.empty()) {
      for (const Json::Member& member : members) index.insert(member.first);
    }
    duplicate = !index.insert(key).second;
  }
  if (!duplicate) return true;
  path_.back().key = &key;
  return fail(
      at, "duplicate key \"" + key + "\"",
      "I-JSON, RFC 7493 §2.3: member names must be unique, or readers disagree on the value",
      "keep one \"" + key + "\" member and remove the other");
}

bool Parser::parse_array(Json& out, int depth) {
  if (depth > limits_.max_depth) {
    return fail(p_, "array nested deeper than " + std::to_string(limits_.max_depth) + " levels",
                "evledger's JSON nesting limit", "flatten the document");
  }
  ++p_;  // '['
  Json::Array& elements = out.make_array();  // parsed in place, as an object's members are
  path_.push_back(PathSegment{nullptr, 0, true});
  skip_whitespace();
  if (p_ < end_ && *p_ == ']') {
    ++p_;
  } else {
    for (;;) {
      path_.back().index = elements.size();
      if (p_ < end_ && *p_ == ']' && !elements.empty()) {
        return fail(p_, "trailing comma before ']'",
                    "RFC 8259 §5: elements are separated, not terminated, by commas",
                    "remove the last comma");
      }
      elements.emplace_back();
      if (!parse_value(elements.back(), depth + 1)) return false;
      skip_whitespace();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        skip_whitespace();
        continue;
      }
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        break;
      }
      return unexpected(p_, "',' or ']' after an array element");
    }
  }
  path_.pop_back();
  return true;
}

bool Parser::parse_string(std::string& out) {
  const char* open = p_;
  ++p_;  // '"'
  for (;;) {
    const char* run = p_;
    for (uint64_t w; end_ - p_ >= 8; p_ += 8) {  // eight bytes at a time while all are plain
      std::memcpy(&w, p_, 8);
      if (!all_plain(w)) break;
    }
    while (p_ < end_ && kPlain[static_cast<unsigned char>(*p_)]) ++p_;
    out.append(run, static_cast<size_t>(p_ - run));
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
      if (!parse_escape(out)) return false;
    } else if (c < 0x20) {
      return fail(p_, "unescaped control character U+" + hex4(c) + " in a string",
                  "RFC 8259 §7: U+0000..U+001F must be escaped",
                  "write it as " + control_escape(c));
    } else if (!parse_utf8(out)) {
      return false;
    }
  }
}

bool Parser::parse_escape(std::string& out) {
  const char* at = p_;
  if (end_ - p_ < 2)
    return fail(at, "unterminated escape", "RFC 8259 §7", "complete the escape sequence");
  char c = p_[1];
  p_ += 2;
  switch (c) {
    case '"': out.push_back('"'); return true;
    case '\\': out.push_back('\\'); return true;
    case '/': out.push_back('/'); return true;
    case 'b': out.push_back('\b'); return true;
    case 'f': out.push_back('\f'); return true;
    case 'n': out.push_back('\n'); return true;
    case 'r': out.push_back('\r'); return true;
    case 't': out.push_back('\t'); return true;
    case 'u': return parse_unicode_escape(at, out);
    default:
      return fail(at, "unknown escape \\" + std::string(1, c),
                  "RFC 8259 §7: only \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                  "write the character itself or use \\uXXXX");
  }
}

// The \uXXXX escape at `at` (p_ is past the "\u"): one UTF-16 code unit, or a surrogate pair
// written as two escapes.
bool Parser::parse_unicode_escape(const char* at, std::string& out) {
  uint32_t cp = 0;
  if (!read_hex4(p_, end_, cp)) {
    return fail(at, "\\u must be followed by four hex digits", "RFC 8259 §7",
                "write \\u plus four hex digits, e.g. \\u00e9");
  }
  p_ += 4;
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return fail(at, "lone low surrogate \\u" + hex4(cp),
                "I-JSON, RFC 7493 §2.1: strings must be valid Unicode",
                "precede it with its high surrogate (\\uD800..\\uDBFF) or remove it");
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t low = 0;
    if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !read_hex4(p_ + 2, end_, low) ||
        low < 0xDC00 || low > 0xDFFF) {
      return fail(at, "lone high surrogate \\u" + hex4(cp),
                  "I-JSON, RFC 7493 §2.1: strings must be valid Unicode",
                  "follow it with its low surrogate (\\uDC00..\\uDFFF) or remove it");
    }
    p_ += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  if (is_unicode_noncharacter(cp)) {
    return fail(at, "escaped Unicode noncharacter U+" + hex4(cp),
                "I-JSON, RFC 7493 §2.1 forbids noncharacters", "remove it");
  }
  append_utf8(out, cp);
  return true;
}

// Validates one multi-byte UTF-8 sequence at p_ (Unicode Table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF) and appends it.
bool Parser::parse_utf8(std::string& out) {
  auto sequence = decode_utf8_sequence(reinterpret_cast<const unsigned char*>(p_),
                                       static_cast<size_t>(end_ - p_));
  if (!sequence) {
    return fail(p_, "invalid UTF-8 (" + describe_byte(static_cast<unsigned char>(*p_)) +
                    " starts no valid sequence here)",
                "RFC 8259 §8.1 and I-JSON: text must be UTF-8", "re-encode the document as UTF-8");
  }
  const size_t len = sequence->length;
  const uint32_t cp = sequence->code_point;
  if (is_unicode_noncharacter(cp)) {
    return fail(p_, "Unicode noncharacter U+" + hex4(cp),
                "I-JSON, RFC 7493 §2.1 forbids noncharacters", "remove it");
  }
  out.append(p_, len);
  p_ += len;
  return true;
}

// Decimal exponent of the first significant digit of a number that passed the grammar, e.g.
// 3 for "1234.5" and -3 for "0.00123e0"; tells overflow from underflow. Saturates.
long long leading_exponent(const char* s, const char* end) {
  long long position = 0;  // digits before the decimal point, minus leading zeros after it
  bool seen_nonzero = false, after_point = false;
  for (; s < end && *s != 'e' && *s != 'E'; ++s) {
    if (*s == '.') {
      after_point = true;
      continue;
    }
    if (!is_digit(*s)) continue;
    if (!seen_nonzero && *s != '0') seen_nonzero = true;
    if (!after_point && seen_nonzero) ++position;
    if (after_point && !seen_nonzero) --position;
  }
  long long exponent = 0;
  if (s < end) {
    ++s;
    bool negative = *s == '-';
    if (*s == '-' || *s == '+') ++s;
    for (; s < end && exponent < 1'000'000'000; ++s) exponent = exponent * 10 + (*s - '0');
    if (negative) exponent = -exponent;
  }
  return position - 1 + exponent;
}

bool Parser::parse_number(Json& out) {
  using json_internal::NumberError;
  const char* start = p_;
  json_internal::NumberToken t = json_internal::scan_number_token(p_, end_);
  p_ = t.end;
  switch (t.error) {
    case NumberError::kNone:
      break;
    case NumberError::kNoDigit:
      if (end_ - p_ >= 8 && std::memcmp(p_, "Infinity", 8) == 0) {
        return fail(start, "-Infinity is not a JSON number",
                    "RFC 8259 §6 and JCS: numbers are finite",
                    "write null or a string, or leave the member out");
      }
      return fail(start, "'-' must be followed by a digit", "RFC 8259 §6 number grammar",
                  "write e.g. -1 or -0.5");
    case NumberError::kLeadingZero:
      return fail(start, "leading zero in number", "RFC 8259 §6: no leading zeros",
                  "remove the leading zeros (write 7, not 07), or quote it if it is an identifier");
    case NumberError::kNoFractionDigit:
      return fail(start, "'.' in a number must be followed by a digit",
                  "RFC 8259 §6 number grammar", "write e.g. 1.0 or 1");
    case NumberError::kNoExponentDigit:
      return fail(start, "exponent without digits", "RFC 8259 §6 number grammar",
                  "write e.g. 1e5 or 1e-5");
  }
  return convert_number(start, t.digits, t.simple && t.int_digits <= 15, out);
}

// Converts the number text [start, p_), which passed the grammar, to the nearest double.
// small_integer: at most 15 digits, no fraction or exponent.
bool Parser::convert_number(const char* start, const char* digits, bool small_integer, Json& out) {
  bool negative = *start == '-';
  // Such integers are exact in a double: skip the general conversion.
  if (small_integer) {
    uint64_t v = 0;
    for (const char* d = digits; d < p_; ++d) v = v * 10 + static_cast<uint64_t>(*d - '0');
    double value = static_cast<double>(v);
    out = Json(negative ? -value : value);
    return true;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(start, p_, value);
  if (ec == std::errc::result_out_of_range) {
    if (leading_exponent(start, p_) >= 0) {
      return fail(start, "number " + std::string(start, p_) + " overflows a double",
                  "I-JSON, RFC 7493 §2.2: numbers must fit IEEE-754 double precision",
                  "write it as a string if it must be exact");
    }
    // Below half the smallest subnormal (about 2.5e-324): a double holds it only as zero,
    // which would turn a measured value into 0, as silently as overflow would into infinity.
    return fail(start, "number " + std::string(start, p_) + " underflows a double (it is not 0 "
                "but would be read as 0)",
                "I-JSON, RFC 7493 §2.2: numbers must fit IEEE-754 double precision",
                "write 0 if zero is meant, the value in a larger unit, or a string if it must be "
                "exact");
  } else if (ec != std::errc() || end != p_) {
    return fail(start, "malformed number", "RFC 8259 §6 number grammar", "write a decimal number");
  }
  out = Json(value);
  return true;
}

bool Parser::parse_literal(Json& out) {
  auto matches = [this](std::string_view word) {
    return static_cast<size_t>(end_ - p_) >= word.size() &&
           std::memcmp(p_, word.data(), word.size()) == 0;
  };
  if (matches("true")) {
    out = Json(true);
    p_ += 4;
  } else if (matches("false")) {
    out = Json(false);
    p_ += 5;
  } else if (matches("null")) {
    out = Json(nullptr);
    p_ += 4;
  } else if (matches("NaN") || matches("Infinity")) {
    return fail(p_, std::string(matches("NaN") ? "NaN" : "Infinity") + " is not a JSON number",
                "RFC 8259 §6 and JCS: numbers are finite",
                "write null or a string, or leave the member out");
  } else {
    return unexpected(p_, "a value (object, array, string, number, true, false or null)");
  }
  return true;
}

bool Parser::unexpected(const char* at, const char* expected) {
  if (at == end_) {
    return fail(at, std::string("the document ends where ") + expected + " should be",
                "RFC 8259 grammar", "complete the document");
  }
  unsigned char c = static_cast<unsigned char>(*at);
  std::string fix = c == '\''  ? "use double quotes"
                    : c == '/' ? "remove the comment (JSON has none)"
                               : std::string("write ") + expected;
  return fail(at, "unexpected " + describe_byte(c) + ", expected " + expected, "RFC 8259 grammar",
              fix);
}

bool Parser::fail(const char* at, const std::string& what, const char* rule,
                  const std::string& fix) {
  if (error_.empty()) {
    std::string where = path_text();
    error_ = position(at) + ": " + what + (where.empty() ? "" : " at " + where) + " (" + rule +
             "); " + fix;
  }
  return false;
}

// "line L, column C", both from 1; the column counts code points, not bytes.
std::string Parser::position(const char* at) const {
  size_t line = 1, column = 1;
  for (const char* s = begin_; s < at && s < end_; ++s) {
    if (*s == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(*s) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The path to where the parser is, e.g. spec.cases[3].name; keys that are not identifiers are
// written ["like this"]. Empty at the top level.
std::string Parser::path_text() const {
  std::string out;
  for (const PathSegment& segment : path_) {
    if (segment.in_array) {
      out += "[" + std::to_string(segment.index) + "]";
    } else if (segment.key == nullptr) {
      break;  // between members: the path ends at this object
    } else if (is_identifier_like(*segment.key)) {
      out += (out.empty() ? "" : ".") + *segment.key;
    } else {
      out += "[\"" + *segment.key + "\"]";
    }
  }
  return out;
}

}  // namespace

Result<Json> parse_json(std::string_view text, const JsonLimits& limits) {
  return Parser(text, limits).run();
}

}  // namespace evl
