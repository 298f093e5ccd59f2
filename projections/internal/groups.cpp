#include "projections/internal/groups.h"

#include <algorithm>
#include <bit>

#include "events/jcs.h"
#include "projections/evidence.h"
#include "projections/internal/fold_state.h"
#include "projections/internal/jcs_writer.h"
#include "projections/internal/store_keys.h"

namespace evl {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Appends `count` digits of text at `at` to out; false when they are not all digits.
bool take_digits(std::string_view text, size_t& at, size_t count, std::string& out) {
  if (at + count > text.size()) return false;
  for (size_t i = 0; i < count; ++i) {
    if (!is_digit(text[at + i])) return false;
  }
  out.append(text.substr(at, count));
  at += count;
  return true;
}

bool expect(std::string_view text, size_t& at, char c) {
  if (at >= text.size() || text[at] != c) return false;
  ++at;
  return true;
}

// "YYYY-MM-DDTHH:MM[:SS[.fraction]]Z" as 23 digits YYYYMMDDHHMMSS + 9 fraction digits.
std::optional<std::string> observed_at_digits(std::string_view t) {
  std::string out;
  size_t at = 0;
  if (!take_digits(t, at, 4, out) || !expect(t, at, '-') || !take_digits(t, at, 2, out) ||
      !expect(t, at, '-') || !take_digits(t, at, 2, out) || !expect(t, at, 'T') ||
      !take_digits(t, at, 2, out) || !expect(t, at, ':') || !take_digits(t, at, 2, out)) {
    return std::nullopt;
  }
  std::string seconds = "00", fraction;
  if (at < t.size() && t[at] == ':') {
    ++at;
    seconds.clear();
    if (!take_digits(t, at, 2, seconds)) return std::nullopt;
    if (at < t.size() && t[at] == '.') {
      ++at;
      while (at < t.size() && is_digit(t[at])) fraction.push_back(t[at++]);
      if (fraction.empty()) return std::nullopt;
    }
  }
  if (!expect(t, at, 'Z') || at != t.size()) return std::nullopt;
  fraction.resize(9, '0');  // truncates beyond nanoseconds
  return out + seconds + fraction;
}

std::string sort_key(const RunView& view) {
  std::string key = value_sort_key(view.primary->value);
  key.push_back(static_cast<char>('3' - static_cast<int>(view.evidence)));
  key += observed_at_sort_key(view.observed_at);
  key += store_keys::hex(view.run);
  return key;
}

Status index_entry(FoldState& state, const Membership& m, bool present) {
  std::string key =
      m.ranked ? store_keys::ranked(m.group, m.sort_key) : store_keys::unranked(m.group, m.run);
  if (present) {
    state.put(key, "");  // the key ends with the run's hex
  } else {
    state.erase(key);
  }
  return Status::ok();
}

Result<std::optional<RankedMember>> first_ranked(FoldState& state, const Digest& key) {
  std::optional<RankedMember> first;
  std::string prefix = store_keys::ranked_prefix(key);
  Status s = state.scan(prefix, [&](std::string_view k, std::string_view) {
    RankedMember m;
    if (k.size() >= prefix.size() + 16 && store_keys::digest_suffix(k, m.run)) {
      m.value = value_from_sort_key(k.substr(prefix.size(), 16));
      m.rank = 1;
      first = m;
    }
    return false;
  });
  if (!s) return s;
  return first;
}

// Applies one run's move within one group: `removed` and `added` are its old and new entries
// there (either may be absent; `added` is `view`'s). The index entries are already updated.
Status update_group(FoldState& state, const Digest& key, const Membership* removed,
                    const Membership* added, const RunView& view, LeaderChanges& changes) {
  auto found = state.find_group(key);
  if (!found) return found.error();
  GroupRecord g;
  if (*found != nullptr) {
    g = **found;
  } else if (added == nullptr) {
    return corrupt("group " + digest_text(key) +
                   " has a member but no record; rebuild the projections");
  } else {
    g.key = key;
    auto inputs = view_comparison_inputs(view);
    EVL_ASSERT(inputs.has_value());  // run_membership(view) gave `added`
    state.put(store_keys::group_preimage(key), comparison_preimage_text(*inputs));
  }
  const bool was_ranked = removed != nullptr && removed->ranked;
  const bool is_ranked = added != nullptr && added->ranked;
  if ((removed != nullptr && added == nullptr && g.members == 0) ||
      (was_ranked && !is_ranked && g.size == 0)) {
    return corrupt("group " + digest_text(key) +
                   " counts fewer members than it holds; "
                   "rebuild the projections");
  }
  if (removed != nullptr && added == nullptr) --g.members;
  if (added != nullptr && removed == nullptr) ++g.members;
  if (was_ranked && !is_ranked) --g.size;
  if (is_ranked && !was_ranked) ++g.size;

  const Digest& run = added != nullptr ? added->run : removed->run;
  if (was_ranked && !is_ranked && g.leader == run) {
    changes.note(key, g.leader);
    auto next = first_ranked(state, key);
    if (!next) return next.error();
    g.leader.reset();
    g.leader_value.reset();
    if (next->has_value()) {
      g.leader = (*next)->run;
      g.leader_value = (*next)->value;
    }
  }
  if (is_ranked && !was_ranked && (!g.leader || added->value < *g.leader_value)) {
    changes.note(key, g.leader);
    g.leader = run;
    g.leader_value = added->value;
  }
  if (g.members == 0) {
    state.erase(store_keys::group_preimage(key));
    state.erase_group(key);
    return Status::ok();
  }
  state.put_group(g);
  return Status::ok();
}

}  // namespace

std::string value_sort_key(double value) {
  if (value == 0) value = 0;  // -0 sorts as 0
  uint64_t bits = std::bit_cast<uint64_t>(value);
  bits = (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
  return hex_encode(u64_be(bits));  // as "%016llx" (big-endian bytes, lowercase)
}

double value_from_sort_key(std::string_view hex16) {
  uint64_t bits = 0;
  for (char c : hex16.substr(0, 16)) {
    bits = bits << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  bits = (bits & kSignBit) != 0 ? bits & ~kSignBit : ~bits;
  return std::bit_cast<double>(bits);
}

std::string observed_at_sort_key(std::string_view observed_at) {
  std::string digits = observed_at_digits(observed_at).value_or(std::string(23, '0'));
  for (char& c : digits) c = static_cast<char>('9' - (c - '0'));  // newer sorts first
  return digits;
}

namespace {

// The exclusions that make a view ineligible, appended to `out` in RankExclusion's order.
void add_ineligible(const RunView& view, std::vector<RankExclusion>& out) {
  if (view.void_cause) out.push_back(RankExclusion::kVoid);
  if (view.status != "passed") out.push_back(RankExclusion::kStatus);
  if (!view.primary) out.push_back(RankExclusion::kNoPrimary);
  // The flags are in this order too (projections/evidence.h).
  for (const auto& flag : view.flags) {
    if (flag == "retracted") out.push_back(RankExclusion::kRetracted);
    if (flag == "superseded") out.push_back(RankExclusion::kSuperseded);
    if (flag == "disqualified") out.push_back(RankExclusion::kDisqualified);
  }
}

}  // namespace

std::vector<RankExclusion> rank_exclusions(const RunView& view) {
  std::vector<RankExclusion> out;
  add_ineligible(view, out);
  if (!view.comparison_key) {
    out.push_back(!view.has_workload && !view.workload_digest.empty()
                      ? RankExclusion::kAwaitsWorkload
                      : RankExclusion::kNoComparisonKey);
  }
  return out;
}

bool run_eligible(const RunView& view) {
  std::vector<RankExclusion> out;
  add_ineligible(view, out);
  return out.empty();
}

std::optional<Membership> run_membership(const RunView& view) {
  if (view.void_cause || !view.comparison_key || !has_comparison_inputs(view)) {
    return std::nullopt;
  }
  auto key = parse_digest_text(*view.comparison_key);
  if (!key) return std::nullopt;
  Membership m;
  m.group = *key;
  m.run = view.run;
  m.ranked = run_eligible(view);
  if (m.ranked) {
    m.value = view.primary->value;
    m.sort_key = sort_key(view);
  }
  return m;
}

std::string group_record_text(const GroupRecord& g) {
  std::string out;
  {
    JcsObjectWriter w(out);
    w.digest("group", g.key);
    if (g.leader) {
      w.digest("leader", *g.leader);
    } else {
      w.null("leader");
    }
    w.opt_number("leaderValue", g.leader_value);
    w.number("members", static_cast<double>(g.members));
    w.number("size", static_cast<double>(g.size));
  }
  return out;
}

Result<GroupRecord> parse_group_record(const Digest& key, std::string_view text) {
  Status damaged = corrupt("stored group " + digest_text(key) +
                           " is damaged; rebuild the projections (evledger rebuild)");
  auto j = parse_json(text);
  if (!j) return damaged;
  GroupRecord g;
  g.key = key;
  const Json* leader = j->find("leader");
  const Json* value = j->find("leaderValue");
  const Json* size = j->find("size");
  const Json* members = j->find("members");
  auto count = [](const Json* v) {
    return v != nullptr && v->is_number() && v->as_number() >= 0 &&
           v->as_number() < 9007199254740992.0;
  };
  if (leader == nullptr || value == nullptr || !count(size) || !count(members)) {
    return damaged;
  }
  if (leader->is_string()) {
    auto d = parse_digest_text(leader->as_string());
    if (!d || !value->is_number()) return damaged;
    g.leader = *d;
    g.leader_value = value->as_number();
  }
  g.size = static_cast<uint64_t>(size->as_number());
  g.members = static_cast<uint64_t>(members->as_number());
  return g;
}

Result<std::optional<GroupRecord>> find_group(const ProjectionStore& store, const Digest& key) {
  auto text = store.get(store_keys::group(key));
  if (!text) return text.error();
  if (!text->has_value()) return std::optional<GroupRecord>();
  auto g = parse_group_record(key, **text);
  if (!g) return g.error();
  return std::optional<GroupRecord>(std::move(g).value());
}

Status LeaderChanges::write(FoldState& state, uint64_t index, std::string_view cause) const {
  for (const auto& [group, previous] : previous_) {
    auto g = state.find_group(group);
    if (!g) return g.error();
    std::optional<Digest> now = *g != nullptr ? (*g)->leader : std::nullopt;
    if (now == previous) continue;
    Json record = Json::object();
    record.set("group", digest_text(group));
    record.set("run", now ? Json(digest_text(*now)) : Json());
    record.set("previous", previous ? Json(digest_text(*previous)) : Json());
    record.set("cause", std::string(cause));
    record.set("index", index);
    state.put_once(store_keys::leadership(index, group), jcs_serialize(record));
  }
  return Status::ok();
}

Status move_membership(FoldState& state, const std::optional<Membership>& before,
                       const std::optional<Membership>& after, const RunView& view,
                       LeaderChanges& changes) {
  if (before && after && before->group == after->group && before->ranked == after->ranked &&
      before->sort_key == after->sort_key) {
    return Status::ok();
  }
  if (before) EVL_RETURN_IF_ERROR(index_entry(state, *before, false));
  if (after) EVL_RETURN_IF_ERROR(index_entry(state, *after, true));
  if (before && after && before->group == after->group) {
    return update_group(state, before->group, &*before, &*after, view, changes);
  }
  if (before) {
    EVL_RETURN_IF_ERROR(update_group(state, before->group, &*before, nullptr, view, changes));
  }
  if (after) {
    EVL_RETURN_IF_ERROR(update_group(state, after->group, nullptr, &*after, view, changes));
  }
  return Status::ok();
}

Result<std::vector<RankedMember>> ranked_members(const ProjectionStore& store, const Digest& key) {
  std::vector<RankedMember> out;
  std::vector<std::string> value_keys;
  std::string prefix = store_keys::ranked_prefix(key);
  bool damaged = false;
  Status s = store.scan(prefix, [&](std::string_view k, std::string_view) {
    RankedMember m;
    if (k.size() < prefix.size() + 16 || !store_keys::digest_suffix(k, m.run)) {
      damaged = true;
      return false;
    }
    value_keys.emplace_back(k.substr(prefix.size(), 16));
    m.value = value_from_sort_key(value_keys.back());
    out.push_back(m);
    return true;
  });
  if (!s) return s;
  if (damaged) return corrupt("group " + digest_text(key) + " has a damaged ranking entry");
  uint64_t rank = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0 || value_keys[i] != value_keys[i - 1]) ++rank;
    out[i].rank = rank;
    out[i].tied = (i > 0 && value_keys[i] == value_keys[i - 1]) ||
                  (i + 1 < out.size() && value_keys[i] == value_keys[i + 1]);
  }
  return out;
}

Result<std::optional<RankedMember>> rank_in_group(const ProjectionStore& store,
                                                  const Membership& member) {
  const std::string prefix = store_keys::ranked_prefix(member.group);
  const std::string own = prefix + member.sort_key;
  const std::string_view own_value = std::string_view(member.sort_key).substr(0, 16);
  std::optional<RankedMember> out;
  std::string previous_value;
  uint64_t rank = 0;
  Status s = store.scan(prefix, [&](std::string_view k, std::string_view) {
    if (k.size() < prefix.size() + 16) return false;
    std::string_view value = k.substr(prefix.size(), 16);
    if (out) {  // the entry just after the member
      out->tied = out->tied || value == own_value;
      return false;
    }
    const bool same_as_previous = rank > 0 && value == previous_value;
    if (!same_as_previous) {
      ++rank;
      previous_value.assign(value);
    }
    if (k == own) out = RankedMember{member.run, member.value, rank, same_as_previous};
    return true;
  });
  if (!s) return s;
  return out;
}

Result<std::vector<Digest>> unranked_members(const ProjectionStore& store, const Digest& key) {
  std::vector<Digest> out;
  Status s =
      store.scan(store_keys::unranked_prefix(key), [&](std::string_view k, std::string_view) {
        Digest d;
        if (store_keys::digest_suffix(k, d)) out.push_back(d);
        return true;
      });
  if (!s) return s;
  return out;
}

}  // namespace evl
