// ledger/tile_path.h — C2SP tlog-tiles layout (c2sp.org/tlog-tiles): tile and entry bundle
// paths, which tiles and bundles a tree of a given size has, and which tile holds a stored hash.
// Pure math, no I/O; the same paths serve an export directory and the server's URL root.
//
// A hash tile at tile level L, index N holds up to 256 consecutive hashes of tree level 8·L:
// hash i is MTH(D[(N·256 + i)·256^L : (N·256 + i + 1)·256^L]). A full tile has 256 hashes; the
// rightmost tile of a level is partial, with floor(size / 256^L) mod 256 hashes, and is served
// at "<path>.p/<W>". Empty tiles do not exist. Entry bundle N holds entries [N·256, N·256 + W)
// as big-endian uint16 length-prefixed entries, beside level 0 tile N.
//
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "events/bytes.h"
#include "events/status.h"
#include "ledger/merkle.h"

namespace evl {

inline constexpr int kTileHeight = 8;       // tree levels per tile level
inline constexpr uint32_t kTileWidth = 256;  // hashes in a full tile, entries in a full bundle
inline constexpr int kMaxTileLevel = 63;

struct HashTile {
  int level = 0;         // tile level L, 0..63; its hashes are at tree level 8·L
  uint64_t n = 0;        // index within the level
  uint32_t width = 0;    // 1..256; 256 is a full tile
  bool operator==(const HashTile&) const = default;
};

struct EntryBundle {
  uint64_t n = 0;        // entries [n·256, n·256 + width)
  uint32_t width = 0;    // 1..256; 256 is a full bundle
  bool operator==(const EntryBundle&) const = default;
};

// N as zero-padded 3-digit groups, all but the last prefixed "x": 1234067 → "x001/x234/067",
// 5 → "005".
std::string tile_index_path(uint64_t n);
// "tile/<L>/<N>", with ".p/<W>" when width < 256. Level 0..63 and width 1..256 are
// preconditions.
std::string hash_tile_path(int level, uint64_t n, uint32_t width);
std::string hash_tile_path(const HashTile& tile);
// "tile/entries/<N>", with ".p/<W>" when width < 256.
std::string entry_bundle_path(uint64_t n, uint32_t width);
std::string entry_bundle_path(const EntryBundle& bundle);

// Parses a path as written above (no leading slash). Strict, so that a server maps each
// resource to exactly one path: kRejected for anything else, including leading zeros in L or W,
// a width of 256 written out, or a missing "x".
Result<std::variant<HashTile, EntryBundle>> parse_tile_path(std::string_view path);

// Every hash tile of the tree of `size` records: full tiles, and the partial tile of each level
// where floor(size / 256^L) mod 256 > 0. Ordered by level, then index. Empty for size 0.
std::vector<HashTile> hash_tiles(uint64_t size);
// The hash tiles that exist at `new_size` but not at `old_size` (old_size <= new_size): what an
// export writes when the tree grows. A partial tile that grew is new (it has a new path).
std::vector<HashTile> new_hash_tiles(uint64_t old_size, uint64_t new_size);

// Every entry bundle of the tree of `size` records, by index.
std::vector<EntryBundle> entry_bundles(uint64_t size);
// The entry bundles that exist at `new_size` but not at `old_size` (old_size <= new_size).
std::vector<EntryBundle> new_entry_bundles(uint64_t old_size, uint64_t new_size);

// Entry framing (bundles, and batches of entries sent to a log): each entry as a big-endian
// uint16 length followed by its bytes. Appends one frame; precondition: entry.size() <= 65535.
void append_entry_frame(std::string& out, ByteView entry);
// Splits framed entries into views of `data` (valid while it is). kRejected naming the frame
// when one is empty or cut short, or when there are more than `max_entries`.
Result<std::vector<ByteView>> split_entry_frames(ByteView data, size_t max_entries);

// The narrowest tile that holds stored hash `index` (see stored_hash_index): the hash itself
// when it is at a tree level that is a multiple of 8, else the tile hashes it is computed from.
// Any wider tile with the same level and index holds it too.
HashTile tile_for_stored_hash(uint64_t index);

// The stored hash indexes of a tile's hashes, in tile order: read them from a HashReader and
// concatenate to produce the tile's bytes (width · 32 bytes).
std::vector<uint64_t> tile_stored_hash_indexes(const HashTile& tile);

// Stored hash `index` from the bytes of `tile`, which must be tile_for_stored_hash(index) or a
// wider tile at the same position. kRejected when the tile is the wrong one or its data is
// shorter than width · 32 bytes. The tile's data is not authenticated here: check the root.
Result<Hash> hash_from_tile(const HashTile& tile, ByteView data, uint64_t index);

}  // namespace evl
