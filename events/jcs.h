// events/jcs.h — RFC 8785 JSON Canonicalization Scheme (JCS): the bytes evledger hashes.
//
// The canonical form of a value: no whitespace; object members sorted by their keys' UTF-16
// code units (which differs from UTF-8 byte order when a key holds both U+E000..U+FFFF and
// characters above U+FFFF); strings with only \" \\ \b \t \n \f \r and \u00xx (lowercase hex,
// for the other controls) escaped and every other character as literal UTF-8; numbers in
// ECMAScript Number::toString form (1e+21, 0.000001, 1e-7, 100, -0 as 0); arrays in order.
//
// Preconditions (a Json from parse_json always meets them; violating them is a bug, caught by
// EVL_ASSERT): numbers are finite, object keys are unique, strings are valid UTF-8.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "events/json.h"
#include "events/status.h"

namespace evl {

// The canonical text of a value.
std::string jcs_serialize(const Json& value);
// Appends the canonical text of a value to out (saves a copy when building larger texts).
void jcs_append(std::string& out, const Json& value);

// Append the canonical text of one string (valid UTF-8) or one finite number: for writers that
// emit a known object member by member instead of building a Json value.
void jcs_append_string(std::string& out, std::string_view utf8);
void jcs_append_number(std::string& out, double value);

// Parses with parse_json (whose errors it returns unchanged) and serializes canonically.
Result<std::string> jcs_canonicalize(std::string_view json_text, const JsonLimits& limits = {});

// ECMAScript Number::toString of a finite double: the shortest text that reads back as the same
// double, e.g. 0.1, 100, 1e+21, 1.5e-7, 0.000010048658277929109; -0 is "0".
std::string jcs_number(double value);

// True when key a sorts before key b in JCS order (UTF-16 code units); both valid UTF-8.
bool jcs_key_less(std::string_view a, std::string_view b);

// Checks, in one pass over the bytes and without building a tree, that text is already the
// RFC 8785 canonical form of a JSON value: ok exactly when jcs_canonicalize(text, limits)
// succeeds and returns text unchanged. Otherwise kRejected with "byte offset N: <what is wrong>
// (<rule>); <how to fix it>", e.g. whitespace, an unsorted or duplicate key, a non-minimal
// string escape, a non-canonical number spelling (1.0, 1E21, -0), invalid UTF-8, a lone
// surrogate, nesting deeper than limits.max_depth, text after the value. Does not allocate
// for valid input nested at most 64 deep (only error messages allocate).
Status jcs_check_canonical(std::string_view text, const JsonLimits& limits = {});

}  // namespace evl
