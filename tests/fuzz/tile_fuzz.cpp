// Tile paths (c2sp.org/tlog-tiles) and entry bundles: the strict path parser, the framing of
// bundles, and reading a stored hash out of a tile's bytes.
#include <cstring>
#include <type_traits>
#include <variant>

#include "events/event.h"
#include "ledger/tile_path.h"
#include "ledger/tiles.h"
#include "tests/fuzz/fuzz_target.h"

EVL_FUZZ_TARGET(tile) {
  using namespace evl;
  const std::string_view text = fuzz::as_text(data, size);
  ByteView bytes(data, size);

  if (auto parsed = parse_tile_path(text)) {
    // Each resource has exactly one path.
    std::string path = std::visit([](const auto& t) {
      if constexpr (std::is_same_v<std::decay_t<decltype(t)>, HashTile>) {
        return hash_tile_path(t);
      } else {
        return entry_bundle_path(t);
      }
    }, *parsed);
    EVL_FUZZ_CHECK(path == text);
    const auto* tile = std::get_if<HashTile>(&*parsed);
    if (tile != nullptr && tree_has_tile(*tile, uint64_t{1} << 40)) {
      EVL_FUZZ_CHECK(tile_stored_hash_indexes(*tile).size() == tile->width);
    }
  }

  if (auto frames = split_entry_frames(bytes, kTileWidth)) {
    std::string again;
    for (ByteView frame : *frames) {
      append_entry_frame(again, frame);
      (void)decode_entry(frame);
    }
    EVL_FUZZ_CHECK(again == text);
    EVL_FUZZ_CHECK(frames->size() <= kTileWidth);
  }

  // The first 8 bytes name a stored hash; the rest is the tile that should hold it.
  if (size >= 8) {
    uint64_t index = 0;
    std::memcpy(&index, data, 8);
    index >>= 1;  // stored hash indexes of trees below 2^63 entries
    HashTile tile = tile_for_stored_hash(index);
    auto hash = hash_from_tile(tile, bytes.subspan(8), index);
    if (hash) EVL_FUZZ_CHECK(size - 8 >= size_t{tile.width} * 32);
  }
}
