// Argument parsing shared by every subcommand (tools/cli.h).
#include "tools/cli.h"

#include <catch2/catch.hpp>

namespace evl::cli {
namespace {

const std::vector<OptionSpec> kSpecs = {
    {"ledger"}, {"threads"}, {"role", true, true}, {"json", false}};

TEST_CASE("an option that takes one value refuses a second instead of keeping the last",
          "[tools][cli]") {
  auto twice = Args::parse({"--ledger", "a", "--ledger=b"}, kSpecs);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code() == Code::kUsage);
  CHECK_THAT(twice.error().message(),
             Catch::Contains("--ledger is given twice ('a' and 'b')"));
  auto repeated = Args::parse({"--role", "admin", "--role", "runner", "--json", "--json"}, kSpecs);
  REQUIRE(repeated);
  CHECK(repeated->all("role") == std::vector<std::string>{"admin", "runner"});
}

TEST_CASE("a numeric option outside its range is a usage error that gives the range",
          "[tools][cli]") {
  const U64Range threads{0, 1024, "0: one per hardware thread"};
  auto wraps = Args::parse({"--threads", "4294967296"}, kSpecs);
  REQUIRE(wraps);
  auto n = wraps->get_u64("threads", 0, threads);
  REQUIRE_FALSE(n);
  CHECK(n.error().code() == Code::kUsage);
  CHECK_THAT(n.error().message(), Catch::Contains("--threads 4294967296 is out of range: give 0 "
                                                  "to 1024 (0: one per hardware thread)"));
  auto fine = Args::parse({"--threads", "1024"}, kSpecs);
  REQUIRE(fine);
  CHECK(fine->get_u64("threads", 0, threads).value() == 1024);
  CHECK(fine->get_u64("absent", 7, threads).value() == 7);
  auto low = fine->get_optional_u64("threads", U64Range{2000, 3000});
  REQUIRE_FALSE(low);
  CHECK(low.error().code() == Code::kUsage);
}

}  // namespace
}  // namespace evl::cli
