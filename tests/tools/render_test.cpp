// Text for people that a command composed from what it quotes (tools/render.h visible_lines;
// events/utf8_test.cpp tests visible_text, which it applies to each line).
#include "tools/render.h"

#include <catch2/catch.hpp>
#include <string>

#include "events/utf8.h"

namespace evl::cli {
namespace {

TEST_CASE("visible_lines keeps the line feeds and shows the rest of each line as visible_text",
          "[tools][render]") {
  CHECK(visible_lines("one\ntwo\r\n\x1b[2J\xc2\x9b\n") == "one\ntwo\\r\n\\x1b[2J\\u009b\n");
  CHECK(visible_lines("\n\n") == "\n\n");
  CHECK(visible_lines("") == "");
  CHECK(visible_lines("no line feed\t\x7f") == "no line feed\\t\\x7f");
  // A line feed inside a multi-byte sequence's bytes cannot happen; a cut sequence is escaped.
  CHECK(visible_lines("\xe2\x80\nx") == "\\xe2\\x80\nx");
  const std::string text = "entry 7 (\xe2\x80\xae" "gnp.exe): rejected\n  by \xd8\xb9\xd8\xb1\xd8\xa8";
  CHECK(visible_lines(text) == "entry 7 (\\u202egnp.exe): rejected\n  by \xd8\xb9\xd8\xb1\xd8\xa8");
}

TEST_CASE("visible_lines is visible_text on text without line feeds, and changes escaped text "
          "no further", "[tools][render]") {
  for (const std::string text : {"plain", "\x1b[31mred\rgone", "a\xe2\x81\xa6" "b\xc2\x85",
                                 "\xff\xfe", "C:\\x1b is a backslash"}) {
    INFO(text);
    CHECK(visible_lines(text) == visible_text(text));
    CHECK(visible_lines(visible_lines(text)) == visible_lines(text));
  }
}

}  // namespace
}  // namespace evl::cli
