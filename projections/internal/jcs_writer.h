// projections/internal/jcs_writer.h — writes one JCS object member by member, without building
// a Json value first: for the records the fold writes most (run views).
//
// Members must be written in JCS key order; a key out of order is a bug (EVL_ASSERT), so a
// writer that compiles and runs once in the tests keeps its order. The output equals
// jcs_serialize of the same object (tests/projections compare the two).
//
// Lifetimes: keys must outlive the writer (they are string literals). Thread safety: a value.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

class JcsObjectWriter {
 public:
  explicit JcsObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  JcsObjectWriter(const JcsObjectWriter&) = delete;
  JcsObjectWriter& operator=(const JcsObjectWriter&) = delete;
  // Closes the object.
  ~JcsObjectWriter() { out_.push_back('}'); }

  // Writes `"key":` and returns the output, for a value written by the caller. Keys are
  // member names in this code, printable ASCII that JCS writes as it is, with no escapes (the
  // tests that compare with jcs_serialize would see one that needs any).
  std::string& key(std::string_view key) {
    EVL_ASSERT(previous_.empty() || jcs_key_less(previous_, key));
    if (!previous_.empty()) out_.push_back(',');
    previous_ = key;
    out_.push_back('"');
    out_.append(key);
    out_.append("\":", 2);
    return out_;
  }

  void string(std::string_view k, std::string_view value) { jcs_append_string(key(k), value); }
  // Null for an empty string, as the stored records write absent text.
  void text_or_null(std::string_view k, std::string_view value) {
    if (value.empty()) {
      null(k);
    } else {
      string(k, value);
    }
  }
  void opt_string(std::string_view k, const std::optional<std::string>& value) {
    if (value) {
      string(k, *value);
    } else {
      null(k);
    }
  }
  void number(std::string_view k, double value) { jcs_append_number(key(k), value); }
  void opt_number(std::string_view k, const std::optional<double>& value) {
    if (value) {
      number(k, *value);
    } else {
      null(k);
    }
  }
  void boolean(std::string_view k, bool value) { key(k) += value ? "true" : "false"; }
  void null(std::string_view k) { key(k) += "null"; }
  // "sha256:<hex>", as digest_text writes it.
  void digest(std::string_view k, const Digest& value) {
    std::string& out = key(k);
    out += "\"sha256:";
    hex_append(out, value);
    out.push_back('"');
  }
  void json(std::string_view k, const Json& value) { jcs_append(key(k), value); }

 private:
  std::string& out_;
  std::string_view previous_;
};

}  // namespace evl
