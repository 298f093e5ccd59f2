// ledger/upstream.h — a log's C2SP tlog-tiles layout as a mirror reads it: from `evledger serve`
// or from any static host of an export (nginx, an object store), over kept-alive http://
// connections (ledger/http_client.h: deadlines and body limits on every request).
//
// Nothing here is trusted: notes, tiles and bundles are handed over as fetched, and the caller
// verifies them (signatures, the tree against a checkpoint's root, every entry as the audit).
// Bundles are checked only for their framing: exactly the entries their width says.
//
// Errors: kNotFound for a resource the upstream does not have (404); kCorrupt for a bundle or
// tile of the wrong framing or length, and a missing one that the checkpoint's size needs;
// kIo for the network (refused, reset, timeouts, another status); kUsage for a URL this client
// cannot fetch. Messages name the URL.
//
// Thread safety: one Upstream is used by one thread at a time; fetch_entries runs its own
// fetching threads inside the call. A tree() reader may be used from the calling thread while
// no other call runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "events/bytes.h"
#include "events/status.h"
#include "ledger/merkle.h"

namespace evl {

class Upstream {
 public:
  virtual ~Upstream() = default;

  // `base_url` is the layout's root, "http://host[:port][/prefix]". `connections` (1 to 64)
  // kept-alive connections fetch entry bundles in parallel.
  static Result<std::unique_ptr<Upstream>> open(const std::string& base_url, unsigned connections);

  // The URL of a resource, for messages.
  virtual std::string url(std::string_view target) const = 0;

  // The newest checkpoint note, verbatim (with any cosignature lines).
  [[nodiscard]] virtual Result<std::string> checkpoint() = 0;

  // The log's signed statement about its projections at `size` (evledger serve's
  // /api/v1/statement?size=N, its "note"), or nullopt where the upstream publishes none (a
  // static host: 404).
  [[nodiscard]] virtual Result<std::optional<std::string>> statement(uint64_t size) = 0;

  // Fetches the entries [from, to) of the tree of `size` entries from its bundles, over the
  // connections in parallel, at most `window` bundles ahead of the delivery, and calls
  // `deliver` on this thread, in index order, with runs of consecutive entries (the bytes are
  // valid during the call only). Stops at the first error, a failed delivery included.
  using EntryRun = std::function<Status(uint64_t first, std::span<const ByteView> entries)>;
  [[nodiscard]] virtual Status fetch_entries(uint64_t from, uint64_t to, uint64_t size,
                                             size_t window, const EntryRun& deliver) = 0;

  // The stored hashes of the tree of `size` entries, read from its hash tiles, each fetched
  // once on first use. Valid while the Upstream is.
  virtual std::unique_ptr<HashReader> tree(uint64_t size) = 0;
};

// The stored hashes of the tree of `size` entries from the hash tiles of a tile layout in a
// directory or under an http:// URL (for an auditor's split-view evidence): each tile read once.
Result<std::unique_ptr<HashReader>> tile_tree(const std::string& dir_or_url, uint64_t size);

}  // namespace evl
