// The projection store's keys, byte for byte as projections/FORMAT.md lays them out: every
// auditor's fold must write the same ones, and a fold that wrote other keys consistently would
// still agree with itself.
#include "projections/internal/store_keys.h"

#include <catch2/catch.hpp>
#include <string>

namespace evl {
namespace {

Digest digest_of(uint8_t first, uint8_t last) {
  Digest d{};
  d[0] = first;
  d[31] = last;
  return d;
}

TEST_CASE("the projection store's keys are FORMAT.md's", "[projections][keys]") {
  const Digest a = digest_of(0xab, 0x01);
  const Digest b = digest_of(0x00, 0xff);
  const std::string ha = "ab" + std::string(60, '0') + "01";
  const std::string hb = std::string(62, '0') + "ff";
  CHECK(store_keys::hex(a) == ha);
  CHECK(store_keys::index20(0) == "00000000000000000000");
  CHECK(store_keys::index20(1234567) == "00000000000001234567");
  CHECK(store_keys::index20(UINT64_MAX) == "18446744073709551615");
  CHECK(store_keys::run(a) == "r/" + ha);
  CHECK(store_keys::waiting_prefix(a) == "w/" + ha + "/");
  CHECK(store_keys::waiting(a, 42) == "w/" + ha + "/00000000000000000042");
  CHECK(store_keys::orphan_prefix(a) == "o/" + ha + "/");
  CHECK(store_keys::orphan(a, 7, "rerun") == "o/" + ha + "/00000000000000000007/rerun");
  CHECK(store_keys::group(a) == "G/" + ha);
  CHECK(store_keys::group_preimage(a) == "K/" + ha);
  CHECK(store_keys::ranked_prefix(a) == "g/" + ha + "/r/");
  CHECK(store_keys::ranked(a, "sortkey") == "g/" + ha + "/r/sortkey");
  CHECK(store_keys::unranked_prefix(a) == "g/" + ha + "/u/");
  CHECK(store_keys::unranked(a, b) == "g/" + ha + "/u/" + hb);
  CHECK(store_keys::benchmark_prefix("op/1 50%") == "b/op%2F1%2050%25/");
  CHECK(store_keys::benchmark("x", b) == "b/x/" + hb);
  CHECK(store_keys::leadership(9, a) == "L/00000000000000000009/" + ha);
  CHECK(store_keys::void_event(10) == "v/00000000000000000010");
  CHECK(store_keys::skipped(11) == "s/00000000000000000011");
  Digest back{};
  CHECK(store_keys::digest_suffix(store_keys::unranked(a, b), back));
  CHECK(back == b);
  CHECK_FALSE(store_keys::digest_suffix("short", back));
}

}  // namespace
}  // namespace evl
