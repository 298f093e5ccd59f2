// projections/projector.h — the fold that keeps the projections: one event at a time.
//
// Projector::apply is a pure, deterministic function of (store contents, event): no clock, no
// randomness, no unordered iteration, no order-dependent floating point. The ledger calls it
// for every appended entry, in log order, inside the append transaction; `evledger rebuild`
// calls it for every entry from index 0 on an empty store. Both MUST leave the same bytes.
//
// What it maintains (layout in projections/FORMAT.md):
//   - which manifests are registered: the first registration of a digest wins (manifest or
//     observation events), and later events carrying it change nothing. The fold keeps no
//     record of them: the log holds them (ProjectedEvent::manifests finds those of events
//     before the state it continues);
//   - one run view per observation (projections/run_view.h), resolving referenced manifests
//     when they arrive, whichever comes first;
//   - reruns with verdicts, attestations and corrections on their target's view (kept aside
//     until the target run is observed, if it is not yet);
//   - evidence levels and flags (projections/evidence.h);
//   - comparison groups, ranking order and leaders, and the leadership history.
//
// Void events (void_cause set: key policy voids them) never count: no registration, no
// verdict, no rank, no flag. They are recorded with their cause and listed on the view they
// name. A void observation still gets a view, marked void and unranked; a later observation of
// the same manifest that stands takes it over. When a compromise voids earlier events the
// ledger rebuilds the projections from scratch, so apply never undoes anything.
//
// Errors: kUsage when events arrive out of order (index below the next expected one) or without
// a body; kCorrupt when a stored value cannot be read; the store's own errors unchanged.
// Content the fold cannot use (an unparseable manifest, an observation that is not a
// BenchmarkRun) is not an error: the event is recorded as skipped, with why.
//
// Thread safety: a Projector holds no state; the store must not be used concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/event.h"
#include "projections/store.h"

namespace evl {

struct PreparedManifest;  // projections/internal/prepared.h
class ManifestLookup;     // projections/manifests.h

struct ProjectedEvent {
  uint64_t index = 0;
  Digest id{};
  const EventBody* body = nullptr;  // not owned; valid during apply()
  std::string author_name;
  std::vector<Role> author_roles;
  std::vector<std::string> author_scope;  // a runner's holds owner:<id> and host:<id>
  std::optional<std::string> void_cause;  // set when key policy voids this event
  uint32_t rerun_tolerance_milli = 50;    // δ × 1000, from the genesis
  // Where the fold finds what earlier events registered for a manifest it has not met in the
  // state it holds (every fold that continues a stored state needs one; a fold from an empty
  // store meets every registration itself). Not owned; valid during apply().
  const ManifestLookup* manifests = nullptr;
  // A manifest or observation event's prepare_manifest() result, made ahead on another thread
  // (a rebuild's decoding thread, the ledger's checking threads), or null: apply then prepares
  // it when needed. Not owned; apply takes its summary and view (and marks it taken).
  PreparedManifest* prepared = nullptr;
};

class FoldState;
class SummingStore;  // projections/digested_store.h
class ThreadPool;

class Projector {
 public:
  // Applies one event and writes what it changed to the store.
  [[nodiscard]] Status apply(ProjectionStore& store, const ProjectedEvent& event) const;
};

// Applies many events to one store, keeping each record they touch decoded in memory between
// them, and writes the changed records in key order on flush(). After flush() the store holds
// exactly what Projector::apply would have left after the same events, whatever the number
// of events between flushes. Until then the store may lag behind: nothing else may use it
// while the batch lives. After an error, drop the batch without flushing (the caller's
// transaction aborts). Memory grows with the records touched since the batch began or since
// flush_and_forget(), which writes them and then drops them.
// Thread safety: one thread.
class ProjectionBatch {
 public:
  // `pool` (optional, not owned) serializes many changed run views in parallel on flush.
  explicit ProjectionBatch(ProjectionStore& store, ThreadPool* pool = nullptr);
  // A batch written through a SummingStore (a rebuild) hashes the run views it writes itself,
  // on the threads that serialize them (SummingStore::put_summed).
  explicit ProjectionBatch(SummingStore& store, ThreadPool* pool = nullptr);
  ~ProjectionBatch();
  ProjectionBatch(const ProjectionBatch&) = delete;
  ProjectionBatch& operator=(const ProjectionBatch&) = delete;

  [[nodiscard]] Status apply(const ProjectedEvent& event);
  [[nodiscard]] Status flush();
  [[nodiscard]] Status flush_and_forget();

 private:
  std::unique_ptr<FoldState> state_;
  ThreadPool* pool_;
};

}  // namespace evl
