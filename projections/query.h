// projections/query.h — reading the projections: run views, run lists, groups, leadership.
//
// Everything here is a pure function of the store's contents (one snapshot), for the CLI and the
// server to render: the same function for the same answer, so that `evledger runs --json` and
// GET /api/v1/runs list the same views in the same order. JSON member names are DESIGN.md's; projections/FORMAT.md lists them all.
// A run view read here is the stored view (projections/run_view.h) plus the group-derived
// members, computed from one scan of the run's group:
//   rank       dense rank among the ranked (eligible) members of its comparison group, or null;
//   tied       whether another ranked member has the same value;
//   groupSize  the number of ranked members of its group, or null without a group;
//   leader     the group's leader (sticky: see projections/internal/groups.h), or null.
//
// Errors: kCorrupt when a stored value cannot be read; the store's own errors unchanged.
//
// Thread safety: pure functions over a store the caller reads in one snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/json.h"
#include "events/sha256.h"
#include "projections/manifests.h"
#include "projections/run_view.h"
#include "projections/store.h"

namespace evl {

// The full run view, or nullopt when no observation of `run` is projected. Its protocol,
// environment, workload and implementation members are the summaries of the manifests it
// references, when an event the projections cover registered them (found with `manifests`: the
// log), else null. With `exclusions`, also why the run has no rank (empty when it has one).
Result<std::optional<Json>> read_run_view(const ProjectionStore& store,
                                          const ManifestLookup& manifests, const Digest& run,
                                          std::vector<RankExclusion>* exclusions = nullptr);

// The observed runs whose digest's hex starts with `hex_prefix` (lowercase hex digits, from
// none to 64), in digest order, at most `limit` of them: one range scan of the views' keys.
Result<std::vector<Digest>> find_runs_by_prefix(const ProjectionStore& store,
                                                std::string_view hex_prefix, size_t limit);
// The same for comparison groups (their keys), from the group records.
Result<std::vector<Digest>> find_groups_by_prefix(const ProjectionStore& store,
                                                  std::string_view hex_prefix, size_t limit);

// Naming a run or a group by its digest or a start of it, as the listings print them
// ("sha256:0012c2de8659…"; the "sha256:" and the ellipsis may be left out): at least
// kMinDigestPrefix lowercase hex digits. The CLI and the API take the same names and give the
// same messages; `what` names the argument ("RUN", "--group", "group=").
inline constexpr size_t kMinDigestPrefix = 6;
// What ends a shortened digest in the text listings (U+2026), which the parsers drop.
inline constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
// The hex digits of the name; kUsage naming `what` when it is no digest nor a start of one.
Result<std::string> parse_run_prefix(std::string_view text, const std::string& what);
Result<std::string> parse_group_prefix(std::string_view text, const std::string& what);
// The one observed run (group) whose digest (key) starts with `hex_prefix`: kNotFound when
// none does, kUsage listing some when several do.
Result<Digest> resolve_run(const ProjectionStore& store, const std::string& hex_prefix,
                           const std::string& what);
Result<Digest> resolve_group(const ProjectionStore& store, const std::string& hex_prefix,
                             const std::string& what);

// resolve_run() then read_run_view(): the view of the one run that `hex_prefix` names (what
// `evledger show` and GET /api/v1/runs/{run} answer); resolve_run's errors.
Result<Json> read_named_run_view(const ProjectionStore& store, const ManifestLookup& manifests,
                                 const std::string& hex_prefix, const std::string& what,
                                 std::vector<RankExclusion>* exclusions = nullptr);

// A page of a listing: at most `limit` items, from the item at `cursor` on (empty: the first).
// A cursor is an item's position in the listing's order (its key in the state, opaque to
// clients), as a page's `next` gives it: it stays valid as the log grows, and a page shows the
// items at and after that position in the state it reads. kUsage, naming `what`, for a cursor
// that is no position of that listing.
struct PageRequest {
  std::string cursor;
  size_t limit = SIZE_MAX;
  std::string what = "cursor";
};
struct Page {
  std::vector<Json> items;
  std::optional<std::string> next;  // the cursor of the next page; nullopt after the last
  // The cursor of the page before ("" for the first page), where a listing gives it; nullopt
  // on the first page.
  std::optional<std::string> previous;
};

struct RunFilter {
  std::optional<std::string> benchmark;  // spec.sourceNative.benchmark
  std::optional<Digest> group;           // comparison key
};

// Run views, as read_run_view gives them without the four manifest summaries (those read the
// log; one run's view has them): every member DESIGN.md names. All runs and a benchmark's
// come in run digest order; a group's in display order (ranked members first, then the
// others by run digest), only those of the benchmark when both are given.
Result<Page> list_runs(const ProjectionStore& store, const RunFilter& filter,
                       const PageRequest& page);
Result<std::vector<Json>> list_runs(const ProjectionStore& store, const RunFilter& filter = {});

// The rows of a group's page: its runs in list_runs' order, each with only the members a
// listing of many runs shows (kGroupRowMembers, read from the stored view without decoding the
// rest of it) and rank, tied, groupSize and leader as list_runs gives them.
inline constexpr std::array<std::string_view, 6> kGroupRowMembers = {
    "run", "title", "benchmark", "observedAt", "primary", "evidence"};
Result<std::vector<Json>> list_group_rows(const ProjectionStore& store, const Digest& group);

// Comparison groups by key: group, size, members, leader, leaderValue, preimage.
Result<Page> list_groups(const ProjectionStore& store, const PageRequest& page);
Result<std::vector<Json>> list_groups(const ProjectionStore& store);
// One group as list_groups shows it, or nullopt when there is none of that key.
Result<std::optional<Json>> read_group(const ProjectionStore& store, const Digest& key);

// Leadership history in log order (then by group): group, run, previous, cause, index.
Result<Page> leadership_history(const ProjectionStore& store, const std::optional<Digest>& group,
                                const PageRequest& page);
Result<std::vector<Json>> leadership_history(const ProjectionStore& store,
                                             const std::optional<Digest>& group = std::nullopt);
// The same history newest first, with leadership_history's cursors: the `limit` changes at
// and before the cursor's position (from the newest when it is empty); `next` is the position
// of the change before them, `previous` that of the page of the newer ones. One scan of the
// history up to the page and `limit` changes past it.
Result<Page> leadership_history_newest_first(const ProjectionStore& store,
                                             const std::optional<Digest>& group,
                                             const PageRequest& page);

// The benchmarks that runs name (spec.sourceNative.benchmark), each {benchmark, runs}: the
// number of observed runs that name it. In the order of their index (projections/FORMAT.md,
// b/), which is byte order of the names but for names with bytes below '0'.
Result<Page> list_benchmarks(const ProjectionStore& store, const PageRequest& page);

// Void events ({index, event, kind, author, target, cause}) and skipped events ({..., reason}),
// in log order.
Result<std::vector<Json>> list_void_events(const ProjectionStore& store);
Result<std::vector<Json>> list_skipped_events(const ProjectionStore& store);

// The number of log entries the projections cover (the next index to apply); 0 when empty.
Result<uint64_t> projected_size(const ProjectionStore& store);

}  // namespace evl
