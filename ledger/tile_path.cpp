#include "ledger/tile_path.h"

#include <cstring>
#include <type_traits>
#include <variant>

namespace evl {
namespace {

constexpr int kTileShift = kTileHeight;  // log2(kTileWidth)
static_assert(kTileWidth == 1u << kTileShift);

std::string three_digits(uint64_t v) {
  char buf[4] = {static_cast<char>('0' + v / 100), static_cast<char>('0' + v / 10 % 10),
                 static_cast<char>('0' + v % 10), 0};
  return buf;
}

std::string partial_suffix(uint32_t width) {
  EVL_ASSERT(width >= 1 && width <= kTileWidth);
  return width == kTileWidth ? std::string() : ".p/" + std::to_string(width);
}

// Where stored hash `index` sits: the narrowest tile holding it, and the byte range of the tile
// hashes it is computed from.
struct TileSlot {
  HashTile tile;
  size_t begin = 0;  // bytes
  size_t end = 0;
};

TileSlot slot_for_stored_hash(uint64_t index) {
  TreeNode node = split_stored_hash_index(index);
  int tile_level = node.level / kTileHeight;
  int sub_level = node.level - tile_level * kTileHeight;  // tree levels above the tile's hashes
  // The node covers tile hashes [first, first + 2^sub_level) in tile coordinates of its level.
  uint64_t first = node.n << sub_level;
  uint64_t tile_n = first >> kTileShift;
  uint64_t offset = first - (tile_n << kTileShift);
  uint64_t count = uint64_t{1} << sub_level;
  TileSlot slot;
  slot.tile = HashTile{tile_level, tile_n, static_cast<uint32_t>(offset + count)};
  slot.begin = static_cast<size_t>(offset) * kHashSize;
  slot.end = static_cast<size_t>(offset + count) * kHashSize;
  return slot;
}

// The root of the complete subtree whose leaves are the (power-of-two many) hashes in `data`.
Hash subtree_of_tile_hashes(ByteView data) {
  if (data.size() == kHashSize) {
    Hash h;
    std::memcpy(h.data(), data.data(), kHashSize);
    return h;
  }
  size_t half = data.size() / 2;
  return node_hash(subtree_of_tile_hashes(data.first(half)),
                   subtree_of_tile_hashes(data.subspan(half)));
}

// Parses "xDDD/.../DDD" (already split at '/'): all groups but the last carry the "x".
Result<uint64_t> parse_index_groups(const std::vector<std::string_view>& groups) {
  if (groups.empty()) return rejected("tile path has no index");
  uint64_t n = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    std::string_view g = groups[i];
    bool last = i + 1 == groups.size();
    if (!last) {
      if (g.empty() || g[0] != 'x') {
        return rejected("tile index group '" + std::string(g) + "' must start with 'x'");
      }
      g.remove_prefix(1);
    }
    if (g.size() != 3 || g.find_first_not_of("0123456789") != std::string_view::npos) {
      return rejected("tile index group '" + std::string(groups[i]) +
                      "' must be three decimal digits");
    }
    uint64_t d = static_cast<uint64_t>((g[0] - '0') * 100 + (g[1] - '0') * 10 + (g[2] - '0'));
    if (n > (UINT64_MAX - d) / 1000) return rejected("tile index does not fit in 64 bits");
    n = n * 1000 + d;
  }
  return n;
}

std::vector<std::string_view> split_slash(std::string_view s) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t slash = s.find('/');
    out.push_back(s.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    s.remove_prefix(slash + 1);
  }
}

// Parses everything after "tile/": the level element, the index groups and an optional
// ".p/<W>". Canonical form is checked by the caller.
Result<std::variant<HashTile, EntryBundle>> parse_tile_parts(std::vector<std::string_view> parts) {
  if (parts.size() < 2) return rejected("tile path needs a level and an index");
  uint32_t width = kTileWidth;
  if (parts.size() >= 3 && parts[parts.size() - 2].ends_with(".p")) {
    auto w = parse_u64(parts.back());
    if (!w || *w < 1 || *w >= kTileWidth) {
      return rejected("partial tile width '" + std::string(parts.back()) +
                      "' must be a decimal number from 1 to 255");
    }
    width = static_cast<uint32_t>(*w);
    parts.pop_back();
    parts.back().remove_suffix(2);  // "067.p" → "067"
  }
  auto n = parse_index_groups(std::vector<std::string_view>(parts.begin() + 1, parts.end()));
  if (!n) return n.error();
  if (parts[0] == "entries") return std::variant<HashTile, EntryBundle>(EntryBundle{*n, width});
  auto level = parse_u64(parts[0]);
  if (!level || *level > static_cast<uint64_t>(kMaxTileLevel)) {
    return rejected("tile level '" + std::string(parts[0]) +
                    "' must be 'entries' or a decimal number from 0 to 63");
  }
  return std::variant<HashTile, EntryBundle>(HashTile{static_cast<int>(*level), *n, width});
}

}  // namespace

std::string tile_index_path(uint64_t n) {
  std::string path = three_digits(n % 1000);
  for (n /= 1000; n > 0; n /= 1000) path = "x" + three_digits(n % 1000) + "/" + path;
  return path;
}

std::string hash_tile_path(int level, uint64_t n, uint32_t width) {
  EVL_ASSERT(level >= 0 && level <= kMaxTileLevel);
  return "tile/" + std::to_string(level) + "/" + tile_index_path(n) + partial_suffix(width);
}

std::string hash_tile_path(const HashTile& tile) {
  return hash_tile_path(tile.level, tile.n, tile.width);
}

std::string entry_bundle_path(uint64_t n, uint32_t width) {
  return "tile/entries/" + tile_index_path(n) + partial_suffix(width);
}

std::string entry_bundle_path(const EntryBundle& bundle) {
  return entry_bundle_path(bundle.n, bundle.width);
}

Result<std::variant<HashTile, EntryBundle>> parse_tile_path(std::string_view path) {
  std::string quoted = "'" + std::string(path) + "'";
  if (!path.starts_with("tile/")) return rejected("tile path " + quoted + " must start with tile/");
  auto parsed = parse_tile_parts(split_slash(path.substr(5)));
  if (!parsed) return parsed.error().with_context("tile path " + quoted);
  // Each resource has exactly one path: refuse spellings such as "x000/005" for "005".
  std::string canonical = std::visit(
      [](const auto& t) {
        if constexpr (std::is_same_v<std::decay_t<decltype(t)>, HashTile>) {
          return hash_tile_path(t);
        } else {
          return entry_bundle_path(t);
        }
      },
      *parsed);
  if (canonical != path) {
    return rejected("tile path " + quoted + " is not canonical; the same resource is at '" +
                    canonical + "'");
  }
  return parsed;
}

std::vector<HashTile> new_hash_tiles(uint64_t old_size, uint64_t new_size) {
  EVL_ASSERT(old_size <= new_size);
  std::vector<HashTile> tiles;
  for (int level = 0; level * kTileHeight < 64 && (new_size >> (level * kTileHeight)) > 0;
       ++level) {
    // Counts of complete level-(8·level) subtrees: the hashes this tile level holds.
    uint64_t old_hashes = old_size >> (level * kTileHeight);
    uint64_t new_hashes = new_size >> (level * kTileHeight);
    if (old_hashes == new_hashes) continue;
    // The tile that was partial at old_size (or the next one) onwards is new.
    for (uint64_t n = old_hashes >> kTileShift; n < (new_hashes >> kTileShift); ++n) {
      tiles.push_back(HashTile{level, n, kTileWidth});
    }
    uint64_t n = new_hashes >> kTileShift;
    auto width = static_cast<uint32_t>(new_hashes - (n << kTileShift));
    if (width > 0) tiles.push_back(HashTile{level, n, width});
  }
  return tiles;
}

std::vector<HashTile> hash_tiles(uint64_t size) { return new_hash_tiles(0, size); }

std::vector<EntryBundle> new_entry_bundles(uint64_t old_size, uint64_t new_size) {
  EVL_ASSERT(old_size <= new_size);
  std::vector<EntryBundle> bundles;
  if (old_size == new_size) return bundles;
  for (uint64_t n = old_size >> kTileShift; n < (new_size >> kTileShift); ++n) {
    bundles.push_back(EntryBundle{n, kTileWidth});
  }
  uint64_t n = new_size >> kTileShift;
  auto width = static_cast<uint32_t>(new_size - (n << kTileShift));
  if (width > 0) bundles.push_back(EntryBundle{n, width});
  return bundles;
}

std::vector<EntryBundle> entry_bundles(uint64_t size) { return new_entry_bundles(0, size); }

HashTile tile_for_stored_hash(uint64_t index) { return slot_for_stored_hash(index).tile; }

std::vector<uint64_t> tile_stored_hash_indexes(const HashTile& tile) {
  EVL_ASSERT(tile.level >= 0 && tile.level <= kMaxTileLevel);
  EVL_ASSERT(tile.width >= 1 && tile.width <= kTileWidth);
  std::vector<uint64_t> indexes(tile.width);
  uint64_t first = tile.n << kTileShift;
  for (uint32_t i = 0; i < tile.width; ++i) {
    indexes[i] = stored_hash_index(tile.level * kTileHeight, first + i);
  }
  return indexes;
}

Result<Hash> hash_from_tile(const HashTile& tile, ByteView data, uint64_t index) {
  if (tile.level < 0 || tile.level > kMaxTileLevel || tile.width < 1 || tile.width > kTileWidth) {
    return rejected("tile level " + std::to_string(tile.level) + " width " +
                    std::to_string(tile.width) + " is not a tile (level 0..63, width 1..256)");
  }
  std::string path = hash_tile_path(tile);
  if (data.size() < size_t{tile.width} * kHashSize) {
    return rejected("tile " + path + " has " + std::to_string(data.size()) + " bytes; it needs " +
                    std::to_string(size_t{tile.width} * kHashSize));
  }
  TileSlot slot = slot_for_stored_hash(index);
  if (slot.tile.level != tile.level || slot.tile.n != tile.n || slot.tile.width > tile.width) {
    return rejected("stored hash " + std::to_string(index) + " is in tile " +
                    hash_tile_path(slot.tile) + ", not in " + path);
  }
  return subtree_of_tile_hashes(data.subspan(slot.begin, slot.end - slot.begin));
}

void append_entry_frame(std::string& out, ByteView entry) {
  EVL_ASSERT(entry.size() <= 0xffff);
  out.push_back(static_cast<char>(entry.size() >> 8));
  out.push_back(static_cast<char>(entry.size() & 0xff));
  out.append(as_chars(entry));
}

Result<std::vector<ByteView>> split_entry_frames(ByteView data, size_t max_entries) {
  std::vector<ByteView> entries;
  size_t pos = 0;
  while (pos < data.size()) {
    const std::string frame = "frame " + std::to_string(entries.size()) + " (byte " +
                              std::to_string(pos) + ")";
    if (entries.size() == max_entries) {
      return rejected("more than " + std::to_string(max_entries) + " entries: " + frame +
                      " is one too many; send the rest in another batch");
    }
    if (data.size() - pos < 2) return rejected(frame + " is cut short inside its length prefix");
    const size_t len = size_t{data[pos]} << 8 | data[pos + 1];
    pos += 2;
    if (len == 0) return rejected(frame + " is an empty entry; every entry has at least a body");
    if (data.size() - pos < len) {
      return rejected(frame + " says " + std::to_string(len) + " bytes but only " +
                      std::to_string(data.size() - pos) + " follow");
    }
    entries.push_back(data.subspan(pos, len));
    pos += len;
  }
  return entries;
}

}  // namespace evl
