// ledger/tiles.h — the C2SP tlog-tiles layout of a ledger: exporting it to a directory, and
// reading one back (from a directory or an http:// URL) as an audit source.
//
// An export holds, under its root (ledger/tile_path.h draws the paths):
//   checkpoint                 the ledger's newest signed checkpoint note, byte for byte
//   tile/<L>/<N>[.p/<W>]       hash tiles: hashes of tree level 8·L, 32 bytes each
//   tile/entries/<N>[.p/<W>]   entry bundles: each entry as big-endian uint16 length ‖ bytes
// exactly for the tree of the checkpoint's size, so any tlog client (Go's sumdb/tlog, the
// Python checker in tests/tools/tlog_client.py) verifies it without evledger code.
//
// Export is incremental and crash-safe. An existing `checkpoint` must verify under the ledger's
// log key and its root must be the ledger's root at that size (otherwise the directory holds
// another log, or this log's history was rewritten, and the export refuses). Then only the
// tiles and bundles that are new since that size are written: a file is written under a
// temporary name and renamed; the new checkpoint is written (and made durable) last, after
// the filesystem was synced, so a crash leaves the directory at its previous checkpoint,
// plus some unpublished files that the next export compares and, if needed, replaces.
// Files the previous checkpoint covers are never opened for writing; partial tiles of older
// sizes stay for clients that still hold older checkpoints.
//
// Thread safety: export_tiles takes an exclusive lock on the directory (a second exporter gets
// kIo) and reads the ledger in its own snapshots; the ledger may be appended to meanwhile.
// An AuditSource from tile_audit_source allows scan_entries on one thread while check_node
// runs on another (the audit reads ahead); each of them is called by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ledger/audit.h"
#include "ledger/ledger.h"
#include "ledger/tile_path.h"

namespace evl {

struct ExportOptions {
  // Called now and then with the entries written so far and the number to write.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct ExportReport {
  uint64_t size = 0;           // tree size of the checkpoint now in the directory
  uint64_t previous_size = 0;  // size of the checkpoint found there before (0: none)
  std::string origin;
  std::string root;            // base64 root of the exported checkpoint
  uint64_t tiles_written = 0;  // hash tile files written
  uint64_t bundles_written = 0;  // entry bundle files written
  uint64_t files_kept = 0;     // new-since-the-old-checkpoint files found already correct
  uint64_t bytes_written = 0;  // bytes of all files written, the checkpoint included
  bool checkpoint_written = false;
};

// Writes the tlog-tiles layout of the ledger's newest checkpoint into `out_dir` (created if
// missing). Errors:
//   kRejected  out_dir/checkpoint is not this log's (bad note, other key or origin), is larger
//              than the ledger, or its root differs from the ledger's at that size
//   kNotFound  the ledger has no checkpoint yet (append the genesis first)
//   kCorrupt   the ledger's stored tree disagrees with its own checkpoint
//   kIo        the directory cannot be written, or another export holds its lock
Result<ExportReport> export_tiles(const Ledger& ledger, const std::string& out_dir,
                                  const ExportOptions& options = {});

// Whether the tree of `size` entries has hash tile `tile` (or bundle `bundle`): the hashes (or
// entries) it holds are all in that tree. A partial tile of an older size is still had: its
// bytes never change, and clients holding older checkpoints fetch it.
bool tree_has_tile(const HashTile& tile, uint64_t size);
bool tree_has_bundle(const EntryBundle& bundle, uint64_t size);

// The bytes of a hash tile or an entry bundle of the ledger's tree, exactly as export_tiles
// writes them (so a server answers from the ledger what a static host of an export answers).
// Each is read in one snapshot. kNotFound when the tree of `size` entries (at most the
// ledger's) does not have it; kCorrupt for a stored entry over 65,535 bytes or a missing hash.
Result<std::string> read_hash_tile(const Ledger& ledger, const HashTile& tile, uint64_t size);
Result<std::string> read_entry_bundle(const Ledger& ledger, const EntryBundle& bundle,
                                      uint64_t size);

// An AuditSource over a tile layout in a directory or under an http:// URL (the layout's root;
// a trailing slash is optional). It holds the single `checkpoint`; entries come from the entry
// bundles the checkpoint's size implies (full ones and the partial last one); check_node
// compares nodes at tree levels 0, 8, 16, ... with the hash tiles and passes others (the audit
// recomputes them and checks the root). Memory: one entry bundle, and one hash tile per level.
// The checkpoint is read once, on first use; the audit verifies its signature, this does not.
// Errors from the calls: kCorrupt naming the resource for a bundle whose framing is wrong
// (trailing bytes, a short entry), a tile of the wrong length or with a different hash, or a
// resource the checkpoint's size needs that is missing (a file that does not exist, HTTP 404);
// kRejected for a checkpoint that does not parse; kIo when reading or fetching fails (a missing
// root directory, one that is not a directory, a resource that is not a regular file, a
// deadline), kUsage for an https:// URL (http_fetch.h) and for any other scheme://. Each
// resource is read under its limit (events/file_read.h), from files and URLs alike: the
// checkpoint kMaxNoteFileBytes, a hash tile 8 KiB, an entry bundle 256 × 65,537 bytes; a
// larger one is kCorrupt.
std::unique_ptr<AuditSource> tile_audit_source(const std::string& dir_or_url);

}  // namespace evl
