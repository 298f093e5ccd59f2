// Naming a run on the command line (and in the API): its digest, or a unique start of it as
// `evledger runs` prints it (projections/query.h parse_run_prefix, resolve_run,
// find_runs_by_prefix).
#include "tools/projection_cli.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "events/bytes.h"
#include "projections/query.h"
#include "projections/store.h"

namespace evl::cli {
namespace {

// Three run views: a and b share their first 10 hex digits, c starts elsewhere.
struct Runs {
  std::string a = "0123456789" + std::string(54, 'a');
  std::string b = "0123456789" + std::string(54, 'b');
  std::string c = "fedcba" + std::string(58, '0');
  MemoryProjectionStore store;
  Runs() {
    for (const std::string* hex : {&a, &b, &c}) REQUIRE(store.put("r/" + *hex, "{}").is_ok());
    // Keys of other families around r/ are not runs.
    REQUIRE(store.put("o/" + a + "/00000000000000000001/rerun", "{}").is_ok());
    REQUIRE(store.put("s/00000000000000000001", "{}").is_ok());
  }
};

Digest digest_of(const std::string& hex) {
  Digest d{};
  REQUIRE(hex_decode_into(hex, d, true));
  return d;
}

TEST_CASE("a run is named by its digest or by a start of it as 'runs' prints it",
          "[tools][show]") {
  Runs runs;
  CHECK(parse_run_prefix("sha256:" + runs.a, "RUN").value() == runs.a);
  CHECK(parse_run_prefix(runs.a, "RUN").value() == runs.a);
  CHECK(parse_run_prefix("sha256:012345678901\xE2\x80\xA6", "RUN").value() == "012345678901");
  CHECK(parse_run_prefix("012345", "RUN").value() == "012345");
  for (const std::string& bad :
       std::vector<std::string>{"01234", "sha256:", "", "0123456789ABCDEF", "sha512:0123456789",
                                "012345 ", runs.a + "0", "sha256:01234g"}) {
    INFO("'" << bad << "'");
    auto parsed = parse_run_prefix(bad, "RUN");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code() == Code::kUsage);
    CHECK(parsed.error().message().find("RUN: '" + bad + "' is not a run digest") == 0);
  }
}

TEST_CASE("a start of a digest resolves to the one run it names, or says why not",
          "[tools][show]") {
  Runs runs;
  CHECK(resolve_run(runs.store, runs.a, "RUN").value() == digest_of(runs.a));
  CHECK(resolve_run(runs.store, runs.a.substr(0, 11), "RUN").value() == digest_of(runs.a));
  CHECK(resolve_run(runs.store, "fedcba", "RUN").value() == digest_of(runs.c));

  auto ambiguous = resolve_run(runs.store, "0123456789", "RUN");
  REQUIRE_FALSE(ambiguous.has_value());
  CHECK(ambiguous.error().code() == Code::kUsage);
  const std::string& message = ambiguous.error().message();
  CHECK(message.find("RUN sha256:0123456789… names more than one run") == 0);
  CHECK(message.find("sha256:" + runs.a) != std::string::npos);
  CHECK(message.find("sha256:" + runs.b) != std::string::npos);

  auto none = resolve_run(runs.store, "0123450", "RUN");
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code() == Code::kNotFound);
  CHECK(none.error().message().find("sha256:0123450…") != std::string::npos);
}

TEST_CASE("find_runs_by_prefix scans the run views' keys in digest order up to a limit",
          "[projections][query]") {
  Runs runs;
  auto all = find_runs_by_prefix(runs.store, "", 10);
  REQUIRE(all.has_value());
  CHECK(*all == std::vector<Digest>{digest_of(runs.a), digest_of(runs.b), digest_of(runs.c)});
  CHECK(find_runs_by_prefix(runs.store, "", 2).value().size() == 2);
  CHECK(find_runs_by_prefix(runs.store, "01", 0).value().empty());
  CHECK(find_runs_by_prefix(runs.store, "0123456789b", 10).value() ==
        std::vector<Digest>{digest_of(runs.b)});

  MemoryProjectionStore damaged;
  REQUIRE(damaged.put("r/0123", "{}").is_ok());
  auto read = find_runs_by_prefix(damaged, "01", 10);
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code() == Code::kCorrupt);
}

TEST_CASE("a comparison group is named by its key or a start of it, as groups and show print it",
          "[tools][show]") {
  Runs runs;  // run views only: r/ keys are not groups
  const std::string g1 = "abcdef0123" + std::string(54, '1');
  const std::string g2 = "abcdef0123" + std::string(54, '2');
  for (const std::string* hex : {&g1, &g2}) REQUIRE(runs.store.put("G/" + *hex, "{}").is_ok());
  REQUIRE(runs.store.put("K/" + g1, "{}").is_ok());  // the preimage family sorts apart

  // show prints a comparison key as sha256:<20 hex>….
  const std::string shown = "sha256:" + g1.substr(0, 20) + "\xE2\x80\xA6";
  auto prefix = parse_group_prefix(shown, "--group");
  REQUIRE(prefix.has_value());
  CHECK(*prefix == g1.substr(0, 20));
  CHECK(resolve_group(runs.store, *prefix, "--group").value() == digest_of(g1));
  CHECK(resolve_group(runs.store, g2, "--group").value() == digest_of(g2));

  auto ambiguous = resolve_group(runs.store, "abcdef0123", "--group");
  REQUIRE_FALSE(ambiguous.has_value());
  CHECK(ambiguous.error().code() == Code::kUsage);
  CHECK(ambiguous.error().message().find(
            "--group sha256:abcdef0123… names more than one comparison group") == 0);

  auto none = resolve_group(runs.store, runs.a.substr(0, 12), "--group");  // a run, not a group
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code() == Code::kNotFound);
  CHECK(none.error().message().find("no comparison group in this ledger is") == 0);

  auto bad = parse_group_prefix("abc", "--group");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code() == Code::kUsage);
  CHECK(bad.error().message().find("--group: 'abc' is not a comparison key") == 0);
}

}  // namespace
}  // namespace evl::cli
