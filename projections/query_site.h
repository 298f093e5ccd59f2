// projections/query_site.h — what the site's pages (tools/server/page_*.cpp) read of the
// projections besides the listings of projections/query.h: counts, the newest leadership
// changes, the runs an event changed, a benchmark's groups, and search. Like query.h, pure
// functions of one snapshot of the store, shared by every front end that shows them.
//
// Errors: kCorrupt when a stored value cannot be read; the store's own errors unchanged.
//
// Thread safety: pure functions over a store the caller reads in one snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "events/json.h"
#include "events/sha256.h"
#include "projections/query.h"
#include "projections/store.h"

namespace evl {

// How much the projections hold: observed runs, comparison groups, benchmarks, leadership
// changes, void and skipped events; one key scan of each index.
struct ProjectionCounts {
  uint64_t runs = 0, groups = 0, benchmarks = 0, leadership_changes = 0, void_events = 0,
           skipped_events = 0;
};
Result<ProjectionCounts> count_projections(const ProjectionStore& store);

// The newest `limit` leadership changes, newest first, as leadership_history() shows them.
Result<std::vector<Json>> latest_leadership_changes(const ProjectionStore& store, size_t limit);

// The current records: the leader of every comparison group that has one, as list_runs()
// shows its view, in the order of the groups' keys, a page at a time. A cursor is a group's
// key (64 hex digits, as GET /api/v1/groups pages them): the page holds the leaders of the
// groups from that key on, at most page.limit, and `next` is the key of the next group that
// has a leader. kUsage, naming page.what, for another cursor.
Result<Page> current_records(const ProjectionStore& store, const PageRequest& page);

// The runs that the event at `index` (whose body is `body`) changed: the observed runs whose
// view lists it among the events behind it (its observation, a rerun, attestation or
// correction naming the run, the replacement of a supersede, a manifest it was waiting for),
// in digest order. A manifest's runs are found by a scan of the views that name its digest.
Result<std::vector<Digest>> runs_touched_by(const ProjectionStore& store, uint64_t index,
                                            const EventBody& body);

// The comparison groups of a benchmark's runs, each as read_group() shows it plus "gpu" (the
// hardware of its first run's environment, or null), in the order of their keys; with the
// benchmark's runs (list_runs) and the number of those without a group.
struct BenchmarkGroups {
  std::vector<Json> groups;
  std::vector<Json> runs;
  uint64_t ungrouped = 0;
};
Result<BenchmarkGroups> benchmark_groups(const ProjectionStore& store, std::string_view benchmark);

// Runs matching a search: `query` (trimmed, kMinSearchQuery to kMaxSearchQuery bytes) found,
// without regard to ASCII case, in a view's benchmark, name, title, source, external id or GPU
// product, or a start of at least kMinDigestPrefix hex digits of its run digest or comparison
// key ("sha256:" and the ellipsis may be left in). Listing views (list_runs), in run digest
// order. kUsage for a query too short
// or too long. A page of them: from the run at page.cursor on (a run digest's 64 hex digits, as
// `next` gives it; kUsage for another), at most page.limit, `next` the first match after them.
inline constexpr size_t kMinSearchQuery = 2;
inline constexpr size_t kMaxSearchQuery = 200;
Result<Page> search_runs(const ProjectionStore& store, std::string_view query,
                         const PageRequest& page);

}  // namespace evl
