// C2SP tlog-witness bodies: the add-checkpoint request, the 409 size and the 200 lines.
#include "keys/witness_format.h"

#include <catch2/catch.hpp>

#include <string>

#include "events/bytes.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

// The spec's example request (tlog-witness.md).
constexpr std::string_view kCheckpoint =
    "example.com/behind-the-sofa\n"
    "20852163\n"
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    "\n"
    "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/"
    "Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+"
    "49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n";
constexpr std::string_view kProof =
    "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
    "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"
    "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"
    "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n";

std::string example_body() {
  return "old 20852014\n" + std::string(kProof) + "\n" + std::string(kCheckpoint);
}

std::string rejection(std::string_view body) {
  auto request = parse_add_checkpoint_request(body);
  REQUIRE_FALSE(request.has_value());
  CHECK(request.error().code() == Code::kRejected);
  return request.error().message();
}

TEST_CASE("the spec's add-checkpoint example parses and formats back byte for byte",
          "[keys][witness-format]") {
  auto request = parse_add_checkpoint_request(example_body());
  REQUIRE_OK(request);
  CHECK(request->old_size == 20852014);
  REQUIRE(request->proof.size() == 4);
  CHECK(base64_encode(request->proof[0]) == "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=");
  CHECK(request->checkpoint == kCheckpoint);
  CHECK(format_add_checkpoint_request(*request) == example_body());
  // No proof (old 0): the empty line follows the old line at once.
  auto fresh = parse_add_checkpoint_request("old 0\n\n" + std::string(kCheckpoint));
  REQUIRE_OK(fresh);
  CHECK(fresh->old_size == 0);
  CHECK(fresh->proof.empty());
  CHECK(format_add_checkpoint_request(*fresh) == "old 0\n\n" + std::string(kCheckpoint));
}

TEST_CASE("an add-checkpoint request is refused when its old line is not exactly 'old N'",
          "[keys][witness-format]") {
  const std::string rest = "\n" + std::string(kCheckpoint);
  for (const char* line : {"old 01", "old -1", "old +1", "old  5", "Old 5", "old 5 ", "old",
                           "old ", "old 5\t", "old 18446744073709551616", "new 5"}) {
    INFO(line);
    CHECK_THAT(rejection(std::string(line) + "\n" + rest),
               Catch::Contains("old size") || Catch::Contains("first line"));
  }
  CHECK_THAT(rejection("old 5"), Catch::Contains("first line"));
  CHECK_THAT(rejection(""), Catch::Contains("first line"));
}

TEST_CASE("an add-checkpoint request takes at most 63 proof lines of 32-byte hashes and then "
          "a checkpoint",
          "[keys][witness-format]") {
  const std::string hash = "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n";
  std::string lines;
  for (int i = 0; i < 63; ++i) lines += hash;
  auto full = parse_add_checkpoint_request("old 5\n" + lines + "\n" + std::string(kCheckpoint));
  REQUIRE_OK(full);
  CHECK(full->proof.size() == 63);
  CHECK_THAT(rejection("old 5\n" + lines + hash + "\n" + std::string(kCheckpoint)),
             Catch::Contains("more than 63"));
  CHECK_THAT(rejection("old 5\nAAAA\n\n" + std::string(kCheckpoint)),
             Catch::Contains("line 2") && Catch::Contains("32 bytes"));
  CHECK_THAT(rejection("old 5\n" + hash + "not base64!\n\n" + std::string(kCheckpoint)),
             Catch::Contains("line 3"));
  CHECK_THAT(rejection("old 5\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\n" +
                       std::string(kCheckpoint)),
             Catch::Contains("line 2"));  // unpadded
  CHECK_THAT(rejection("old 5\n" + hash), Catch::Contains("no empty line"));
  CHECK_THAT(rejection("old 5\n" + hash + "\n"), Catch::Contains("no checkpoint"));
  std::string huge = "old 0\n\n" + std::string(kMaxAddCheckpointBody, 'x');
  CHECK_THAT(rejection(huge), Catch::Contains("at most 65536"));
}

TEST_CASE("the 409 body is one decimal line", "[keys][witness-format]") {
  CHECK(format_tlog_size(0) == "0\n");
  CHECK(format_tlog_size(20852163) == "20852163\n");
  auto size = parse_tlog_size("20852163\n");
  REQUIRE_OK(size);
  CHECK(*size == 20852163);
  for (const char* body : {"", "5", "05\n", "5\n\n", " 5\n", "5 \n", "x\n"}) {
    INFO(body);
    CHECK_FALSE(parse_tlog_size(body).has_value());
  }
}

TEST_CASE("a 200 body is signature lines only, as the spec's example response",
          "[keys][witness-format]") {
  const std::string body =
      "— witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVj"
      "yQLrdk3DXDqI5G2HgLatVs0pWh6Up69HVOw==\n"
      "— witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vW"
      "hO+DlkL0+UfzuOBMh9ChdMkP1vi/lCAsmlw==\n"
      "— witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYK"
      "A7nC3HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==\n";
  auto lines = parse_cosignature_lines(body);
  REQUIRE_OK(lines);
  REQUIRE(lines->size() == 3);
  CHECK((*lines)[2].name == "witness.example/w2");
  CHECK((*lines)[0].signature.size() == 72);
  CHECK(format_cosignature_lines(*lines) == body);
  for (std::string bad : {std::string(), std::string("\n"), body + "\n", "\n" + body,
                          body.substr(0, body.size() - 1), std::string("hello\n"),
                          body + "not a signature\n"}) {
    INFO(bad);
    CHECK_FALSE(parse_cosignature_lines(bad).has_value());
  }
}

}  // namespace
}  // namespace evl
