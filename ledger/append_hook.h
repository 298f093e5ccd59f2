// ledger/append_hook.h — state kept beside the log, in the same transactions as the entries.
//
// A ledger may be opened with an AppendHook (the projections are one). The writer calls it for
// every appended entry inside the append transaction, with a key/value store over the ledger's
// "projections" database in that transaction: what the hook writes commits or aborts with the
// entries. `Ledger::rebuild_state` empties that database and lets the hook fold the whole log
// again in one transaction, so readers see the old state until the new one is complete.
//
// A write transaction that stages entries (or a rebuild) runs begin_transaction(), on_entry()
// per entry (or rebuild()), then seal(), which returns the text of the statement about the
// state at the transaction's size; the writer signs it with the log key and stores it beside
// that size's checkpoint (ledger/STORAGE.md, "statements"). The hook may keep bookkeeping about
// its state (the projections keep the digest's sums) in a second store, the "projection_sums"
// database: it commits with the state and is not part of it.
//
// Errors: a hook's non-ok Status aborts the commit; every entry of the group then fails with it.
// Thread safety: prepare() runs on any thread; everything else on the writer thread only (or the
// rebuilding thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "events/event.h"
#include "events/status.h"
#include "keys/policy.h"

namespace evl {

// Visits one key/value pair; both views are valid only during the call. Return false to stop.
using KeyValueVisitor = std::function<bool(std::string_view key, std::string_view value)>;

// Byte-string keys and values; scan() visits keys in byte order. A missing key is not an
// error (get returns nullopt; erasing an absent key is ok).
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  [[nodiscard]] virtual Result<std::optional<std::string>> get(std::string_view key) const = 0;
  [[nodiscard]] virtual Status put(std::string_view key, std::string_view value) = 0;
  [[nodiscard]] virtual Status erase(std::string_view key) = 0;
  // Visits every key that starts with `prefix` (all keys for an empty prefix) in byte order.
  [[nodiscard]] virtual Status scan(std::string_view prefix, const KeyValueVisitor& visit) const = 0;
  // Visits the keys that start with `prefix` and are not below `from`, in byte order: a scan
  // that resumes where an earlier one stopped (the next page of a listing). This default
  // scans the prefix from its start and skips the keys below `from`; an ordered store seeks.
  [[nodiscard]] virtual Status scan_from(std::string_view prefix, std::string_view from,
                                         const KeyValueVisitor& visit) const {
    return scan(prefix, [&](std::string_view key, std::string_view value) {
      return key < from || visit(key, value);
    });
  }

  // Shown the value a write replaces or removes (valid only during the call).
  using ReplacedVisitor = std::function<void(std::string_view old_value)>;
  // put() and erase() that also show `replaced` the key's value before the write, when it had
  // one: what a digest kept while writing must subtract. After a failure, whether `replaced`
  // was called is unspecified (the caller drops what it kept, as the transaction aborts).
  // These defaults get() the value first; a store that finds it in the write's own lookup
  // overrides them.
  [[nodiscard]] virtual Status put_replacing(std::string_view key, std::string_view value,
                                             const ReplacedVisitor& replaced) {
    auto old = get(key);
    if (!old) return old.error();
    Status s = put(key, value);
    if (s && *old) replaced(**old);
    return s;
  }
  [[nodiscard]] virtual Status erase_replacing(std::string_view key,
                                               const ReplacedVisitor& replaced) {
    auto old = get(key);
    if (!old) return old.error();
    Status s = erase(key);
    if (s && *old) replaced(**old);
    return s;
  }

  // A hint, until called again with false: the puts that follow come in ascending key order,
  // most of them above every key the store holds (a state written in key order from nothing).
  // A B-tree store may then append them and fill its pages, instead of splitting them in
  // halves to leave room for inserts that will not come. Writes in any other order stay correct,
  // only slower.
  virtual void expect_ascending_writes(bool) {}
};

// Visits entries [from, to) of the log as seen by the transaction; bytes valid during the call.
using EntryScanner = std::function<Status(
    uint64_t from, uint64_t to, const std::function<Status(uint64_t, ByteView)>& visit)>;

// Visits the entry that the ledger's manifests index names for `manifest` (the one event that
// carries it: the ledger appends no second), as the transaction sees it, with its index; does
// not call `visit` when no entry carries it. The bytes are valid during the call.
using ManifestFinder = std::function<Status(
    const Digest& manifest, const std::function<Status(uint64_t, ByteView)>& visit)>;

struct AppendContext {
  KeyValueStore& store;   // the "projections" database, in the current write transaction
  KeyValueStore& sums;    // the hook's bookkeeping ("projection_sums"), same transaction
  const KeyPolicy& keys;  // the key state including this entry
  EntryScanner scan;      // the log so far, including entries staged in this transaction
  ManifestFinder find_manifest;  // the manifests index, including this transaction's entries
};

// What a hook derives from one entry alone (AppendHook::prepare), handed back to on_entry.
class PreparedEntry {
 public:
  virtual ~PreparedEntry() = default;
};

class AppendHook {
 public:
  virtual ~AppendHook() = default;
  // Work that depends on the entry alone, on neither the state nor the entry's index: the
  // ledger calls it on its checking threads, in parallel, before the single writer sequences
  // the entry, and passes the result to on_entry (again if the group is staged again). Must be
  // safe to call from many threads at once. `manifest`: the digest of the manifest the event
  // registers (SHA-256 of its canonical text), which the ledger has computed already, or null.
  // The default prepares nothing.
  [[nodiscard]] virtual std::unique_ptr<PreparedEntry> prepare(const EventBody& body,
                                                               const Digest* manifest) const {
    (void)body;
    (void)manifest;
    return nullptr;
  }
  // A write transaction starts: whatever the hook holds about an earlier one that did not reach
  // seal() (it aborted, or is being staged again after the map grew) is void.
  virtual void begin_transaction() = 0;
  // Entry `index` was staged; `keys` already includes it. `prepared`: what prepare() returned
  // for it, or null.
  [[nodiscard]] virtual Status on_entry(AppendContext& context, uint64_t index, const Digest& id,
                                        const EventBody& body, PreparedEntry* prepared) = 0;
  // Folds entries [0, size) into an empty store.
  [[nodiscard]] virtual Status rebuild(AppendContext& context, uint64_t size) = 0;
  // How many entries the state has folded (the ledger rebuilds it at open when this differs
  // from the log's size: a ledger written before the hook existed, or without it); 0 for a
  // state the hook cannot continue (made by a version that folds the log otherwise).
  [[nodiscard]] virtual Result<uint64_t> applied_size(const KeyValueStore& store) const = 0;
  // Ends the transaction's work: brings the bookkeeping in `context.sums` up to date and returns
  // the statement text the log key signs about the state of `size` entries of log `origin`.
  // kCorrupt when the state does not cover exactly `size` entries.
  [[nodiscard]] virtual Result<std::string> seal(AppendContext& context, std::string_view origin,
                                                 uint64_t size) = 0;
};

}  // namespace evl
