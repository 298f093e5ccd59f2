#include "events/jcs.h"

#include <double-conversion/double-conversion.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <vector>

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

void append_string(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
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

}  // namespace evl
