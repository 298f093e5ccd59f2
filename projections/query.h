// projections/query.h — reading the projections: run views, run lists, groups, leadership.
//
// Everything here is a pure function of the store's contents (one snapshot), for the CLI and the
// server to render. JSON member names are DESIGN.md's; projections/FORMAT.md lists them all.
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

#include <cstdint>
#include <optional>
#include <string>
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

struct RunFilter {
  std::optional<std::string> benchmark;  // spec.sourceNative.benchmark
  std::optional<Digest> group;           // comparison key
};

// One summary per run: run, title, benchmark, source, externalId, status, observedAt, primary,
// evidence, flags, comparisonKey, rank, tied, groupSize, leader, void. All runs and runs of a
// benchmark come in run digest order; a group's come in display order (ranked members first,
// then the others by run digest).
Result<std::vector<Json>> list_runs(const ProjectionStore& store, const RunFilter& filter = {});

// One object per comparison group, by key: group, size, members, leader, leaderValue, preimage.
Result<std::vector<Json>> list_groups(const ProjectionStore& store);

// Leadership history in log order (then by group): group, run, previous, cause, index.
Result<std::vector<Json>> leadership_history(const ProjectionStore& store,
                                             const std::optional<Digest>& group = std::nullopt);

// Void events ({index, event, kind, author, target, cause}) and skipped events ({..., reason}),
// in log order.
Result<std::vector<Json>> list_void_events(const ProjectionStore& store);
Result<std::vector<Json>> list_skipped_events(const ProjectionStore& store);

// The number of log entries the projections cover (the next index to apply); 0 when empty.
Result<uint64_t> projected_size(const ProjectionStore& store);

}  // namespace evl
