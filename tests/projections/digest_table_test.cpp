// The fold's flat table of digests (projections/internal/digest_table.h) against std::map:
// random keys through several growths, and keys that all start alike, so that every one has
// the same home slot under any seed and lookups probe past the others and wrap around.
#include "projections/internal/digest_table.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>

namespace evl {
namespace {

Digest random_digest(std::mt19937_64& rng) {
  Digest d;
  for (auto& b : d) b = static_cast<uint8_t>(rng());
  return d;
}

TEST_CASE("a digest table holds what a map holds", "[projections][digest_table]") {
  std::mt19937_64 rng(7);
  DigestTable<uint64_t> table;
  std::map<Digest, uint64_t> reference;
  CHECK(table.find(random_digest(rng)) == nullptr);  // empty, and no storage yet
  for (uint64_t i = 0; i < 20000; ++i) {
    Digest d = random_digest(rng);
    table[d] = i;
    reference[d] = i;
    if (i % 3 == 0) {  // a second lookup of a key that is there
      table[d] += 1;
      reference[d] += 1;
    }
    if (i % 1000 == 0) {
      Digest absent = random_digest(rng);
      CHECK(table.find(absent) == nullptr);
      CHECK_FALSE(table.contains(absent));
    }
  }
  REQUIRE(table.size() == reference.size());
  for (const auto& [key, value] : reference) {
    const uint64_t* found = std::as_const(table).find(key);
    REQUIRE(found != nullptr);
    CHECK(*found == value);
  }
  table.clear();
  CHECK(table.size() == 0);
  CHECK(table.find(reference.begin()->first) == nullptr);
}

TEST_CASE("keys whose hashes meet probe past each other", "[projections][digest_table]") {
  // Equal first 8 bytes: one home slot for all of them, whatever the seed.
  DigestTable<std::unique_ptr<int>> table;
  std::vector<Digest> keys;
  for (int i = 0; i < 300; ++i) {
    Digest d{};
    d[31] = static_cast<uint8_t>(i);
    d[30] = static_cast<uint8_t>(i >> 8);
    keys.push_back(d);
    table[d] = std::make_unique<int>(i);  // values that only move survive each growth
  }
  CHECK(table.size() == 300);
  for (int i = 0; i < 300; ++i) {
    auto* value = table.find(keys[i]);
    REQUIRE(value != nullptr);
    REQUIRE(*value != nullptr);
    CHECK(**value == i);
  }
  Digest other{};
  other[29] = 1;
  CHECK(table.find(other) == nullptr);
}

}  // namespace
}  // namespace evl
