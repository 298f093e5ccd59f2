#include "ledger/tiles.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "events/file_read.h"
#include "events/file_write.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/http_fetch.h"
#include "ledger/tile_path.h"

namespace evl {
namespace {

constexpr size_t kMaxEntrySize = 65535;  // the bundle's uint16 length prefix

// The most each resource of a layout can hold (files and HTTP bodies alike).
const ReadLimit kCheckpointLimit{"checkpoint", kMaxNoteFileBytes};
const ReadLimit kHashTileLimit{"hash tile", size_t{kTileWidth} * kHashSize};
const ReadLimit kBundleLimit{"entry bundle", size_t{kTileWidth} * (2 + kMaxEntrySize)};

// Whether (prefix + width) · 256^level <= size: every record the resource covers is in the tree.
bool covered(int level, uint64_t n, uint32_t width, uint64_t size) {
  if (level < 0 || level >= 8 || width == 0 || width > kTileWidth) return false;
  if (n > (UINT64_MAX - width) / kTileWidth) return false;
  const uint64_t units = n * kTileWidth + width;  // in records of tree level 8·level
  return units <= (size >> (kTileHeight * level));
}

// The bundle's bytes: entries [n·256, n·256 + width) as uint16 length ‖ entry, one snapshot.
Status fill_entry_bundle(const Ledger& ledger, const EntryBundle& bundle, std::string& out) {
  out.clear();
  const uint64_t first = bundle.n * kTileWidth;
  return ledger.scan(first, first + bundle.width, [&](uint64_t index, ByteView entry) {
    if (entry.size() > kMaxEntrySize) {
      return corrupt("entry " + std::to_string(index) + " is " + std::to_string(entry.size()) +
                     " bytes; entries are at most 65,535 bytes, so the ledger is damaged");
    }
    append_entry_frame(out, entry);
    return Status::ok();
  });
}

// The tile's bytes: its width · 32 bytes of stored hashes, one snapshot.
Status fill_hash_tile(const Ledger& ledger, const HashTile& tile, std::string& out) {
  out.clear();
  Status s = ledger.read_tree([&](const HashReader& hashes, uint64_t) -> Status {
    auto read = hashes.read_hashes(tile_stored_hash_indexes(tile));
    if (!read) return read.error();
    out.reserve(read->size() * kHashSize);
    for (const Hash& h : *read) out.append(as_chars(h));
    return Status::ok();
  });
  return s.with_context("hash tile " + hash_tile_path(tile));
}

const ReadLimit& limit_of(const std::string& rel) {
  if (rel == "checkpoint") return kCheckpointLimit;
  return rel.starts_with("tile/entries/") ? kBundleLimit : kHashTileLimit;
}

std::string errno_text() { return std::strerror(errno); }

// ---- the export directory ------------------------------------------------------------------

// A directory being exported into, locked against a second exporter for its lifetime. Paths
// are relative to its root; parents are created on demand; every file is written under a
// temporary name beside it and renamed into place, so a reader never sees half a file.
class ExportDir {
 public:
  static Result<std::unique_ptr<ExportDir>> open(const std::string& root) {
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (ec) return io_error("cannot create export directory " + root + ": " + ec.message());
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open export directory " + root + ": " + errno_text());
    auto dir = std::unique_ptr<ExportDir>(new ExportDir(root, fd));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      return io_error("export directory " + root + " is locked by another export; wait for it "
                      "to finish (one exporter per directory)");
    }
    return dir;
  }
  ~ExportDir() { ::close(fd_); }
  ExportDir(const ExportDir&) = delete;
  ExportDir& operator=(const ExportDir&) = delete;

  const std::string& root() const { return root_; }

  // The file's bytes, or nullopt when it does not exist (or is too large to be `rel`, which
  // the export then replaces).
  Result<std::optional<std::string>> read(const std::string& rel) const {
    auto data = read_file_at(fd_, rel, path(rel), limit_of(rel));
    if (!data && data.error().code() == Code::kRejected) return std::optional<std::string>();
    return data;
  }

  // Writes `data` to `rel` through a temporary file and a rename. `durable`: the data and the
  // rename reach the disk before this returns.
  Status write(const std::string& rel, std::string_view data, bool durable) {
    size_t slash = rel.rfind('/');
    std::string parent = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    EVL_RETURN_IF_ERROR(make_parents(parent));
    std::string tmp = (parent.empty() ? "" : parent + "/") + "." + rel.substr(slash + 1) + ".tmp";
    int fd = ::openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("cannot create " + path(tmp) + ": " + errno_text());
    Status s = write_all(fd, data, path(tmp));
    if (s && durable && ::fsync(fd) != 0) s = io_error("cannot sync " + path(tmp) + ": " + errno_text());
    ::close(fd);
    EVL_RETURN_IF_ERROR(s);
    if (::renameat(fd_, tmp.c_str(), fd_, rel.c_str()) != 0) {
      return io_error("cannot rename " + path(tmp) + " to " + rel + ": " + errno_text());
    }
    if (durable && ::fsync(fd_) != 0) return io_error("cannot sync " + root_ + ": " + errno_text());
    return Status::ok();
  }

  // Flushes everything written so far to disk (one syncfs rather than an fsync per file).
  Status sync() {
    if (::syncfs(fd_) != 0) return io_error("cannot sync the filesystem of " + root_ + ": " + errno_text());
    return Status::ok();
  }

 private:
  ExportDir(std::string root, int fd) : root_(std::move(root)), fd_(fd) {}

  std::string path(const std::string& rel) const { return root_ + "/" + rel; }

  Status make_parents(const std::string& parent) {
    if (parent.empty() || parent == last_parent_) return Status::ok();
    for (size_t pos = parent.find('/');; pos = parent.find('/', pos + 1)) {
      std::string part = parent.substr(0, pos);
      if (::mkdirat(fd_, part.c_str(), 0755) != 0 && errno != EEXIST) {
        return io_error("cannot create directory " + path(part) + ": " + errno_text());
      }
      if (pos == std::string::npos) break;
    }
    last_parent_ = parent;
    return Status::ok();
  }

  std::string root_;
  int fd_;
  std::string last_parent_;
};

// ---- export ---------------------------------------------------------------------------------

struct ExportState {
  const Ledger& ledger;
  ExportDir& dir;
  ExportReport& report;
  const ExportOptions& options;
};

// Writes a file that is new since the directory's checkpoint. One left by an interrupted export
// is kept when its bytes are already right (so a full tile is still never rewritten), replaced
// otherwise: nothing published covers it.
Status write_new_file(ExportState& st, const std::string& rel, std::string_view data,
                      uint64_t& counter) {
  auto existing = st.dir.read(rel);
  if (!existing) return existing.error();
  if (existing->has_value() && **existing == data) {
    ++st.report.files_kept;
    return Status::ok();
  }
  EVL_RETURN_IF_ERROR(st.dir.write(rel, data, false));
  ++counter;
  st.report.bytes_written += data.size();
  return Status::ok();
}

Status write_bundles(ExportState& st, uint64_t old_size, uint64_t size) {
  std::string data;
  data.reserve(size_t{1} << 20);
  const uint64_t first = (old_size / kTileWidth) * kTileWidth;
  for (const EntryBundle& bundle : new_entry_bundles(old_size, size)) {
    EVL_RETURN_IF_ERROR(fill_entry_bundle(st.ledger, bundle, data));
    EVL_RETURN_IF_ERROR(write_new_file(st, entry_bundle_path(bundle), data,
                                       st.report.bundles_written));
    if (st.options.progress) {
      st.options.progress(bundle.n * kTileWidth + bundle.width - first, size - first);
    }
  }
  return Status::ok();
}

// The ledger's stored tree must have the checkpoint's root before its hashes are published.
Status check_tree(const Ledger& ledger, const Checkpoint& checkpoint) {
  return ledger.read_tree([&](const HashReader& hashes, uint64_t size) -> Status {
    if (size < checkpoint.size) {
      return corrupt("the ledger's tree has " + std::to_string(size) +
                     " entries, fewer than its newest checkpoint's " +
                     std::to_string(checkpoint.size));
    }
    auto root = tree_hash(checkpoint.size, hashes);
    if (!root) return root.error();
    if (*root != checkpoint.root) {
      return corrupt("the ledger's stored tree of size " + std::to_string(checkpoint.size) +
                     " has root " + base64_encode(*root) + " but its checkpoint says " +
                     base64_encode(checkpoint.root) + "; run evledger verify");
    }
    return Status::ok();
  });
}

Status write_hash_tiles(ExportState& st, uint64_t old_size, uint64_t size) {
  std::string data;
  for (const HashTile& tile : new_hash_tiles(old_size, size)) {
    EVL_RETURN_IF_ERROR(fill_hash_tile(st.ledger, tile, data));
    EVL_RETURN_IF_ERROR(write_new_file(st, hash_tile_path(tile), data, st.report.tiles_written));
  }
  return Status::ok();
}

// The size of the checkpoint already in the directory (0 when there is none), after checking
// that it is this log's and that the ledger still has that tree.
Result<uint64_t> previous_size(const ExportState& st, const VerifierKey& log_key,
                               const Checkpoint& newest) {
  const std::string path = st.dir.root() + "/checkpoint";
  auto note = st.dir.read("checkpoint");
  if (!note) return note.error();
  if (!note->has_value()) return uint64_t{0};
  auto old = open_checkpoint(**note, log_key);
  if (!old) {
    return rejected(path + " is not a checkpoint of log " + log_key.name + " (" +
                    old.error().message() + "): the directory belongs to another log; export "
                    "into an empty directory or this log's own export");
  }
  if (old->size > newest.size) {
    return rejected(path + " is at size " + std::to_string(old->size) + " but the ledger's "
                    "newest checkpoint is at " + std::to_string(newest.size) + ": the ledger "
                    "lost entries or the directory belongs to another copy of this log");
  }
  auto root = st.ledger.root(old->size);
  if (!root) return root.error();
  if (*root != old->root) {
    return rejected(path + " has root " + base64_encode(old->root) + " at size " +
                    std::to_string(old->size) + " but the ledger's tree of that size has " +
                    base64_encode(*root) + ": history was rewritten, or the directory belongs "
                    "to another log with the same key; do not export over it");
  }
  return old->size;
}

Status write_checkpoint(ExportState& st, const std::string& note) {
  auto existing = st.dir.read("checkpoint");
  if (!existing) return existing.error();
  if (existing->has_value() && **existing == note) return Status::ok();
  // Every tile the new checkpoint covers must be on disk before the checkpoint is.
  EVL_RETURN_IF_ERROR(st.dir.sync());
  EVL_RETURN_IF_ERROR(st.dir.write("checkpoint", note, true));
  st.report.checkpoint_written = true;
  st.report.bytes_written += note.size();
  return Status::ok();
}

// The ledger's newest checkpoint, verified under its own log key.
Result<Checkpoint> newest_checkpoint(const Ledger& ledger, const VerifierKey& log_key,
                                     std::string& note) {
  auto text = ledger.checkpoint();
  if (!text) {
    if (text.error().code() != Code::kNotFound) return text.error();
    return not_found("the ledger " + ledger.dir() + " has no checkpoint yet; append the "
                     "genesis first");
  }
  note = std::move(*text);
  auto checkpoint = open_checkpoint(note, log_key);
  if (!checkpoint) return corrupt("the ledger's newest checkpoint does not verify under its log "
                                  "key: " + checkpoint.error().message());
  return checkpoint;
}

}  // namespace

Result<ExportReport> export_tiles(const Ledger& ledger, const std::string& out_dir,
                                  const ExportOptions& options) {
  auto log_key = ledger.log_verifier();
  if (!log_key) return log_key.error();
  std::string note;
  auto newest = newest_checkpoint(ledger, *log_key, note);
  if (!newest) return newest.error();
  auto dir = ExportDir::open(out_dir);
  if (!dir) return dir.error();
  ExportReport report;
  report.size = newest->size;
  report.origin = newest->origin;
  report.root = base64_encode(newest->root);
  ExportState st{ledger, **dir, report, options};
  auto old_size = previous_size(st, *log_key, *newest);
  if (!old_size) return old_size.error();
  report.previous_size = *old_size;
  if (*old_size < newest->size) {
    // Bundles and tiles are read in many short snapshots rather than one long one (read
    // transactions stay short). They agree all the same: everything read lies inside the tree
    // of the checkpoint's size, which no later append changes.
    EVL_RETURN_IF_ERROR(check_tree(ledger, *newest));
    EVL_RETURN_IF_ERROR(write_bundles(st, *old_size, newest->size));
    EVL_RETURN_IF_ERROR(write_hash_tiles(st, *old_size, newest->size));
  }
  EVL_RETURN_IF_ERROR(write_checkpoint(st, note));
  return report;
}

bool tree_has_tile(const HashTile& tile, uint64_t size) {
  return covered(tile.level, tile.n, tile.width, size);
}

bool tree_has_bundle(const EntryBundle& bundle, uint64_t size) {
  return covered(0, bundle.n, bundle.width, size);
}

Result<std::string> read_hash_tile(const Ledger& ledger, const HashTile& tile, uint64_t size) {
  if (!tree_has_tile(tile, size)) {
    return not_found(hash_tile_path(tile) + " is not in the tree of size " +
                     std::to_string(size));
  }
  std::string data;
  EVL_RETURN_IF_ERROR(fill_hash_tile(ledger, tile, data));
  return data;
}

Result<std::string> read_entry_bundle(const Ledger& ledger, const EntryBundle& bundle,
                                      uint64_t size) {
  if (!tree_has_bundle(bundle, size)) {
    return not_found(entry_bundle_path(bundle) + " is not in the tree of size " +
                     std::to_string(size));
  }
  std::string data;
  data.reserve(size_t{bundle.width} * 2048);
  EVL_RETURN_IF_ERROR(fill_entry_bundle(ledger, bundle, data));
  return data;
}

// ---- reading a tile layout back ---------------------------------------------------------------

namespace {

// Reads one resource of the layout by its relative path ("checkpoint", "tile/0/000"), at most
// limit_of(rel) bytes of it. Messages do not name the source (the callers do).
using FetchFn = std::function<Result<std::string>(const std::string& rel)>;

// Why `root` cannot hold a layout, if it cannot: it is missing or not a directory (kIo, as
// any path that is not there).
Status check_layout_root(const std::string& root) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    return io_error(std::string(errno == ENOENT ? "no such directory" : errno_text()) +
                    "; --tiles names the directory that 'evledger export-tiles' wrote");
  }
  if (!S_ISDIR(st.st_mode)) {
    return io_error("is not a directory; --tiles names the directory that 'evledger "
                    "export-tiles' wrote (a server's URL goes to --url http://...)");
  }
  return Status::ok();
}

FetchFn directory_fetcher(std::string root) {
  return [root = std::move(root)](const std::string& rel) -> Result<std::string> {
    std::string path = root + "/" + rel;
    auto data = read_file_at(AT_FDCWD, path, path, limit_of(rel));
    if (!data || !data->has_value()) EVL_RETURN_IF_ERROR(check_layout_root(root));
    if (!data) return data.error();
    if (!data->has_value()) return not_found(path + " does not exist");
    return std::move(**data);
  };
}

FetchFn url_fetcher(std::string base) {
  if (!base.ends_with('/')) base += '/';
  return [base = std::move(base)](const std::string& rel) -> Result<std::string> {
    HttpOptions options;
    options.max_body = limit_of(rel).max_bytes;
    return http_get(base + rel, options);
  };
}

// The URL refused by name: a location with a scheme is a URL, and only http:// is fetched.
FetchFn refused_url_fetcher() {
  return [](const std::string&) -> Result<std::string> {
    return usage_error("not an http:// URL; tiles are read from a directory (--tiles DIR) or "
                       "over plain http (--url http://host/prefix/)");
  };
}

class TileSource final : public AuditSource {
 public:
  TileSource(std::string name, FetchFn fetch) : name_(std::move(name)), fetch_(std::move(fetch)) {}

  std::string name() const override { return name_; }

  // Messages: the audit names the source before what scan_entries returns, not before what
  // scan_checkpoints and check_node return, so those two add the name here.
  Status scan_checkpoints(const std::function<Status(std::string_view)>& visit) const override {
    if (Status s = load_checkpoint(); !s) return s.with_context(name_);
    return visit(note_);
  }

  Status scan_entries(uint64_t from, uint64_t to, const EntryVisitor& visit) override {
    EVL_RETURN_IF_ERROR(load_checkpoint());
    if (from > to || to > size_) {
      return usage_error("entries [" + std::to_string(from) + ", " + std::to_string(to) +
                         ") are not all in its checkpoint's tree of size " + std::to_string(size_));
    }
    for (uint64_t i = from; i < to; ++i) {
      EVL_RETURN_IF_ERROR(load_bundle(i / kTileWidth));
      const auto [offset, length] = entries_[i % kTileWidth];
      auto* p = reinterpret_cast<const uint8_t*>(bundle_data_.data()) + offset;
      EVL_RETURN_IF_ERROR(visit(i, ByteView(p, length)));
    }
    return Status::ok();
  }

  Status check_node(int level, uint64_t n, const Hash& hash, uint64_t size) override {
    if (level % kTileHeight != 0) return Status::ok();
    int tile_level = level / kTileHeight;
    uint64_t count = size >> level;  // complete nodes of this level in the tree
    if (n >= count) {
      return usage_error("node (level " + std::to_string(level) + ", " + std::to_string(n) +
                         ") is not in the tree of size " + std::to_string(size));
    }
    uint64_t tile_n = n / kTileWidth;
    auto width = tile_n < count / kTileWidth ? kTileWidth
                                             : static_cast<uint32_t>(count % kTileWidth);
    auto tile = load_tile(HashTile{tile_level, tile_n, width}, size);
    if (!tile) return tile.error().with_context(name_);
    const char* stored = tile.value()->data() + (n % kTileWidth) * kHashSize;
    if (std::memcmp(stored, hash.data(), kHashSize) == 0) return Status::ok();
    Bytes found(stored, stored + kHashSize);
    return corrupt(name_ + ": hash tile " + hash_tile_path(HashTile{tile_level, tile_n, width}) +
                   " holds " + base64_encode(found) + " for tree node (level " +
                   std::to_string(level) + ", " + std::to_string(n) + "), but the entries give " +
                   base64_encode(hash));
  }

  Status check_ids(uint64_t, std::span<const Digest>, uint64_t&) override {
    return Status::ok();  // a tile layout has no id index
  }

  // Every bundle was checked to hold exactly the entries the checkpoint's size gives it.
  Status finish(uint64_t) const override { return Status::ok(); }

 private:
  struct CachedTile {
    HashTile tile;
    std::string data;
  };

  // A missing resource that the checkpoint's size requires is a damaged layout.
  Result<std::string> fetch_required(const std::string& rel, uint64_t size) const {
    auto data = fetch_(rel);
    if (!data && data.error().code() == Code::kNotFound) {
      return corrupt(rel + " is missing, but the tree of size " + std::to_string(size) +
                     " needs it (" + data.error().message() + ")");
    }
    if (!data && data.error().code() == Code::kRejected) return corrupt(data.error().message());
    return data;
  }

  Status load_checkpoint() const {
    std::lock_guard lock(checkpoint_mu_);
    if (loaded_) return Status::ok();
    auto note = fetch_("checkpoint");
    if (!note) return note.error().with_context("cannot read the checkpoint");
    auto parsed = parse_note(*note);
    if (!parsed) return parsed.error().with_context("checkpoint");
    auto checkpoint = parse_checkpoint_body(parsed->text);
    if (!checkpoint) return checkpoint.error().with_context("checkpoint");
    note_ = std::move(*note);
    size_ = checkpoint->size;
    loaded_ = true;
    return Status::ok();
  }

  Status load_bundle(uint64_t n) {
    if (bundle_n_ == n) return Status::ok();
    bundle_n_.reset();
    auto width = static_cast<uint32_t>(std::min<uint64_t>(kTileWidth, size_ - n * kTileWidth));
    std::string path = entry_bundle_path(n, width);
    auto data = fetch_required(path, size_);
    if (!data) return data.error();
    bundle_data_ = std::move(*data);
    EVL_RETURN_IF_ERROR(split_bundle(path, n, width));
    bundle_n_ = n;
    return Status::ok();
  }

  // Splits the bundle into its entries; the framing must give exactly `width` entries.
  Status split_bundle(const std::string& path, uint64_t n, uint32_t width) {
    entries_.clear();
    size_t pos = 0;
    const auto* p = reinterpret_cast<const uint8_t*>(bundle_data_.data());
    for (uint32_t i = 0; i < width; ++i) {
      std::string what = "entry bundle " + path + ", entry " +
                         std::to_string(n * kTileWidth + i);
      if (bundle_data_.size() - pos < 2) {
        return corrupt(what + ": the bundle ends before its length prefix; a bundle of width " +
                       std::to_string(width) + " holds " + std::to_string(width) + " entries");
      }
      size_t length = size_t{p[pos]} << 8 | p[pos + 1];
      pos += 2;
      if (bundle_data_.size() - pos < length) {
        return corrupt(what + " is cut short: its prefix says " + std::to_string(length) +
                       " bytes, " + std::to_string(bundle_data_.size() - pos) + " remain");
      }
      entries_.emplace_back(pos, length);
      pos += length;
    }
    if (pos != bundle_data_.size()) {
      return corrupt("entry bundle " + path + " has " +
                     std::to_string(bundle_data_.size() - pos) + " trailing bytes after its " +
                     std::to_string(width) + " entries");
    }
    return Status::ok();
  }

  // The tile, from the one-per-level cache or freshly read (replacing that level's tile).
  Result<const std::string*> load_tile(const HashTile& tile, uint64_t size) {
    if (tiles_.size() <= static_cast<size_t>(tile.level)) tiles_.resize(tile.level + 1);
    std::optional<CachedTile>& slot = tiles_[tile.level];
    if (slot && slot->tile == tile) return &slot->data;
    slot.reset();
    std::string path = hash_tile_path(tile);
    auto data = fetch_required(path, size);
    if (!data) return data.error();
    if (data->size() != size_t{tile.width} * kHashSize) {
      return corrupt("hash tile " + path + " is " + std::to_string(data->size()) +
                     " bytes; a tile of width " + std::to_string(tile.width) + " is exactly " +
                     std::to_string(size_t{tile.width} * kHashSize));
    }
    slot = CachedTile{tile, std::move(*data)};
    return &slot->data;
  }

  std::string name_;
  FetchFn fetch_;
  // The checkpoint is loaded once, by whichever call comes first; afterwards it is only read.
  mutable std::mutex checkpoint_mu_;
  mutable bool loaded_ = false;
  mutable std::string note_;
  mutable uint64_t size_ = 0;
  // scan_entries' state (the audit's reader thread).
  std::optional<uint64_t> bundle_n_;
  std::string bundle_data_;
  std::vector<std::pair<size_t, size_t>> entries_;  // offset and length in bundle_data_
  std::vector<std::optional<CachedTile>> tiles_;    // check_node's, index: tile level
};

}  // namespace

std::unique_ptr<AuditSource> tile_audit_source(const std::string& dir_or_url) {
  if (dir_or_url.starts_with("http://") || dir_or_url.starts_with("https://")) {
    return std::make_unique<TileSource>(dir_or_url, url_fetcher(dir_or_url));
  }
  if (dir_or_url.find("://") != std::string::npos) {
    return std::make_unique<TileSource>(dir_or_url, refused_url_fetcher());
  }
  std::string root = dir_or_url;
  while (root.size() > 1 && root.ends_with('/')) root.pop_back();
  return std::make_unique<TileSource>("tiles " + root, directory_fetcher(root));
}

}  // namespace evl
