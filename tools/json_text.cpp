#include "tools/json_text.h"

#include <string_view>

#include "events/jcs.h"
#include "events/utf8.h"
#include "projections/query.h"

namespace evl::cli {

std::string json_line(const Json& value) { return jcs_serialize(value); }

std::string short_digest(std::string text, size_t hex_digits) {
  const size_t cut = std::string_view("sha256:").size() + hex_digits;
  if (text.size() <= cut) return text;
  text.resize(cut);
  return text + std::string(kEllipsis);
}

std::string padded(std::string text, size_t width) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;  // not a continuation byte
  if (chars < width) text.append(width - chars, ' ');
  return text;
}

std::string text_of(const Json* value) {
  if (value == nullptr || value->is_null()) return "-";
  if (value->is_string()) return visible_text(value->as_string());
  return jcs_serialize(*value);
}

}  // namespace evl::cli
