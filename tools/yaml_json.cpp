#include "tools/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "events/utf8.h"

namespace evl::cli {
namespace {

constexpr int kMaxYamlDepth = 64;  // as JsonLimits::max_depth
constexpr uint64_t kMaxSafeInteger = (uint64_t{1} << 53) - 1;

// ---- YAML 1.2 core schema → Json ----------------------------------------------------------

const std::string kTagStr = "tag:yaml.org,2002:str";
const std::string kTagInt = "tag:yaml.org,2002:int";
const std::string kTagFloat = "tag:yaml.org,2002:float";
const std::string kTagBool = "tag:yaml.org,2002:bool";
const std::string kTagNull = "tag:yaml.org,2002:null";
const std::string kTagMap = "tag:yaml.org,2002:map";
const std::string kTagSeq = "tag:yaml.org,2002:seq";

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}
bool is_dec(char c) { return c >= '0' && c <= '9'; }
bool is_oct(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool is_core_int(std::string_view s) {
  if (s.substr(0, 2) == "0o") return all_of(s.substr(2), is_oct);
  if (s.substr(0, 2) == "0x") return all_of(s.substr(2), is_hex);
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return all_of(s, is_dec);
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_core_float(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_dec(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_dec(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_dec(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

bool is_core_special_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s == ".inf" || s == ".Inf" || s == ".INF" || s == ".nan" || s == ".NaN" ||
         s == ".NAN";
}

bool has_noncharacter(std::string_view s) {  // s is valid UTF-8
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<uint8_t>(s[i]);
    uint32_t cp;
    size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    cp = n == 1 ? b : b & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) return true;
    i += n;
  }
  return false;
}

class JsonBuilder : public YAML::EventHandler {
 public:
  // Documents that start at or after `end` (the sentinel yaml_to_json appends) are not kept.
  explicit JsonBuilder(size_t end) : end_(end) {}

  // The documents completed so far; the first problem stops the building.
  std::vector<Json> documents;
  std::optional<std::string> error;

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 starts a document again and again at a ',' outside a flow collection,
    // without reading it: a document that starts where the last one did is that loop.
    if (last_start_ == mark.pos) {
      return fail(mark, "not valid YAML: a document cannot begin here (at a ',' outside "
                        "'[ ]' or '{ }', for one)",
                  "remove it");
    }
    last_start_ = mark.pos;
    past_end_ = static_cast<size_t>(mark.pos) >= end_;
    stack_.clear();
    root_.reset();
  }
  void OnDocumentEnd() override {
    if (error || past_end_) return;
    documents.push_back(root_ ? std::move(*root_) : Json());
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!check_anchor(mark, anchor)) return;
    if (expecting_key()) return fail(mark, "a mapping key is null", "give every key a name");
    add(mark, Json());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    fail(mark, "an alias (*name) has no JSON meaning", "write the value out in full");
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    fail(mark, "an anchor (&" + name + ") has no JSON meaning", "remove it");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!check_anchor(mark, anchor)) return;
    if (!is_valid_utf8(value)) return fail(mark, "the text is not valid UTF-8", "re-encode it");
    if (has_noncharacter(value)) {
      return fail(mark, "the text holds a Unicode noncharacter (I-JSON forbids them)",
                  "remove it");
    }
    if (expecting_key()) {
      if (tag != "?" && tag != "!" && tag != kTagStr) {
        return fail(mark, "a mapping key has tag " + tag, "keys are plain strings; drop the tag");
      }
      if (tag == "?" && value == "<<") {
        return fail(mark, "'<<' merge keys have no JSON meaning", "write the members out");
      }
      Frame& top = stack_.back();
      if (top.keys.count(value) != 0) {
        return fail(mark, "duplicate key \"" + value + "\"", "keep one of them");
      }
      top.keys.insert(value);
      top.key = value;
      top.has_key = true;
      return;
    }
    auto resolved = resolve(tag, value);
    if (!resolved) return fail(mark, resolved.error().message(), "");
    add(mark, std::move(*resolved));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, kTagSeq, Json::array());
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, tag, anchor, kTagMap, Json::object());
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    Json value;
    YAML::Mark mark;
    bool has_key = false;
    std::string key;
    std::unordered_set<std::string> keys;
  };

  void fail(const YAML::Mark& mark, const std::string& what, const std::string& fix) {
    if (error) return;
    error = "line " + std::to_string(mark.line + 1) + ", column " +
            std::to_string(mark.column + 1) + ": " + visible_text(what) +
            (fix.empty() ? "" : "; " + fix);
  }
  bool check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (error) return false;
    if (anchor != YAML::NullAnchor) {
      fail(mark, "an anchor (&name) has no JSON meaning", "remove it");
      return false;
    }
    return true;
  }
  bool expecting_key() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().has_key;
  }
  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            const std::string& core_tag, Json value) {
    if (!check_anchor(mark, anchor)) return;
    if (tag != "?" && tag != "!" && tag != core_tag) {
      return fail(mark, "tag " + tag + " has no JSON meaning", "remove it");
    }
    if (expecting_key()) {
      return fail(mark, "a mapping key is a collection", "keys are plain strings");
    }
    if (static_cast<int>(stack_.size()) >= kMaxYamlDepth) {
      return fail(mark, "the YAML nests deeper than " + std::to_string(kMaxYamlDepth) +
                            " levels (a manifest needs far fewer)",
                  "flatten it");
    }
    stack_.push_back(Frame{std::move(value), mark, false, {}, {}});
  }
  void close() {
    if (error || stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    add(frame.mark, std::move(frame.value));
  }
  void add(const YAML::Mark& mark, Json value) {
    if (error) return;
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    if (top.value.is_array()) {
      top.value.as_array().push_back(std::move(value));
    } else {
      top.value.as_object().emplace_back(std::move(top.key), std::move(value));
      top.has_key = false;
    }
  }

  static Result<Json> resolve(const std::string& tag, const std::string& text);

  std::vector<Frame> stack_;
  std::optional<Json> root_;
  std::optional<int> last_start_;  // the position of the last document start
  size_t end_;
  bool past_end_ = false;
};

Result<Json> number_from(const std::string& text) {
  std::string_view s = text;
  if (s.substr(0, 2) == "0o" || s.substr(0, 2) == "0x") {
    int base = s[1] == 'o' ? 8 : 16;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str() + 2, nullptr, base);
    if (errno == ERANGE || v > kMaxSafeInteger) {
      return rejected("the integer " + text + " is beyond 2^53-1, which a JSON number cannot "
                      "hold exactly");
    }
    return Json(static_cast<double>(v));
  }
  errno = 0;
  double v = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) {
    return rejected("the number " + text + " overflows a double; I-JSON numbers are finite");
  }
  if (errno == ERANGE && v == 0) {  // not 0, but below the smallest double: as parse_json
    return rejected("the number " + text + " underflows a double (it is not 0 but would be read "
                    "as 0); write 0 if zero is meant, or the value in a larger unit");
  }
  return Json(v);
}

Result<Json> JsonBuilder::resolve(const std::string& tag, const std::string& text) {
  if (tag == "!" || tag == kTagStr) return Json(text);
  if (tag == kTagNull) {
    if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
      return Json();
    }
    return rejected("!!null \"" + text + "\" is not null, ~ or empty");
  }
  bool plain = tag == "?";
  if (plain || tag == kTagBool) {
    if (text == "true" || text == "True" || text == "TRUE") return Json(true);
    if (text == "false" || text == "False" || text == "FALSE") return Json(false);
    if (!plain) return rejected("!!bool " + text + " is not true or false");
  }
  if (plain || tag == kTagInt || tag == kTagFloat) {
    if (is_core_special_float(text)) {
      return rejected(text + " (infinity or NaN) has no JSON meaning; I-JSON numbers are "
                      "finite; write a number or quote it as a string");
    }
    if (is_core_int(text) || (tag != kTagInt && is_core_float(text))) return number_from(text);
    if (!plain) return rejected(tag + " \"" + text + "\" is not a number");
  }
  if (plain) return Json(text);
  return rejected("tag " + tag + " has no JSON meaning; remove it");
}


// The first byte that YAML 1.2 does not allow in a text (c-printable, §5.1), with its line and
// column, as a message; empty when there is none. Invalid UTF-8 and control characters are
// refused here rather than left to yaml-cpp, which reads a NUL as the end of the text and
// quotes raw bytes in its messages.
std::string unprintable_yaml(std::string_view text) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    size_t length = 1;
    std::string problem;
    if (b >= 0x80) {
      auto seq = decode_utf8_sequence(reinterpret_cast<const unsigned char*>(text.data()) + i,
                                      text.size() - i);
      if (!seq) {
        problem = "byte " + visible_text(text.substr(i, 1)) + " is not UTF-8; re-encode the text "
                  "as UTF-8";
      } else if (seq->code_point >= 0x80 && seq->code_point <= 0x9F &&
                 seq->code_point != 0x85) {
        problem = "control character " + visible_text(text.substr(i, seq->length)) +
                  " is not allowed in YAML text; remove it, or write it as an escape in a "
                  "double-quoted string";
      } else {
        length = seq->length;
      }
    } else if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F) {
      problem = (b == 0 ? std::string("a NUL byte (\\x00)")
                        : "control character " + visible_text(text.substr(i, 1))) +
                " is not allowed in YAML text; remove it, or write it as an escape in a "
                "double-quoted string";
    }
    if (!problem.empty()) {
      return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + problem;
    }
    if (b == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += length;
  }
  return {};
}

}  // namespace

Result<std::vector<Json>> yaml_to_json(const std::string& text) {
  if (std::string bad = unprintable_yaml(text); !bad.empty()) return rejected(bad);
  // yaml-cpp 0.7 takes a quoted scalar that is still open at a line break just before the end
  // of its input as complete, so that a document cut off inside a string would pass. A final
  // '...' line, which no quoted scalar may hold, makes that an error and changes nothing else.
  std::string sentinel_text = text;
  if (!sentinel_text.empty() && sentinel_text.back() != '\n') sentinel_text.push_back('\n');
  const size_t end = sentinel_text.size();
  const int last_line = static_cast<int>(std::count(text.begin(), text.end(), '\n')) +
                        (text.empty() || text.back() == '\n' ? 0 : 1);
  sentinel_text += "...\n";
  std::istringstream in(sentinel_text);
  JsonBuilder builder(end);
  try {
    YAML::Parser parser(in);
    while (!builder.error && parser.HandleNextDocument(builder)) {
    }
  } catch (const YAML::Exception& e) {
    // The builder meets a problem as the parser reports each node, before yaml-cpp's own
    // checks of the rest of the document (its depth guard at 500 levels says "bad file").
    if (builder.error) return rejected(*builder.error);
    if (static_cast<size_t>(e.mark.pos) >= end) {
      return rejected("line " + std::to_string(std::max(last_line, 1)) +
                      ", column 1: not valid YAML: the text ends inside a quoted string or a "
                      "flow collection; close it");
    }
    return rejected("line " + std::to_string(e.mark.line + 1) + ", column " +
                    std::to_string(e.mark.column + 1) + ": not valid YAML: " +
                    visible_text(e.msg));
  }
  if (builder.error) return rejected(*builder.error);
  return std::move(builder.documents);
}

}  // namespace evl::cli
