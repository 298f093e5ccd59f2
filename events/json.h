// events/json.h — evledger's JSON value and its strict parser (RFC 8259 + I-JSON, RFC 7493).
//
// Json is a plain value type: null, bool, number (an IEEE-754 double), string (valid UTF-8),
// array, or object. An object keeps its members in input order as key/value pairs; find()
// looks a key up. Canonical output (sorted keys, ECMAScript numbers) lives in events/jcs.h.
//
// parse_json accepts only what a JCS canonicalizer may hash. It rejects, with kRejected and a
// message "line L, column C: <what is wrong> (<rule>); <how to fix it>":
//   - anything outside the RFC 8259 grammar: trailing commas, comments, single quotes, a '+'
//     sign, leading zeros ("01"), "1." or ".5", hex, NaN/Infinity, text after the value, an
//     empty document, a UTF-8 byte order mark;
//   - duplicate object keys (the message names the key and its path, e.g. `spec.timing`);
//   - invalid UTF-8 (overlong forms, encoded surrogates, code points above U+10FFFF, truncated
//     sequences), unescaped control characters in strings, unknown escapes, lone surrogate
//     escapes, and Unicode noncharacters (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF) escaped or not,
//     which I-JSON forbids;
//   - numbers whose magnitude overflows a double (1e400). Numbers below the smallest subnormal
//     round to 0 as in ECMAScript; all others are correctly rounded to the nearest double;
//   - nesting deeper than JsonLimits::max_depth and documents larger than
//     JsonLimits::max_bytes (the security limits; see JsonLimits).
//
// Thread safety: Json is a value type (no shared state); parse_json is a pure function.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "events/status.h"

namespace evl {

class Json {
 public:
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;  // input order; keys unique when it came from parse_json

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool value) : value_(value) {}
  // A number must be finite for jcs_serialize; a NaN or infinity there is a bug (EVL_ASSERT).
  Json(double value) : value_(value) {}
  template <std::integral T>
  requires(!std::same_as<T, bool>) Json(T value) : value_(static_cast<double>(value)) {}
  // Strings must be valid UTF-8; jcs_serialize copies their bytes as they are.
  Json(std::string value) : value_(std::move(value)) {}
  Json(std::string_view value) : value_(std::string(value)) {}
  Json(const char* value) : value_(std::string(value)) {}
  Json(Array value) : value_(std::move(value)) {}
  Json(Object value) : value_(std::move(value)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  Type type() const { return static_cast<Type>(value_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Accessors for the held type; asking for another type is a bug (std::bad_variant_access).
  bool as_bool() const { return std::get<bool>(value_); }
  double as_number() const { return std::get<double>(value_); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  const Array& as_array() const { return std::get<Array>(value_); }
  const Object& as_object() const { return std::get<Object>(value_); }
  std::string& as_string() { return std::get<std::string>(value_); }
  Array& as_array() { return std::get<Array>(value_); }
  Object& as_object() { return std::get<Object>(value_); }

  // Make this value an empty string, array or object in place (whatever it held is dropped)
  // and return it, to be filled where it lies: the parser builds its values so.
  std::string& make_string() { return value_.emplace<std::string>(); }
  Array& make_array() { return value_.emplace<Array>(); }
  Object& make_object() { return value_.emplace<Object>(); }

  // The member named key, or nullptr when this is not an object or has no such key.
  // The pointer is valid until this object is modified or destroyed.
  const Json* find(std::string_view key) const;
  Json* find(std::string_view key);
  // Replaces the member named key or appends it; this must be an object.
  Json& set(std::string key, Json value);

  friend bool operator==(const Json& a, const Json& b) { return a.value_ == b.value_; }

 private:
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> value_;
};

// The name of a type for messages: "null", "boolean", "number", "string", "array", "object".
const char* json_type_name(Json::Type type);

// Security limits, enforced while parsing untrusted bytes.
struct JsonLimits {
  // Recursion depth of arrays and objects: the top-level value is depth 1. Bounds the parser's
  // stack use; KernelIndex manifests nest about 6 deep.
  int max_depth = 64;
  // Whole document size. Bounds memory (a parsed tree takes a few times the text size).
  size_t max_bytes = size_t{64} << 20;
};

// Parses one JSON document. Errors (all kRejected) are listed at the top of this file.
Result<Json> parse_json(std::string_view text, const JsonLimits& limits = {});

}  // namespace evl
