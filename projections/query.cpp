#include "projections/query.h"

#include <algorithm>
#include <map>

#include "events/bytes.h"
#include "events/kernelindex.h"
#include "projections/internal/groups.h"
#include "projections/internal/registry.h"
#include "projections/internal/store_keys.h"
#include "projections/internal/views.h"
#include "projections/run_view.h"

namespace evl {
namespace {

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

// What a name may be a digest's start of: runs (their digests) and comparison groups (keys).
struct PrefixKind {
  const char* digest;   // "run digest"
  const char* noun;     // "run"
  const char* record;   // "observed run"
  const char* listing;  // where the digests are printed
  Result<std::vector<Digest>> (*find)(const ProjectionStore&, std::string_view, size_t);
};
constexpr PrefixKind kRunPrefix{"run digest", "run", "observed run",
                                "'evledger runs' prints them", find_runs_by_prefix};
constexpr PrefixKind kGroupPrefix{"comparison key", "comparison group", "comparison group",
                                  "'evledger groups' and 'evledger show' print them",
                                  find_groups_by_prefix};

Result<std::string> parse_prefix(std::string_view text, const std::string& what,
                                 const PrefixKind& kind) {
  std::string_view hex = text;
  if (hex.size() >= kEllipsis.size() && hex.substr(hex.size() - kEllipsis.size()) == kEllipsis) {
    hex.remove_suffix(kEllipsis.size());
  }
  if (hex.substr(0, 7) == "sha256:") hex.remove_prefix(7);
  const bool digits = hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!digits || hex.size() < kMinDigestPrefix || hex.size() > 64) {
    return usage_error(what + ": '" + std::string(text) + "' is not a " + kind.digest +
                       ": give sha256:<64 hex> or its first " + std::to_string(kMinDigestPrefix) +
                       " or more lowercase hex digits, as " + kind.listing);
  }
  return std::string(hex);
}

Result<Digest> resolve(const ProjectionStore& store, const std::string& hex_prefix,
                       const std::string& what, const PrefixKind& kind) {
  constexpr size_t kListed = 5;
  auto found = kind.find(store, hex_prefix, kListed + 1);
  if (!found) return found.error();
  const std::string named =
      "sha256:" + hex_prefix + std::string(hex_prefix.size() < 64 ? kEllipsis : "");
  if (found->empty()) {
    return not_found(std::string("no ") + kind.record + " in this ledger is " + named + " (" +
                     kind.listing + ")");
  }
  if (found->size() == 1) return found->front();
  std::string some;
  for (size_t i = 0; i < std::min(kListed, found->size()); ++i) {
    some += "\n  " + digest_text((*found)[i]);
  }
  if (found->size() > kListed) some += "\n  ...";
  return usage_error(what + " " + named + " names more than one " + kind.noun +
                     "; give more of its digits:" + some);
}

}  // namespace

Result<const Ranking*> RankingCache::get(const Digest& key) {
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

Result<std::optional<Json>> full_view(const ProjectionStore& store, const Digest& run,
                                      RankingCache* cache, const ManifestLookup* manifests,
                                      std::vector<RankExclusion>* exclusions) {
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

Result<std::vector<Digest>> find_runs_by_prefix(const ProjectionStore& store,
                                                std::string_view hex_prefix, size_t limit) {
  return find_by_prefix(store, store_keys::kRuns, hex_prefix, limit, "run view");
}

Result<std::vector<Digest>> find_groups_by_prefix(const ProjectionStore& store,
                                                  std::string_view hex_prefix, size_t limit) {
  return find_by_prefix(store, store_keys::kGroups, hex_prefix, limit, "group record");
}

Result<std::string> parse_run_prefix(std::string_view text, const std::string& what) {
  return parse_prefix(text, what, kRunPrefix);
}

Result<std::string> parse_group_prefix(std::string_view text, const std::string& what) {
  return parse_prefix(text, what, kGroupPrefix);
}

Result<Digest> resolve_run(const ProjectionStore& store, const std::string& hex_prefix,
                           const std::string& what) {
  return resolve(store, hex_prefix, what, kRunPrefix);
}

Result<Digest> resolve_group(const ProjectionStore& store, const std::string& hex_prefix,
                             const std::string& what) {
  return resolve(store, hex_prefix, what, kGroupPrefix);
}

Result<std::optional<Json>> read_run_view(const ProjectionStore& store,
                                          const ManifestLookup& manifests, const Digest& run,
                                          std::vector<RankExclusion>* exclusions) {
  return full_view(store, run, nullptr, &manifests, exclusions);
}

Result<Json> read_named_run_view(const ProjectionStore& store, const ManifestLookup& manifests,
                                 const std::string& hex_prefix, const std::string& what,
                                 std::vector<RankExclusion>* exclusions) {
  auto run = resolve_run(store, hex_prefix, what);
  if (!run) return run.error();
  auto view = read_run_view(store, manifests, *run, exclusions);
  if (!view) return view.error();
  if (!*view) return not_found("no observation of run " + digest_text(*run) + " in this ledger");
  return std::move(**view);
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
