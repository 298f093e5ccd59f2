#include "projections/query.h"

#include <map>

#include "events/bytes.h"
#include "events/kernelindex.h"
#include "projections/internal/groups.h"
#include "projections/internal/registry.h"
#include "projections/internal/store_keys.h"
#include "projections/run_view.h"

namespace evl {
namespace {

// A group's ranking, read once per call.
struct Ranking {
  std::optional<GroupRecord> record;
  std::map<Digest, RankedMember> ranked;
  std::vector<RankedMember> order;
};

class RankingCache {
 public:
  explicit RankingCache(const ProjectionStore& store) : store_(store) {}

  Result<const Ranking*> get(const Digest& key) {
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    Ranking r;
    auto record = find_group(store_, key);
    if (!record) return record.error();
    r.record = std::move(record).value();
    auto members = ranked_members(store_, key);
    if (!members) return members.error();
    r.order = std::move(members).value();
    for (const auto& m : r.order) r.ranked.emplace(m.run, m);
    return &cache_.emplace(key, std::move(r)).first->second;
  }

 private:
  const ProjectionStore& store_;
  std::map<Digest, Ranking> cache_;
};

// Adds rank, tied, groupSize and leader; `cache` is null for a single view, which then scans
// its group only up to itself.
Status add_group_members(const ProjectionStore& store, const RunView& view, Json& out,
                         RankingCache* cache) {
  out.set("rank", Json());
  out.set("tied", false);
  out.set("groupSize", Json());
  out.set("leader", Json());
  auto membership = run_membership(view);
  if (!membership) return Status::ok();
  std::optional<GroupRecord> record;
  std::optional<RankedMember> ranked;
  if (cache != nullptr) {
    auto ranking = cache->get(membership->group);
    if (!ranking) return ranking.error();
    record = (*ranking)->record;
    auto it = (*ranking)->ranked.find(view.run);
    if (it != (*ranking)->ranked.end()) ranked = it->second;
  } else {
    auto found = find_group(store, membership->group);
    if (!found) return found.error();
    record = std::move(found).value();
    if (membership->ranked) {
      auto rank = rank_in_group(store, *membership);
      if (!rank) return rank.error();
      ranked = *rank;
    }
  }
  if (record) {
    out.set("groupSize", record->size);
    out.set("leader", record->leader ? Json(digest_text(*record->leader)) : Json());
  }
  if (ranked) {
    out.set("rank", ranked->rank);
    out.set("tied", ranked->tied);
  }
  return Status::ok();
}

// The summary of each referenced manifest that an event the state covers registered, else null.
Status add_manifest_summaries(const ProjectionStore& store, const ManifestLookup& manifests,
                              const RunView& view, Json& out) {
  auto covered = projected_size(store);
  if (!covered) return covered.error();
  const std::pair<const char*, const std::string*> refs[] = {
      {"protocol", &view.protocol_digest},
      {"environment", &view.environment_digest},
      {"workload", &view.workload_digest},
      {"implementation", &view.implementation_digest}};
  for (const auto& [member, digest_text_value] : refs) {
    out.set(member, Json());
    auto digest = parse_digest_text(*digest_text_value);
    if (!digest) continue;
    auto registration = manifests.registered(*digest, *covered);
    if (!registration) return registration.error();
    if (!registration->has_value()) continue;
    auto summary = parse_json((*registration)->summary_text);
    if (!summary) return summary.error().with_context("the summary of " + *digest_text_value);
    out.set(member, std::move(*summary));
  }
  return Status::ok();
}

Json run_summary(const Json& full) {
  static constexpr const char* kMembers[] = {"run",        "title",     "benchmark",     "source",
                                             "externalId", "status",    "observedAt",    "primary",
                                             "evidence",   "flags",     "comparisonKey", "rank",
                                             "tied",       "groupSize", "leader",        "void"};
  Json out = Json::object();
  for (const char* m : kMembers) {
    const Json* v = full.find(m);
    out.set(m, v != nullptr ? *v : Json());
  }
  return out;
}

// `manifests`: where the manifest summaries come from; none for a list (they are left out).
Result<std::optional<Json>> full_view(const ProjectionStore& store, const Digest& run,
                                      RankingCache* cache, const ManifestLookup* manifests,
                                      std::vector<RankExclusion>* exclusions = nullptr) {
  auto text = store.get(store_keys::run(run));
  if (!text) return text.error();
  if (!text->has_value()) return std::optional<Json>();
  auto view = parse_run_view(**text);
  if (!view) return view.error().with_context(digest_text(run));
  if (exclusions != nullptr) *exclusions = rank_exclusions(*view);
  Json out = run_view_json(*view);
  EVL_RETURN_IF_ERROR(add_group_members(store, *view, out, cache));
  if (manifests != nullptr) {
    EVL_RETURN_IF_ERROR(add_manifest_summaries(store, *manifests, *view, out));
  }
  return std::optional<Json>(std::move(out));
}

// Runs named by the 64-hex suffix of each key under a prefix.
Result<std::vector<Digest>> runs_under(const ProjectionStore& store, std::string_view prefix) {
  std::vector<Digest> runs;
  Status s = store.scan(prefix, [&](std::string_view key, std::string_view) {
    Digest d;
    if (store_keys::digest_suffix(key, d)) runs.push_back(d);
    return true;
  });
  if (!s) return s;
  return runs;
}

Result<std::vector<Json>> json_values(const ProjectionStore& store, std::string_view prefix) {
  std::vector<Json> out;
  bool damaged = false;
  Status s = store.scan(prefix, [&](std::string_view, std::string_view value) {
    auto j = parse_json(value);
    if (!j) {
      damaged = true;
      return false;
    }
    out.push_back(std::move(j).value());
    return true;
  });
  if (!s) return s;
  if (damaged) return corrupt("a stored record under " + std::string(prefix) + " is damaged");
  return out;
}

// The digests of the keys `family`<64 hex> that start with family + hex_prefix, in order, at
// most `limit`: one range scan. `what` names the records in the error for a damaged key.
Result<std::vector<Digest>> find_by_prefix(const ProjectionStore& store, std::string_view family,
                                           std::string_view hex_prefix, size_t limit,
                                           const char* what) {
  std::vector<Digest> found;
  bool damaged = false;
  if (limit == 0) return found;
  Status s = store.scan(std::string(family) + std::string(hex_prefix),
                        [&](std::string_view key, std::string_view) {
                          Digest d;
                          if (key.size() != family.size() + 64 ||
                              !store_keys::digest_suffix(key, d)) {
                            damaged = true;
                            return false;
                          }
                          found.push_back(d);
                          return found.size() < limit;
                        });
  if (!s) return s;
  if (damaged) {
    return corrupt(std::string("a ") + what + "'s key is damaged; rebuild the projections");
  }
  return found;
}

}  // namespace

Result<std::vector<Digest>> find_runs_by_prefix(const ProjectionStore& store,
                                                std::string_view hex_prefix, size_t limit) {
  return find_by_prefix(store, store_keys::kRuns, hex_prefix, limit, "run view");
}

Result<std::vector<Digest>> find_groups_by_prefix(const ProjectionStore& store,
                                                  std::string_view hex_prefix, size_t limit) {
  return find_by_prefix(store, store_keys::kGroups, hex_prefix, limit, "group record");
}

Result<std::optional<Json>> read_run_view(const ProjectionStore& store,
                                          const ManifestLookup& manifests, const Digest& run,
                                          std::vector<RankExclusion>* exclusions) {
  return full_view(store, run, nullptr, &manifests, exclusions);
}

Result<std::vector<Json>> list_runs(const ProjectionStore& store, const RunFilter& filter) {
  std::vector<Digest> runs;
  if (filter.group) {
    auto ranked = ranked_members(store, *filter.group);
    if (!ranked) return ranked.error();
    for (const auto& m : *ranked) runs.push_back(m.run);
    auto others = unranked_members(store, *filter.group);
    if (!others) return others.error();
    runs.insert(runs.end(), others->begin(), others->end());
  } else {
    auto found =
        runs_under(store, filter.benchmark ? store_keys::benchmark_prefix(*filter.benchmark)
                                           : std::string(store_keys::kRuns));
    if (!found) return found.error();
    runs = std::move(found).value();
  }
  RankingCache cache(store);
  std::vector<Json> out;
  for (const Digest& run : runs) {
    auto view = full_view(store, run, &cache, nullptr);
    if (!view) return view.error();
    if (view->has_value()) out.push_back(run_summary(**view));
  }
  return out;
}

Result<std::vector<Json>> list_groups(const ProjectionStore& store) {
  auto groups = json_values(store, store_keys::kGroups);
  if (!groups) return groups;
  for (Json& g : *groups) {
    auto key = parse_digest_text(json_string(g, "group").value_or(""));
    if (!key) return corrupt("a stored group record is damaged; rebuild the projections");
    auto preimage = store.get(store_keys::group_preimage(*key));
    if (!preimage) return preimage.error();
    auto parsed = preimage->has_value() ? parse_json(**preimage) : Result<Json>(Json());
    if (!parsed)
      return corrupt("the stored preimage of group " + digest_text(*key) + " is damaged");
    g.set("preimage", std::move(parsed).value());
  }
  return groups;
}

Result<std::vector<Json>> leadership_history(const ProjectionStore& store,
                                             const std::optional<Digest>& group) {
  auto all = json_values(store, store_keys::kLeadership);
  if (!all || !group) return all;
  std::vector<Json> out;
  const std::string wanted = digest_text(*group);
  for (Json& record : *all) {
    const Json* g = record.find("group");
    if (g != nullptr && g->is_string() && g->as_string() == wanted)
      out.push_back(std::move(record));
  }
  return out;
}

Result<std::vector<Json>> list_void_events(const ProjectionStore& store) {
  return json_values(store, store_keys::kVoid);
}

Result<std::vector<Json>> list_skipped_events(const ProjectionStore& store) {
  return json_values(store, store_keys::kSkipped);
}

Result<uint64_t> projected_size(const ProjectionStore& store) {
  auto next = store.get(store_keys::kNext);
  if (!next) return next.error();
  if (!next->has_value()) return uint64_t{0};
  auto n = parse_u64(**next);
  if (!n) return corrupt("stored next index is damaged; rebuild the projections");
  return *n;
}

}  // namespace evl
