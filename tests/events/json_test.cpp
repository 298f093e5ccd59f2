#include "events/json.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

namespace evl {
namespace {

std::string rejection(std::string_view text, const JsonLimits& limits = {}) {
  Result<Json> parsed = parse_json(text, limits);
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().code() == Code::kRejected);
  return parsed.error().message();
}

TEST_CASE("parse_json reads every kind of value and keeps object members in input order",
          "[events][json]") {
  Result<Json> parsed =
      parse_json(R"( {"z": [1, -2.5, 3e2, true, false, null], "a": {"k": "v"}, "m": ""} )");
  REQUIRE(parsed.has_value());
  const Json& doc = *parsed;
  REQUIRE(doc.is_object());
  REQUIRE(doc.as_object().size() == 3);
  CHECK(doc.as_object()[0].first == "z");
  CHECK(doc.as_object()[1].first == "a");
  CHECK(doc.as_object()[2].first == "m");
  const Json::Array& z = doc.find("z")->as_array();
  REQUIRE(z.size() == 6);
  CHECK(z[0].as_number() == 1);
  CHECK(z[1].as_number() == -2.5);
  CHECK(z[2].as_number() == 300);
  CHECK(z[3].as_bool());
  CHECK_FALSE(z[4].as_bool());
  CHECK(z[5].is_null());
  CHECK(doc.find("a")->find("k")->as_string() == "v");
  CHECK(doc.find("m")->as_string().empty());
  CHECK(doc.find("missing") == nullptr);
  CHECK(z[0].find("z") == nullptr);  // not an object
}

TEST_CASE("make_string, make_array and make_object replace a value with an empty one in place",
          "[events][json]") {
  Json value = parse_json(R"({"a":[1,"two",{"b":null}]})").value();
  Json::Object& object = value.as_object()[0].second.as_array()[2].make_object();
  CHECK(object.empty());
  object.emplace_back("c", Json(true));
  value.as_object()[0].second.as_array()[1].make_string() = "three";
  CHECK(value == parse_json(R"({"a":[1,"three",{"c":true}]})").value());
  Json::Array& array = value.make_array();
  CHECK(array.empty());
  CHECK(value.is_array());
}

TEST_CASE("parse_json accepts top-level scalars and the four whitespace characters",
          "[events][json]") {
  CHECK(parse_json("\t\r\n 7 \n").value().as_number() == 7);
  CHECK(parse_json("\"s\"").value().as_string() == "s");
  CHECK(parse_json("null").value().is_null());
  CHECK(parse_json("[]").value().as_array().empty());
  CHECK(parse_json("{}").value().as_object().empty());
}

TEST_CASE("parse_json decodes escapes and surrogate pairs to UTF-8", "[events][json]") {
  Result<Json> parsed = parse_json(R"("\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\u0000")");
  REQUIRE(parsed.has_value());
  CHECK(parsed->as_string() ==
        std::string("\"\\/\b\f\n\r\tA\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 18) +
            std::string(1, '\0'));
  // Literal UTF-8 of every length passes through unchanged.
  std::string literal = "\"\xC3\xB6 \xE2\x82\xAC \xF0\x9F\x98\x82 \xEF\xAC\xB3\"";
  CHECK(parse_json(literal).value().as_string() == literal.substr(1, literal.size() - 2));
}


TEST_CASE("parse_json reads strings the same whatever byte stops a run of plain ones, and where",
          "[events][json]") {
  // Strings are read eight plain bytes at a time: put each kind of byte that ends such a run
  // (an escape, a quote, a control character, UTF-8, the edges of the plain range) at every
  // offset of strings up to three words long.
  struct Case {
    std::string written;   // in the JSON text
    std::string decoded;   // in the string
    bool valid = true;
  };
  const Case cases[] = {
      {"\\n", "\n"},          {"\\\"", "\""},           {"\\\\", "\\"},
      {"\\u0041", "A"},       {"\xC3\xA9", "\xC3\xA9"}, {"\xE2\x82\xAC", "\xE2\x82\xAC"},
      {"\x7F", "\x7F"},       {" ", " "},               {"~", "~"},
      {"!", "!"},             {"#", "#"},               {"[", "["},
      {"]", "]"},             {"\x1F", "", false},      {"\t", "", false},
      {"\xFF", "", false},    {"\xC3", "", false},      {"\"", "", false},
  };
  for (const Case& c : cases) {
    for (size_t before = 0; before <= 24; ++before) {
      for (size_t after : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}}) {
        const std::string head(before, 'a'), tail(after, 'z');
        const std::string text = "\"" + head + c.written + tail + "\"";
        INFO("text " << text);
        Result<Json> parsed = parse_json(text);
        if (!c.valid) {
          CHECK_FALSE(parsed.has_value());
          continue;
        }
        REQUIRE(parsed.has_value());
        CHECK(parsed->as_string() == head + c.decoded + tail);
      }
    }
  }
}

TEST_CASE("parse_json rounds numbers to the nearest double", "[events][json]") {
  CHECK(parse_json("0.1").value().as_number() == 0.1);
  CHECK(parse_json("333333333.33333329").value().as_number() == 333333333.33333329);
  CHECK(parse_json("1E30").value().as_number() == 1e30);
  CHECK(parse_json("9007199254740993").value().as_number() == 9007199254740992.0);  // ties to even
  CHECK(parse_json("123456789012345678901234567890").value().as_number() == 1.2345678901234568e29);
  CHECK(parse_json("1.7976931348623157e308").value().as_number() == 1.7976931348623157e308);
  CHECK(parse_json("5e-324").value().as_number() == 5e-324);
  CHECK(parse_json("2.4703282292062328e-324").value().as_number() == 5e-324);
  CHECK(parse_json("-0").value().as_number() == 0.0);
  CHECK(std::signbit(parse_json("-0").value().as_number()));
}

TEST_CASE("parse_json refuses a number that underflows to zero, as one that overflows",
          "[events][json]") {
  // ECMAScript's JSON.parse reads these as 0: a latency of 1e-999 ns would rank first.
  for (const char* text : {"1e-400", "-1e-400", "1e-999", "2e-324", "0.0000000000000000000000"
                           "00000000000000000000000000000000000000000000000000000000000000000"
                           "00000000000000000000000000000000000000000000000000000000000000000"
                           "00000000000000000000000000000000000000000000000000000000000000000"
                           "00000000000000000000000000000000000000000000000000000000000000000"
                           "000000000000000000000000000000000000000000001"}) {
    INFO(text);
    CHECK_THAT(rejection(text), Catch::Contains("underflows a double"));
    CHECK_THAT(rejection(std::string("{\"latencyNs\":{\"mean\":") + text + "}}"),
               Catch::Contains("underflows a double"));
  }
  CHECK_THAT(rejection("1e999"), Catch::Contains("overflows a double"));
  // Zero written as zero, and the smallest subnormal, are numbers.
  for (const char* zero : {"0", "-0", "0.0", "0e-999", "0.000e5"}) {
    INFO(zero);
    CHECK(parse_json(zero).value().as_number() == 0.0);
  }
  CHECK(parse_json("4.9e-324").value().as_number() == 5e-324);
}

TEST_CASE("parse_json finds duplicate keys in large objects too", "[events][json]") {
  std::string text = "{";
  for (int i = 0; i < 100; ++i) text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  CHECK(parse_json(text + "\"last\":0}").has_value());
  std::string message = rejection(text + "\"k42\":0}");
  CHECK_THAT(message, Catch::Contains("duplicate key \"k42\" at k42"));
}

struct Rejection {
  const char* name;
  std::string text;
  std::vector<std::string> message_parts;
};

TEST_CASE("parse_json rejects each broken rule with where, which rule and how to fix it",
          "[events][json]") {
  const std::vector<Rejection> cases = {
      {"empty document", "", {"line 1, column 1: empty document", "RFC 8259"}},
      {"whitespace only", "  \n ", {"line 2, column 2: empty document"}},
      {"duplicate key, with its path",
       "{\"spec\": {\n  \"timing\": 1,\n  \"timing\": 2}}",
       {"line 3, column 3: duplicate key \"timing\" at spec.timing", "RFC 7493",
        "remove the other"}},
      {"duplicate key at the top level",
       "{\"a\":1,\"a\":1}",
       {"column 8: duplicate key \"a\" at a"}},
      {"duplicate key inside an array element",
       "{\"cases\":[{},{\"x\":1,\"x\":2}]}",
       {"duplicate key \"x\" at cases[1].x"}},
      {"duplicate key that differs only by escaping",
       "{\"\\u0041\":1,\"A\":2}",
       {"duplicate key \"A\""}},
      {"invalid UTF-8: stray continuation byte",
       "\"a\x80\"",
       {"column 3: invalid UTF-8", "byte 0x80", "re-encode"}},
      {"invalid UTF-8: overlong form", "\"\xC0\xAF\"", {"invalid UTF-8", "byte 0xC0"}},
      {"invalid UTF-8: overlong three-byte form", "\"\xE0\x80\xAF\"", {"invalid UTF-8"}},
      {"invalid UTF-8: encoded surrogate", "\"\xED\xA0\x80\"", {"invalid UTF-8", "byte 0xED"}},
      {"invalid UTF-8: above U+10FFFF", "\"\xF4\x90\x80\x80\"", {"invalid UTF-8"}},
      {"invalid UTF-8: truncated sequence", "\"\xE2\x82\"", {"invalid UTF-8"}},
      {"invalid UTF-8 outside a string", "[1,\xFF]", {"unexpected byte 0xFF"}},
      {"lone high surrogate escape", "\"\\ud83d\"", {"lone high surrogate \\uD83D", "RFC 7493"}},
      {"high surrogate followed by a non-surrogate", "\"\\ud83d\\u0041\"", {"lone high surrogate"}},
      {"lone low surrogate escape", "\"\\ude00x\"", {"lone low surrogate \\uDE00"}},
      {"escaped noncharacter", "\"\\uFFFE\"", {"noncharacter U+FFFE", "RFC 7493"}},
      {"literal noncharacter", "\"\xEF\xB7\x90\"", {"noncharacter U+FDD0"}},
      {"NaN", "[NaN]", {"column 2: NaN is not a JSON number", "write null or a string"}},
      {"Infinity", "{\"x\": Infinity}", {"Infinity is not a JSON number at x"}},
      {"-Infinity", "-Infinity", {"-Infinity is not a JSON number"}},
      {"leading zero",
       "{\"spec\":{\"n\":012}}",
       {"column 14: leading zero in number at spec.n", "write 7, not 07"}},
      {"negative leading zero", "-00", {"leading zero"}},
      {"plus sign", "+1", {"unexpected '+'"}},
      {"bare minus", "[-]", {"'-' must be followed by a digit"}},
      {"point without digits", "1.", {"'.' in a number must be followed by a digit"}},
      {"point first", ".5", {"unexpected '.'"}},
      {"exponent without digits", "1e+", {"exponent without digits"}},
      {"hex number", "0x10", {"unexpected 'x' after the JSON value"}},
      {"overflowing number",
       "{\"big\":1e400}",
       {"number 1e400 overflows a double at big", "RFC 7493", "write it as a string"}},
      {"overflowing integer", "-1" + std::string(400, '0'), {"overflows a double"}},
      {"trailing garbage",
       "{} x",
       {"line 1, column 4: unexpected 'x' after the JSON value", "exactly one value"}},
      {"two documents", "1 2", {"unexpected '2' after the JSON value"}},
      {"trailing comma in an object",
       "{\"a\":1,}",
       {"trailing comma before '}'", "remove the last comma"}},
      {"trailing comma in an array", "[1,]", {"trailing comma before ']'"}},
      {"missing colon", "{\"a\" 1}", {"expected ':' after the object key"}},
      {"missing comma", "[1 2]", {"expected ',' or ']' after an array element"}},
      {"unquoted key", "{a:1}", {"expected a double-quoted object key"}},
      {"single quotes", "['a']", {"unexpected '''", "use double quotes"}},
      {"comment", "[1 // one\n]", {"unexpected '/'", "remove the comment"}},
      {"unterminated string", "[\"abc", {"column 2: unterminated string", "add the closing quote"}},
      {"unterminated array", "[1,", {"the document ends where"}},
      {"unterminated object", "{\"a\":1", {"the document ends where ',' or '}'"}},
      {"unescaped control character",
       "\"a\tb\"",
       {"unescaped control character U+0009", "write it as \\t"}},
      {"unescaped control character without a short escape",
       "\"\x01\"",
       {"U+0001", "write it as \\u0001"}},
      {"unescaped newline", "\"a\nb\"", {"unescaped control character U+000A", "write it as \\n"}},
      {"unterminated escape", "\"abc\\", {"column 5: unterminated escape"}},
      {"unknown escape", "\"\\x41\"", {"unknown escape \\x"}},
      {"short unicode escape", "\"\\u12\"", {"four hex digits"}},
      {"byte order mark", "\xEF\xBB\xBF{}", {"byte order mark", "without a BOM"}},
      {"misspelled literal", "[tru]", {"unexpected 't', expected a value"}},
  };
  for (const Rejection& c : cases) {
    SECTION(c.name) {
      std::string message = rejection(c.text);
      INFO("message: " << message);
      for (const std::string& part : c.message_parts) CHECK_THAT(message, Catch::Contains(part));
    }
  }
}

TEST_CASE("parse_json enforces the nesting and size limits", "[events][json]") {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(parse_json(nested(64)).has_value());
  CHECK_THAT(rejection(nested(65)), Catch::Contains("array nested deeper than 64 levels"));
  CHECK_THAT(rejection(nested(100000)),
             Catch::Contains("nested deeper than 64"));  // no stack overflow
  JsonLimits tight;
  tight.max_depth = 3;
  CHECK(parse_json("{\"a\":[{}]}", tight).has_value());
  CHECK_THAT(rejection("{\"a\":[{\"b\":{}}]}", tight),
             Catch::Contains("object nested deeper than 3 levels at a[0].b"));
  tight.max_bytes = 8;
  CHECK_THAT(rejection("[1,2,3,4,5]", tight), Catch::Contains("exceeds the limit of 8 bytes"));
}

TEST_CASE("error columns count characters, not bytes", "[events][json]") {
  CHECK_THAT(rejection("[\"\xC3\xA9\xE2\x82\xAC\", x]"), Catch::Contains("line 1, column 8"));
}

TEST_CASE("Json values compare, find and set members", "[events][json]") {
  Json object = Json::object();
  object.set("b", 1);
  object.set("a", "text");
  object.set("b", Json::Array{true, nullptr, 2.5});
  REQUIRE(object.as_object().size() == 2);
  CHECK(object.as_object()[0].first == "b");
  CHECK(*object.find("b") == Json(Json::Array{true, nullptr, 2.5}));
  CHECK(object == parse_json(R"({"b":[true,null,2.5],"a":"text"})").value());
  CHECK_FALSE(object == parse_json(R"({"a":"text","b":[true,null,2.5]})").value());  // order kept
  CHECK(json_type_name(Json::Type::kObject) == std::string("object"));
}

}  // namespace
}  // namespace evl
