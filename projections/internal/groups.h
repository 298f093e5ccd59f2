// projections/internal/groups.h — comparison groups: membership, ranking order, leaders.
//
// A run with a comparison key is a member of that key's group unless it is void. It is ranked
// (KernelIndex ranking-v1) when it is eligible: status "passed", a primary value, and not
// retracted, superseded or disqualified. Ranked members are kept in an index whose key sorts
// them in display order: value ascending, then higher evidence, then newer observedAt, then run
// digest; dense ranks and ties follow from one scan of it. The group record keeps the leader,
// which changes only when a newly ranked run has a strictly lower value, or when the leader
// stops being ranked (the first ranked member then leads, or nobody).
//
// Thread safety: pure functions over a store (or the fold's state) the caller owns;
// LeaderChanges is a value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/kernelindex.h"
#include "projections/run_view.h"
#include "projections/store.h"

namespace evl {

class FoldState;

struct Membership {
  Digest group{};
  Digest run{};
  bool ranked = false;
  double value = 0;      // ranked only
  std::string sort_key;  // ranked only
};

// Why `view` has no rank, in RankExclusion's order; empty when it is ranked.
std::vector<RankExclusion> rank_exclusions(const RunView& view);
// No exclusion but the lack of a comparison group.
bool run_eligible(const RunView& view);
// nullopt for a void run or a run without a comparison key.
std::optional<Membership> run_membership(const RunView& view);

struct GroupRecord {
  Digest key{};
  std::optional<Digest> leader;
  std::optional<double> leader_value;
  uint64_t size = 0;     // ranked members
  uint64_t members = 0;  // all members
};
Result<std::optional<GroupRecord>> find_group(const ProjectionStore& store, const Digest& key);
// The stored form of a group record (G/<key>), and back; kCorrupt when the text is not one.
std::string group_record_text(const GroupRecord& group);
Result<GroupRecord> parse_group_record(const Digest& key, std::string_view text);

// The leader of each group as it was before the event being applied first changed it.
class LeaderChanges {
 public:
  void note(const Digest& group, const std::optional<Digest>& previous) {
    previous_.emplace(group, previous);
  }
  // One leadership record per group whose leader differs now from before.
  Status write(FoldState& state, uint64_t index, std::string_view cause) const;

 private:
  std::map<Digest, std::optional<Digest>> previous_;
};

// Moves a run's index entries and group counts from `before` to `after` (both describe the
// same run; `after` is run_membership(view)) and updates the leader. A group `after` creates
// gets its preimage record from the view's comparison inputs.
Status move_membership(FoldState& state, const std::optional<Membership>& before,
                       const std::optional<Membership>& after, const RunView& view,
                       LeaderChanges& changes);

struct RankedMember {
  Digest run{};
  double value = 0;
  uint64_t rank = 0;  // dense, from 1
  bool tied = false;
};
// Ranked members of a group in display order.
Result<std::vector<RankedMember>> ranked_members(const ProjectionStore& store, const Digest& key);
// The rank of one ranked member (`member.ranked`), scanning the group only up to just after it.
Result<std::optional<RankedMember>> rank_in_group(const ProjectionStore& store,
                                                  const Membership& member);
// Members that are not ranked, by run digest.
Result<std::vector<Digest>> unranked_members(const ProjectionStore& store, const Digest& key);

// Parts of the ranked index key (FORMAT.md).
std::string value_sort_key(double value);
double value_from_sort_key(std::string_view hex16);
std::string observed_at_sort_key(std::string_view observed_at);

}  // namespace evl
