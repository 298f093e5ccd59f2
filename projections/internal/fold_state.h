// projections/internal/fold_state.h — the projection state as the fold sees it: each record
// read from the store once, kept decoded, and written back on flush().
//
// The fold reads a record, changes it and writes it back for nearly every event that touches
// it. FoldState keeps what it has read or written: run views, group records and the next index
// as values, the facts of the manifests registered, every other key as its text (in a list,
// for the families it writes once and never reads: b/, L/, s/, v/). Registrations are not
// records: the log holds them, and the state looks up those it has not met there.
// flush() writes the changed records to the store in key order. The
// store's contents after flush() do not depend on when flush() was called: a record is the same
// value, serialized the same way, whether it is written after each event (the ledger's append
// transactions) or once after the whole log (a rebuild).
//
// When the store is empty at construction, the state knows every key there is, and a lookup
// that misses does not ask the store; forget() gives that up to free memory, except for the
// manifests, whose facts it keeps, for which runs have views (a set of their digests), and for
// the group records, the next index and the waiting and orphan records (w/, o/: what waits for
// a manifest or a run), which it keeps: the fold reads those for nearly every event.
//
// Lifetimes: pointers returned by find_run/find_manifest/find_group and references from
// add_run stay valid until forget() or the FoldState's destruction (map nodes do not move).
// Errors: a stored record that cannot be decoded is kCorrupt (naming it and the fix); the
// store's own errors unchanged. After an error the state is not flushed: the caller drops it.
// Thread safety: one thread, and the store is used through this state only while it lives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ledger/thread_pool.h"
#include "projections/digested_store.h"
#include "projections/internal/digest_table.h"
#include "projections/internal/groups.h"
#include "projections/internal/registry.h"
#include "projections/run_view.h"
#include "projections/store.h"

namespace evl {

// A record as the state holds it. At namespace scope, not nested in FoldState: clang 14
// crashes ("cannot compile this scalar expression yet") on a member of a nested class
// template with default member initializers that FoldState instantiates in its own body.
namespace fold_state_internal {
template <typename T>
struct Slot {
  std::optional<T> value;  // nullopt: absent (or erased)
  bool changed = false;
};
struct TextSlot {
  std::optional<std::string> value;
  bool changed = false;
};
}  // namespace fold_state_internal

class FoldState {
 public:
  explicit FoldState(ProjectionStore& store);
  // A state written through a SummingStore (a rebuild): flush() hashes each changed run view
  // on the thread that serialized it and writes it with put_summed().
  explicit FoldState(SummingStore& store);

  // r/<run>: nullptr when the run is not observed.
  Result<RunView*> find_run(const Digest& run);
  // Adds a new run view (none may exist) and returns it; it is written on flush().
  RunView& add_run(RunView view);
  // The view (from find_run or add_run) has changed: write it on flush().
  void run_changed(const RunView& view);

  // The facts of the manifest `digest`, or nullptr when it is not registered. A registration
  // never changes (the first wins). One this state has not met is looked up once, with the
  // lookup set for the event being applied: it is in the log, not read back from m/.
  Result<const ManifestFacts*> find_manifest(const Digest& digest);
  // Where find_manifest() looks up registrations made before the event at `before` (the event
  // being applied). A state that did not start empty needs one (kUsage otherwise).
  void set_manifest_lookup(const ManifestLookup* lookup, uint64_t before) {
    lookup_ = lookup;
    lookup_before_ = before;
  }
  // Registers the manifest `digest`, with the facts of its summary (nothing is written: the
  // registry is the log).
  void put_manifest(const Digest& digest, const ManifestFacts& facts);

  // G/<key>: nullptr when the group has no record.
  Result<GroupRecord*> find_group(const Digest& key);
  void put_group(const GroupRecord& group);
  void erase_group(const Digest& key);

  // #/next: nullopt when nothing was applied yet.
  Result<std::optional<uint64_t>> next();
  void set_next(uint64_t next);

  // Every other key, as text. scan() visits keys that start with `prefix` in byte order.
  void put(std::string_view key, std::string_view value);
  void erase(std::string_view key);
  Status scan(std::string_view prefix, const ProjectionVisitor& visit);
  // A record of a family the fold writes once and never reads (b/, L/, s/, v/: a run's
  // benchmark entry, a leadership change, an event's void or skipped record): listed until
  // flush() writes it, without the ordered map that put() keeps (a rebuild writes one b/ entry
  // per run). Of two with the same key, the later is written last.
  void put_once(std::string key, std::string value);

  // Writes every changed record to the store, in key order. With a pool, many changed run views
  // are serialized on its workers while this thread writes the records before them (the
  // records written are the same).
  [[nodiscard]] Status flush(ThreadPool* pool = nullptr);
  // Drops the records (flush() first): later lookups read the store again, except for what the
  // state keeps (see above; 75 to 150 bytes per manifest, 56-byte slots in a table 3/8 to 3/4
  // full, more for those with facts).
  void forget();

 private:
  template <typename T>
  using Slot = fold_state_internal::Slot<T>;
  using TextSlot = fold_state_internal::TextSlot;
  using TextMap = std::map<std::string, TextSlot, std::less<>>;
  // A digest's first bytes are a good hash. How these maps iterate never reaches the store:
  // flush() sorts the records it writes.
  struct DigestHash {
    size_t operator()(const Digest& d) const;
  };
  template <typename T>
  using DigestMap = std::unordered_map<Digest, Slot<T>, DigestHash>;
  struct KnownManifest {
    bool registered = false;
    std::unique_ptr<const ManifestFacts> facts;  // null when it has none (most manifests)
  };
  static KnownManifest known(const ManifestFacts& facts);

  // The record under key_of(digest), read from the store at most once.
  template <typename T, typename Decode>
  Result<T*> find(DigestMap<T>& map, const Digest& digest,
                  std::string (*key_of)(const Digest&), const Decode& decode);
  template <typename T, typename Encode>
  Status flush_changed(DigestMap<T>& map, const Encode& encode);
  // Writes the changed records whose keys sort before r/, from `text` on in text_ and `once`
  // on in once_ (sorted).
  Status flush_before_runs(TextMap::iterator& text, size_t& once);
  void mark_run_changed(typename DigestMap<RunView>::value_type& entry);
  // The slot of `key` in text_, added (absent, unchanged) when it has none.
  TextMap::iterator text_slot(std::string_view key);
  // Writes the changed records of text_ from `at`, and the listed once_ records from `once`,
  // whose keys sort before `bound` (all of them when it is empty), in key order.
  Status flush_text_below(TextMap::iterator& at, size_t& once, std::string_view bound);

  ProjectionStore& store_;
  SummingStore* summing_ = nullptr;  // store_, when it is one
  bool complete_;  // every key of the store is known here (until forget())
  // The store was empty at construction, so what forget() keeps is all the store holds of it:
  // every manifest is in facts_, every run view in run_keys_, every group record in groups_,
  // every waiting and orphan record in text_.
  bool started_empty_ = false;
  DigestTable<bool> run_keys_;  // runs with views, while started_empty_
  DigestMap<RunView> runs_;
  std::vector<DigestMap<RunView>::value_type*> changed_runs_;  // in runs_, until flush()
  DigestTable<KnownManifest> facts_;
  const ManifestLookup* lookup_ = nullptr;  // set_manifest_lookup()
  uint64_t lookup_before_ = 0;
  DigestMap<GroupRecord> groups_;
  std::optional<Slot<uint64_t>> next_;
  TextMap text_;
  std::vector<std::pair<std::string, std::string>> once_;  // put_once(), until flush()
};

}  // namespace evl
