// projections/internal/views.h — reading run views with their group-derived members, shared by
// query.cpp (one run) and query_pages.cpp (listings).
//
// Thread safety: a RankingCache belongs to one reader, over one snapshot of the store.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "events/json.h"
#include "events/sha256.h"
#include "projections/internal/groups.h"
#include "projections/manifests.h"
#include "projections/run_view.h"
#include "projections/store.h"

namespace evl {

// A group's ranking, read once.
struct Ranking {
  std::optional<GroupRecord> record;
  std::map<Digest, RankedMember> ranked;
  std::vector<RankedMember> order;
};

// The rankings of the groups a listing meets, each read with one scan of its group; the store
// must outlive it.
class RankingCache {
 public:
  explicit RankingCache(const ProjectionStore& store) : store_(store) {}
  Result<const Ranking*> get(const Digest& key);

 private:
  const ProjectionStore& store_;
  std::map<Digest, Ranking> cache_;
};

// The stored view of `run` plus rank, tied, groupSize and leader, or nullopt when no
// observation of it is projected. `cache` null: a single view, which scans its group only up to
// itself. `manifests` null leaves the four manifest summaries out (a listing); else they are
// read there. `exclusions` (optional) gets why the run has no rank.
Result<std::optional<Json>> full_view(const ProjectionStore& store, const Digest& run,
                                      RankingCache* cache, const ManifestLookup* manifests,
                                      std::vector<RankExclusion>* exclusions = nullptr);

}  // namespace evl
