#include "ledger/tile_path.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ledger/merkle.h"

namespace evl {
namespace {

// The naive definition from c2sp.org/tlog-tiles: hash i of tile (L, N) is
// MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L]).
Hash reference_mth(std::span<const Hash> d) {
  if (d.size() == 1) return d[0];
  size_t k = 1;
  while (k * 2 < d.size()) k *= 2;
  return node_hash(reference_mth(d.first(k)), reference_mth(d.subspan(k)));
}

Bytes tile_bytes(const HashTile& tile, const HashReader& reader) {
  auto hashes = reader.read_hashes(tile_stored_hash_indexes(tile));
  REQUIRE(hashes.has_value());
  Bytes out;
  for (const Hash& h : *hashes) out.insert(out.end(), h.begin(), h.end());
  return out;
}

uint64_t pow256(int level) { return uint64_t{1} << (8 * level); }

TEST_CASE("tile indexes are written as 3-digit groups with x prefixes", "[ledger][tiles]") {
  CHECK(tile_index_path(1234067) == "x001/x234/067");
  CHECK(tile_index_path(5) == "005");
  CHECK(tile_index_path(0) == "000");
  CHECK(tile_index_path(999) == "999");
  CHECK(tile_index_path(1000) == "x001/000");
  CHECK(tile_index_path(1000000) == "x001/x000/000");
  CHECK(tile_index_path(UINT64_MAX) == "x018/x446/x744/x073/x709/x551/615");
}

TEST_CASE("tile and entry bundle paths follow c2sp.org/tlog-tiles", "[ledger][tiles]") {
  CHECK(hash_tile_path(0, 1234067, 256) == "tile/0/x001/x234/067");
  CHECK(hash_tile_path(0, 5, 256) == "tile/0/005");
  CHECK(hash_tile_path(1, 5, 17) == "tile/1/005.p/17");
  CHECK(hash_tile_path(HashTile{2, 0, 1}) == "tile/2/000.p/1");
  CHECK(hash_tile_path(63, 0, 255) == "tile/63/000.p/255");
  CHECK(entry_bundle_path(5, 256) == "tile/entries/005");
  CHECK(entry_bundle_path(EntryBundle{1234067, 112}) == "tile/entries/x001/x234/067.p/112");
}

TEST_CASE("tile paths parse back, and only their canonical spelling does", "[ledger][tiles]") {
  for (const HashTile& t : {HashTile{0, 0, 256}, HashTile{0, 1234067, 3}, HashTile{63, UINT64_MAX, 256},
                            HashTile{1, 999, 255}, HashTile{2, 1000, 1}}) {
    auto parsed = parse_tile_path(hash_tile_path(t));
    INFO(hash_tile_path(t));
    REQUIRE(parsed.has_value());
    REQUIRE(std::holds_alternative<HashTile>(*parsed));
    CHECK(std::get<HashTile>(*parsed) == t);
  }
  for (const EntryBundle& b : {EntryBundle{0, 256}, EntryBundle{1234067, 112}, EntryBundle{7, 1}}) {
    auto parsed = parse_tile_path(entry_bundle_path(b));
    REQUIRE(parsed.has_value());
    REQUIRE(std::holds_alternative<EntryBundle>(*parsed));
    CHECK(std::get<EntryBundle>(*parsed) == b);
  }
  for (const char* bad : {"tile/00/001", "tile/64/001", "tile/-1/001", "tile/0/1", "tile/0/0001",
                          "tile/0/001.p/256", "tile/0/001.p/0", "tile/0/001.p/05", "tile/0/001.p/",
                          "tile/0/x000/001", "tile/0/001/002", "tile/0/x001", "tile/0/001/",
                          "tile/0/", "tile/0", "/tile/0/001", "tile/data/001", "tile/8/0/001",
                          "tile/entries/x999/x999/x999/x999/x999/x999/x999/999",
                          "tile/entries/00a", "tile/0/x01/002", "tile/0/001.p/5/6", "tiles/0/001"}) {
    INFO(bad);
    auto parsed = parse_tile_path(bad);
    CHECK_FALSE(parsed.has_value());
    if (!parsed) CHECK(parsed.error().code() == Code::kRejected);
  }
  auto non_canonical = parse_tile_path("tile/0/x000/005");
  REQUIRE_FALSE(non_canonical.has_value());
  CHECK(non_canonical.error().message() ==
        "tile path 'tile/0/x000/005' is not canonical; the same resource is at 'tile/0/005'");
}

TEST_CASE("a tree of 70,000 entries has the tiles c2sp.org/tlog-tiles describes",
          "[ledger][tiles]") {
  // The spec's example: 273 full level 0 tiles, a partial level 0 tile of width 112, one full
  // level 1 tile, a partial level 1 tile of width 17 and a partial level 2 tile of width 1.
  std::vector<HashTile> want;
  for (uint64_t n = 0; n < 273; ++n) want.push_back(HashTile{0, n, 256});
  want.push_back(HashTile{0, 273, 112});
  want.push_back(HashTile{1, 0, 256});
  want.push_back(HashTile{1, 1, 17});
  want.push_back(HashTile{2, 0, 1});
  CHECK(hash_tiles(70000) == want);

  // "A tree of size 256 will be represented by a full level 0 tile and a partial level 1 tile
  // of width 1."
  CHECK(hash_tiles(256) == std::vector<HashTile>{{0, 0, 256}, {1, 0, 1}});
  CHECK(hash_tiles(0).empty());
  CHECK(hash_tiles(1) == std::vector<HashTile>{{0, 0, 1}});

  auto bundles = entry_bundles(70000);
  REQUIRE(bundles.size() == 274);
  CHECK(bundles.front() == EntryBundle{0, 256});
  CHECK(bundles.back() == EntryBundle{273, 112});
  CHECK(entry_bundles(512) == std::vector<EntryBundle>{{0, 256}, {1, 256}});
  CHECK(entry_bundles(0).empty());
}

TEST_CASE("growing a tree exports exactly the tiles that did not exist before", "[ledger][tiles]") {
  CHECK(new_hash_tiles(100, 101) == std::vector<HashTile>{{0, 0, 101}});
  CHECK(new_hash_tiles(255, 256) == std::vector<HashTile>{{0, 0, 256}, {1, 0, 1}});
  CHECK(new_hash_tiles(256, 257) == std::vector<HashTile>{{0, 1, 1}});
  CHECK(new_hash_tiles(65535, 65536) ==
        std::vector<HashTile>{{0, 255, 256}, {1, 0, 256}, {2, 0, 1}});
  CHECK(new_hash_tiles(7, 7).empty());
  CHECK(new_entry_bundles(255, 257) == std::vector<EntryBundle>{{0, 256}, {1, 1}});
  CHECK(new_entry_bundles(300, 300).empty());

  std::mt19937_64 rng(256);
  for (int i = 0; i < 500; ++i) {
    uint64_t new_size = rng() % 200000;
    uint64_t old_size = new_size == 0 ? 0 : rng() % (new_size + 1);
    INFO(old_size << " to " << new_size);
    auto before = hash_tiles(old_size);
    std::vector<HashTile> fresh;
    for (const HashTile& t : hash_tiles(new_size)) {
      if (std::find(before.begin(), before.end(), t) == before.end()) fresh.push_back(t);
      // The partial tile at level L has floor(size / 256^L) mod 256 hashes.
      if (t.width < 256) CHECK(t.width == (new_size / pow256(t.level)) % 256);
    }
    CHECK(new_hash_tiles(old_size, new_size) == fresh);
    auto old_bundles = entry_bundles(old_size);
    std::vector<EntryBundle> fresh_bundles;
    for (const EntryBundle& b : entry_bundles(new_size)) {
      if (std::find(old_bundles.begin(), old_bundles.end(), b) == old_bundles.end()) {
        fresh_bundles.push_back(b);
      }
    }
    CHECK(new_entry_bundles(old_size, new_size) == fresh_bundles);
  }
}

TEST_CASE("tile hashes are the Merkle tree hashes the spec defines", "[ledger][tiles]") {
  constexpr uint64_t kSize = 70000;
  std::vector<Hash> leaves;
  MemoryHashStore store;
  for (uint64_t i = 0; i < kSize; ++i) {
    leaves.push_back(leaf_hash(as_bytes("entry " + std::to_string(i))));
    store.append(leaves.back());
  }
  for (const HashTile& tile : hash_tiles(kSize)) {
    // Level 0 is cheap to check fully; above it, check the first and last hash of each tile.
    bool spot = tile.level > 0 || tile.n % 37 == 0;
    if (!spot) continue;
    INFO(hash_tile_path(tile));
    Bytes data = tile_bytes(tile, store);
    REQUIRE(data.size() == size_t{tile.width} * kHashSize);
    for (uint32_t i : {uint32_t{0}, tile.width - 1}) {
      uint64_t span = pow256(tile.level);
      uint64_t first = (tile.n * 256 + i) * span;
      Hash want = reference_mth(std::span<const Hash>(leaves.data() + first, span));
      CHECK(std::equal(want.begin(), want.end(), data.begin() + i * kHashSize));
    }
  }
}

TEST_CASE("every stored hash can be read back from the narrowest tile that holds it",
          "[ledger][tiles]") {
  MemoryHashStore store;
  for (uint64_t i = 0; i < 5000; ++i) {
    store.append(leaf_hash(as_bytes("e" + std::to_string(i))));
    uint64_t size = store.size();
    // The hashes this record added must be readable from the tiles of this size.
    auto tiles = hash_tiles(size);
    for (uint64_t index = stored_hash_count(size - 1); index < stored_hash_count(size); ++index) {
      HashTile narrow = tile_for_stored_hash(index);
      auto it = std::find_if(tiles.begin(), tiles.end(), [&](const HashTile& t) {
        return t.level == narrow.level && t.n == narrow.n;
      });
      INFO("stored hash " << index << " at size " << size << ", tile " << hash_tile_path(narrow));
      REQUIRE(it != tiles.end());
      REQUIRE(it->width >= narrow.width);
      auto h = hash_from_tile(*it, tile_bytes(*it, store), index);
      REQUIRE(h.has_value());
      CHECK(*h == store.stored_hashes()[index]);
    }
  }
  CHECK(tile_for_stored_hash(0) == HashTile{0, 0, 1});
  CHECK(tile_for_stored_hash(stored_hash_index(8, 0)) == HashTile{1, 0, 1});
  CHECK(tile_for_stored_hash(stored_hash_index(3, 0)) == HashTile{0, 0, 8});
  CHECK(tile_for_stored_hash(stored_hash_index(0, 256)) == HashTile{0, 1, 1});
}

TEST_CASE("hash_from_tile refuses the wrong tile and short data", "[ledger][tiles]") {
  MemoryHashStore store;
  for (int i = 0; i < 600; ++i) store.append(leaf_hash(as_bytes(std::to_string(i))));
  HashTile tile{0, 1, 256};
  Bytes data = tile_bytes(tile, store);
  uint64_t in_tile_0 = stored_hash_index(0, 5);
  auto wrong = hash_from_tile(tile, data, in_tile_0);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message() == "stored hash " + std::to_string(in_tile_0) +
                                       " is in tile tile/0/000.p/6, not in tile/0/001");
  uint64_t last = stored_hash_index(0, 511);
  auto too_narrow = hash_from_tile(HashTile{0, 1, 100}, data, last);
  CHECK_FALSE(too_narrow.has_value());
  auto short_data = hash_from_tile(tile, ByteView(data).first(100), stored_hash_index(0, 256));
  REQUIRE_FALSE(short_data.has_value());
  CHECK(short_data.error().message() == "tile tile/0/001 has 100 bytes; it needs 8192");
  CHECK(hash_from_tile(tile, data, stored_hash_index(0, 300)).value() ==
        store.stored_hashes()[stored_hash_index(0, 300)]);
}

}  // namespace
}  // namespace evl
