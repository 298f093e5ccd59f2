// visible_text: what a message may quote of an input, shown on a terminal as it was read.
#include "events/utf8.h"

#include <catch2/catch.hpp>
#include <string>

namespace evl {
namespace {

TEST_CASE("visible_text keeps printable UTF-8 and escapes what a terminal would act on",
          "[events][utf8]") {
  CHECK(visible_text("plain text, \xC3\xA9t\xC3\xA9 \xE2\x9C\x93") ==
        "plain text, \xC3\xA9t\xC3\xA9 \xE2\x9C\x93");
  CHECK(visible_text(std::string("\n\r\t\0\x1B[2J\x7F", 9)) == "\\n\\r\\t\\x00\\x1b[2J\\x7f");
  // C1 controls (CSI), bidirectional overrides and isolates, separators, invisible marks.
  CHECK(visible_text("\xC2\x9B" "31m") == "\\u009b31m");
  CHECK(visible_text("a\xE2\x80\xAE" "b\xE2\x81\xA6" "c\xE2\x80\x8F") ==
        "a\\u202eb\\u2066c\\u200f");
  CHECK(visible_text("\xE2\x80\xA8\xE2\x80\x8B\xEF\xBB\xBF") == "\\u2028\\u200b\\ufeff");
}

TEST_CASE("visible_text shows each byte that is not UTF-8 as \\xNN and reads on",
          "[events][utf8]") {
  CHECK(visible_text("\xFF\xFE" "a") == "\\xff\\xfea");
  CHECK(visible_text("\xC0\xAF") == "\\xc0\\xaf");          // an overlong '/'
  CHECK(visible_text("\xED\xA0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(visible_text("x\xE2\x82") == "x\\xe2\\x82");         // cut short at the end
  CHECK(visible_text("\xE2\x82\xAC\xE2") == "\xE2\x82\xAC\\xe2");
}

}  // namespace
}  // namespace evl
