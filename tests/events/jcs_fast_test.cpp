// Tests for jcs_check_canonical: it must accept exactly the texts that jcs_canonicalize leaves
// unchanged. A differential test over seeded random canonical texts and mutations of them, the
// shared number vectors, and messages for each rule.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "events/json.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

bool reference_canonical(std::string_view text, const JsonLimits& limits = {}) {
  Result<std::string> canonical = jcs_canonicalize(text, limits);
  return canonical.has_value() && *canonical == text;
}

// Checks that both methods agree on text; returns whether it is canonical.
bool agree(std::string_view text, const JsonLimits& limits = {}) {
  bool expected = reference_canonical(text, limits);
  Status fast = jcs_check_canonical(text, limits);
  INFO("text: " << text);
  INFO("fast: " << (fast.is_ok() ? std::string("ok") : fast.message()));
  CHECK(fast.is_ok() == expected);
  if (!fast.is_ok()) CHECK(!fast.message().empty());
  return expected;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Seeded generator of Json values whose canonical texts exercise every canonical rule.
class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }

  uint32_t code_point() {
    static constexpr uint32_t kPicks[] = {
        0x00,    0x01,    0x08,    0x09,    0x0A,    0x0C,    0x0D,    0x1F,    '"',
        '\\',    '/',     0x7F,    0xE9,    0x80,    0x7FF,   0x800,   0x2028,  0xD7FF,
        0xE000,  0xFDCF,  0xFDF0,  0xFFFD,  0xFB01,  0xFF21,  0x10000, 0x1F600, 0x1D11E,
        0x10FFFD, 0xEFFFD};
    switch (below(4)) {
      case 0: return kPicks[below(std::size(kPicks))];
      case 1: return static_cast<uint32_t>(0x20 + below(0x5F));
      default: return static_cast<uint32_t>('a' + below(4));
    }
  }

  std::string text(size_t max_length) {
    std::string out;
    size_t n = below(max_length + 1);
    for (size_t i = 0; i < n; ++i) append_utf8(out, code_point());
    return out;
  }

  double number() {
    static constexpr double kPicks[] = {0.0,     -0.0,   1.0,    -1.0,   0.1,     0.5,   1e21,
                                        1e20,    1e-7,   1e-6,   1.5e-7, 5e-324,  -5e-324,
                                        1.7976931348623157e308, 2.2250738585072014e-308,
                                        9007199254740991.0, 9007199254740992.0, 9007199254740993.0,
                                        123456789012345680000.0, 0.000010048658277929109, 333.333};
    switch (below(5)) {
      case 0: return kPicks[below(std::size(kPicks))];
      case 1: {
        double v;
        do {
          uint64_t bits = rng_();
          std::memcpy(&v, &bits, sizeof v);
        } while (!std::isfinite(v));
        return v;
      }
      case 2: return static_cast<double>(static_cast<int64_t>(rng_() % (uint64_t{1} << 53)) *
                                         (chance(50) ? 1 : -1));
      case 3: return static_cast<double>(static_cast<int64_t>(below(2000)) - 1000) /
                     std::pow(10.0, static_cast<double>(below(8)));
      default: return static_cast<double>(below(1000));
    }
  }

  Json value(int depth) {
    size_t kind = depth > 4 ? below(4) : below(7);
    switch (kind) {
      case 0: return chance(50) ? Json(nullptr) : Json(chance(50));
      case 1: return Json(number());
      case 2:
      case 3: return Json(text(6));
      case 4: {
        Json::Array elements;
        for (size_t i = below(5); i > 0; --i) elements.push_back(value(depth + 1));
        return Json(std::move(elements));
      }
      default: {
        Json object = Json::object();
        for (size_t i = below(7); i > 0; --i) object.set(text(4), value(depth + 1));
        return object;
      }
    }
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// A serializer that writes canonical text but, once per call at most, breaks one rule: swapped
// or duplicated members, or a non-canonical number spelling.
class Breaker {
 public:
  explicit Breaker(Generator& gen) : gen_(gen) {}
  std::string write(const Json& value) {
    out_.clear();
    broken_ = false;
    append(value);
    return out_;
  }

 private:
  void append(const Json& value) {
    if (value.is_number() && !broken_ && gen_.chance(15)) {
      broken_ = true;
      out_ += respell(value.as_number());
      return;
    }
    if (value.is_array()) {
      out_.push_back('[');
      bool first = true;
      for (const Json& element : value.as_array()) {
        if (!first) out_.push_back(',');
        first = false;
        append(element);
      }
      out_.push_back(']');
      return;
    }
    if (!value.is_object()) {
      jcs_append(out_, value);
      return;
    }
    std::vector<const Json::Member*> order;
    for (const Json::Member& member : value.as_object()) order.push_back(&member);
    std::sort(order.begin(), order.end(), [](const Json::Member* a, const Json::Member* b) {
      return jcs_key_less(a->first, b->first);
    });
    if (!broken_ && order.size() >= 2 && gen_.chance(30)) {
      broken_ = true;
      size_t i = gen_.below(order.size() - 1);
      if (gen_.chance(50)) {
        std::swap(order[i], order[i + 1]);
      } else {
        order.insert(order.begin() + static_cast<long>(i) + 1, order[i]);  // duplicate key
      }
    } else if (!broken_ && order.size() == 1 && gen_.chance(20)) {
      broken_ = true;
      order.push_back(order[0]);
    }
    out_.push_back('{');
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0) out_.push_back(',');
      jcs_append(out_, Json(order[i]->first));
      out_.push_back(':');
      append(order[i]->second);
    }
    out_.push_back('}');
  }

  std::string respell(double d) {
    std::string s = jcs_number(d);
    char buf[64];
    switch (gen_.below(6)) {
      case 0: {
        size_t e = s.find('e');
        if (e != std::string::npos) return s.substr(0, e) + "E" + s.substr(e + 1);
        return s.find('.') == std::string::npos ? s + ".0" : s + "0";
      }
      case 1: {
        size_t plus = s.find("e+");
        if (plus != std::string::npos) return s.substr(0, plus + 1) + s.substr(plus + 2);
        return s + "e0";
      }
      case 2: std::snprintf(buf, sizeof buf, "%.17g", d); return buf;
      case 3: std::snprintf(buf, sizeof buf, "%.17e", d); return buf;
      case 4: return d == 0 ? "-0" : s;  // unchanged when not zero: must stay canonical
      default: std::snprintf(buf, sizeof buf, "%.15g", d); return buf;
    }
  }

  Generator& gen_;
  std::string out_;
  bool broken_ = false;
};

void replace_first(std::string& s, std::string_view from, std::string_view to) {
  size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
}

// Byte- and token-level mutations of a canonical text.
std::string mutate(Generator& gen, std::string t) {
  size_t pos = t.empty() ? 0 : gen.below(t.size() + 1);
  static constexpr const char* kWhitespace[] = {" ", "\n", "\t", "\r"};
  static constexpr const char* kGarbage[] = {" ", "x", ",", "}", "]", "0", "\"", "\\", "\xC3",
                                             "\xFF", "\x01", "{}", "null"};
  switch (gen.below(14)) {
    case 0: t.insert(pos, kWhitespace[gen.below(4)]); break;
    case 1: t.resize(t.empty() ? 0 : gen.below(t.size())); break;  // truncate
    case 2: t += kGarbage[gen.below(std::size(kGarbage))]; break;
    case 3:
      if (!t.empty()) t[gen.below(t.size())] ^= static_cast<char>(1u << gen.below(8));
      break;
    case 4:
      if (!t.empty()) t[gen.below(t.size())] = static_cast<char>(gen.below(256));
      break;
    case 5:
      if (!t.empty()) t.erase(gen.below(t.size()), 1);
      break;
    case 6: t.insert(pos, kGarbage[gen.below(std::size(kGarbage))]); break;
    case 7: replace_first(t, "\xC3\xA9", gen.chance(50) ? "\\u00e9" : "\\u00E9"); break;
    case 8: replace_first(t, "\\n", gen.chance(50) ? "\\u000a" : "\\u000A"); break;
    case 9: replace_first(t, "\\u001f", gen.chance(50) ? "\\u001F" : "\\u001f\\/"); break;
    case 10: replace_first(t, "/", "\\/"); break;
    case 11: replace_first(t, "\xF0\x9F\x98\x80", gen.chance(50) ? "\\ud83d\\ude00" : "\\ud83d"); break;
    case 12: replace_first(t, "\\\"", gen.chance(50) ? "\\u0022" : "\\udc00"); break;
    default: replace_first(t, ":", gen.chance(50) ? ": " : "::"); break;
  }
  return t;
}

TEST_CASE("jcs_check_canonical agrees with jcs_canonicalize on random texts and mutations",
          "[jcs][fast]") {
  Generator gen(0x5EED'0BAD'CAFEull);
  Breaker breaker(gen);
  int canonical = 0, rejected_count = 0;
  for (int round = 0; round < 3000; ++round) {
    Json value = gen.value(1);
    std::string text = jcs_serialize(value);
    REQUIRE(jcs_check_canonical(text).is_ok());
    REQUIRE(reference_canonical(text));
    ++canonical;
    (agree(breaker.write(value)) ? canonical : rejected_count)++;
    for (int m = 0; m < 8; ++m) {
      std::string mutated = mutate(gen, text);
      if (gen.chance(20)) mutated = mutate(gen, mutated);
      (agree(mutated) ? canonical : rejected_count)++;
    }
  }
  // Both outcomes are well represented.
  CHECK(canonical > 3000);
  CHECK(rejected_count > 10000);
}

TEST_CASE("jcs_check_canonical agrees on hand-picked texts", "[jcs][fast]") {
  const char* kTexts[] = {
      "", " ", "0", "-0", "1", "-1", "1.0", "1E21", "1e21", "1e+21", "1e+021", "100", "1e2",
      "0.1", "0.10", ".1", "01", "-", "1.", "1e", "1e+", "5e-324", "4.9e-324", "1e400", "1e-400",
      "-1e-400", "9007199254740991", "9007199254740992", "9007199254740993", "123456789012345680000",
      "123456789012345678901", "1.7976931348623157e+308", "0.000001", "1e-7", "0.0000001",
      "1.5e-7", "true", "false", "null", "nul", "True", "NaN", "Infinity", "-Infinity", "\"\"",
      "0e5", "0E1", "0.5e1", "12.5e3", "0.000001", "0.0000001", "-0.000001", "0.000005",
      "0.0000015", "123456789012.345", "1234567890123.456", "0.123456789012345",
      "0.1234567890123456", "0.30000000000000004", "0.3", "100.5", "100.50", "-100.5", "0.0",
      "-0.0", "0.05", "9.999999999999999", "99999999999999.9", "999999999999999.9",
      "\"a\"", "\"\\/\"", "\"/\"", "\"\\u0000\"", "\"\\u001f\"", "\"\\u001F\"", "\"\\u0008\"",
      "\"\\b\"", "\"\\u007f\"", "\"\x7F\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud83d\\ude00\"",
      "\"\xF0\x9F\x98\x80\"", "\"\xED\xA0\x80\"", "\"\xC0\xAF\"", "\"\xEF\xBF\xBE\"",
      "\"\xEF\xB7\x90\"", "\"\xF4\x90\x80\x80\"", "\"\\uFFFE\"", "\"\\x\"", "\"\\", "\"\x01\"",
      "[]", "{}", "[ ]", "[1,]", "[,1]", "[1,2]", "{\"a\":1,}", "{\"a\":1}", "{\"a\" :1}",
      "{\"b\":1,\"a\":2}", "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":2}", "{\"\":1,\"a\":2}",
      "{\"a\":1,\"\":2}", "{\"\\n\":1,\"a\":2}", "{\"a\":1,\"\\n\":2}", "{\"\\\"\":1,\"\\\\\":2}",
      "{\"\\\\\":1,\"\\\"\":2}", "{\"\\u0001\":1,\"\\b\":2}", "{\"\\b\":1,\"\\u0001\":2}",
      "{\"\\u0000\":1,\"\\u0000\":2}", "{\"a\\n\":1,\"a\\u000b\":2}",
      "{\"\xEF\xBC\xA1\":1,\"\xF0\x9F\x98\x80\":2}", "{\"\xF0\x9F\x98\x80\":1,\"\xEF\xBC\xA1\":2}",
      "{\"\xEE\x80\x80\":1,\"\xF0\x90\x80\x80\":2}", "{\"\xF0\x90\x80\x80\":1,\"\xEE\x80\x80\":2}",
      "{\"ab\":1,\"a\":2}", "{\"a\":1,\"ab\":2}", "{\"a\":{\"b\":1,\"a\":2}}", "{\"a\":{\"a\":1},\"a\":2}",
      "{\"b\":{\"c\":1},\"a\":2}", "{\"a\":[{\"b\":1,\"c\":2}],\"b\":{}}", "[1]x", "[1] ", "\xEF\xBB\xBF[]",
      "{1:2}", "{\"a\"}", "{\"a\":}", "[\"a\":1]", "'a'", "[1,2]]", "[[[]]]", "{\"a\":1}}",
  };
  for (const char* text : kTexts) agree(text);
}

TEST_CASE("jcs_check_canonical enforces the nesting and size limits", "[jcs][fast]") {
  for (int depth : {1, 2, 63, 64, 65, 100, 200}) {
    std::string arrays = std::string(static_cast<size_t>(depth), '[') +
                         std::string(static_cast<size_t>(depth), ']');
    std::string objects;
    for (int i = 0; i < depth; ++i) objects += "{\"a\":";
    objects += "1" + std::string(static_cast<size_t>(depth), '}');
    for (int max_depth : {0, 1, 64, 100, 300}) {
      JsonLimits limits;
      limits.max_depth = max_depth;
      INFO("depth " << depth << ", max_depth " << max_depth);
      CHECK(agree(arrays, limits) == (depth <= max_depth));
      CHECK(agree(objects, limits) == (depth <= max_depth));
    }
  }
  // Past the inline stack: keys at deep levels are still compared with their own level's.
  JsonLimits deep;
  deep.max_depth = 300;
  std::string good, bad;
  for (int i = 0; i < 150; ++i) good += "{\"a\":1,\"b\":";
  good += "0" + std::string(150, '}');
  CHECK(agree(good, deep));
  for (int i = 0; i < 150; ++i) bad += "{\"b\":1,\"c\":";
  bad += "{\"b\":1,\"a\":2}" + std::string(150, '}');
  CHECK_FALSE(agree(bad, deep));

  JsonLimits small;
  small.max_bytes = 4;
  CHECK(agree("[12]", small));
  CHECK_FALSE(agree("[123]", small));
  CHECK_FALSE(jcs_check_canonical("64", JsonLimits{64, 1}).is_ok());
}

TEST_CASE("jcs_check_canonical explains what is wrong and how to fix it", "[jcs][fast]") {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case kCases[] = {
      {"{\"a\": 1}", "byte offset 5: whitespace"},
      {"{\"b\":1,\"a\":2}", "key \"a\" comes after \"b\""},
      {"{\"a\":1,\"a\":2}", "duplicate key \"a\""},
      {"\"\\u00e9\"", "unnecessary escape \\u00e9"},
      {"\"\\u000a\"", "where \\n is required"},
      {"\"\\u001F\"", "uppercase hex"},
      {"\"\\/\"", "escape \\/"},
      {"1.0", "number 1.0 is not in canonical form 1"},
      {"1E21", "canonical form 1e+21"},
      {"-0", "number -0"},
      {"\"\xC0\xAF\"", "invalid UTF-8"},
      {"\"\\ud800\"", "lone high surrogate"},
      {"\"\\udc00\"", "lone low surrogate"},
      {"\"\xEF\xBF\xBF\"", "noncharacter U+FFFF"},
      {"[1]x", "unexpected 'x'"},
      {"", "empty document"},
      {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
       "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
       "array nested deeper than 64 levels"},
  };
  for (const Case& c : kCases) {
    Status status = jcs_check_canonical(c.text);
    INFO("text: " << c.text);
    REQUIRE_FALSE(status.is_ok());
    CHECK(status.code() == Code::kRejected);
    CHECK_THAT(status.message(), Catch::Contains(c.expected));
    CHECK_THAT(status.message(), Catch::Contains("RFC") || Catch::Contains("limit"));
  }
  CHECK_THAT(jcs_check_canonical("{\"a\": 1}").message(),
             Catch::Contains("RFC 8785") && Catch::Contains("evledger import"));
}

TEST_CASE("jcs_check_canonical accepts the shared canonical numbers and rejects respellings",
          "[jcs][fast]") {
  auto shared = test::shared_dir();
  if (!shared || !std::filesystem::exists(*shared / "vectors/jcs/numbers.txt")) {
    WARN("no shared vectors/jcs/numbers.txt; skipped");
    return;
  }
  std::ifstream in(*shared / "vectors/jcs/numbers.txt");
  std::string line;
  int accepted = 0, respellings = 0;
  while (std::getline(in, line)) {
    size_t comma = line.find(',');
    if (line.empty() || comma == std::string::npos) continue;
    std::string text = line.substr(comma + 1);
    INFO("vector: " << line);
    CHECK(jcs_check_canonical(text).is_ok());
    CHECK(jcs_check_canonical("[" + text + "]").is_ok());
    ++accepted;
    std::vector<std::string> wrong;
    size_t e = text.find('e');
    if (e != std::string::npos) {
      wrong.push_back(text.substr(0, e) + "E" + text.substr(e + 1));
      if (text[e + 1] == '+') wrong.push_back(text.substr(0, e + 1) + text.substr(e + 2));
    } else if (text.find('.') != std::string::npos) {
      wrong.push_back(text + "0");
    } else {
      wrong.push_back(text + ".0");
      if (text == "0") wrong.push_back("-0");
    }
    double value = 0;
    std::sscanf(text.c_str(), "%lf", &value);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    if (text != buf) wrong.push_back(buf);
    for (const std::string& w : wrong) {
      INFO("respelling: " << w);
      CHECK_FALSE(jcs_check_canonical(w).is_ok());
      CHECK_FALSE(reference_canonical(w));
      ++respellings;
    }
  }
  CHECK(accepted > 1000);
  CHECK(respellings > accepted);
}

}  // namespace
}  // namespace evl
