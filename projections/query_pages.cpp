// The listings of projections/query.h, a page at a time: each page is one range scan of an
// index of the state from the cursor's key, so a page costs its own items, not the listing's.
#include <algorithm>
#include <deque>
#include <functional>
#include <string>

#include "events/bytes.h"
#include "projections/internal/groups.h"
#include "projections/internal/store_keys.h"
#include "projections/internal/views.h"
#include "projections/query.h"

namespace evl {
namespace {

bool lower_hex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}
bool is_digest_hex(std::string_view text) { return text.size() == 64 && lower_hex(text); }

// kUsage for a cursor that `valid` refuses (an empty cursor is the first page); `form` says
// what the listing's cursors look like.
Status check_cursor(const PageRequest& page, bool valid, const char* form) {
  if (page.cursor.empty() || valid) return Status::ok();
  return usage_error(page.what + " '" + page.cursor.substr(0, 100) +
                     "' is not a position in this listing (" + form +
                     "): pass the 'next' of the page before, or nothing for the first page");
}

// What a page scan found: the keys' suffixes after the index's prefix (the items' cursors) of
// up to `limit` items, and the cursor of the item after them.
struct Found {
  std::vector<std::string> cursors;
  std::vector<std::string> values;  // when asked for
  std::optional<std::string> next;
};

// Scans the keys under `prefix` from prefix + page.cursor, keeping those that `accept` takes
// (given the suffix and the value; an error stops the scan), until limit + 1 are kept.
using Accept = std::function<Result<bool>(std::string_view suffix, std::string_view value)>;
Result<Found> scan_page(const ProjectionStore& store, const std::string& prefix,
                        const PageRequest& page, const Accept& accept, bool keep_values) {
  Found found;
  Status failed;
  const size_t wanted = page.limit == SIZE_MAX ? SIZE_MAX : page.limit + 1;
  Status s = store.scan_from(prefix, prefix + page.cursor,
                             [&](std::string_view key, std::string_view value) {
                               const std::string_view suffix = key.substr(prefix.size());
                               auto taken = accept(suffix, value);
                               if (!taken) {
                                 failed = taken.error();
                                 return false;
                               }
                               if (!*taken) return true;
                               found.cursors.emplace_back(suffix);
                               if (keep_values) found.values.emplace_back(value);
                               return found.cursors.size() < wanted;
                             });
  if (!s) return s;
  if (!failed) return failed;
  if (found.cursors.size() > page.limit) {
    found.next = std::move(found.cursors.back());
    found.cursors.pop_back();
    if (keep_values) found.values.pop_back();
  }
  return found;
}

// Accepts keys whose last 64 characters are a digest; a damaged key is kCorrupt.
Accept digest_keys(const char* what) {
  return [what](std::string_view suffix, std::string_view) -> Result<bool> {
    Digest d;
    if (!store_keys::digest_suffix(suffix, d)) {
      return corrupt(std::string("a ") + what + "'s key is damaged; rebuild the projections");
    }
    return true;
  };
}

Digest suffix_digest(std::string_view suffix) {
  Digest d{};
  (void)store_keys::digest_suffix(suffix, d);  // checked when the key was accepted
  return d;
}

// The full views of the runs named by the cursors' digests (their last 64 characters).
Result<Page> run_page(const ProjectionStore& store, Found found) {
  RankingCache cache(store);
  Page out;
  for (const std::string& cursor : found.cursors) {
    auto view = full_view(store, suffix_digest(cursor), &cache, nullptr);
    if (!view) return view.error();
    if (view->has_value()) out.items.push_back(std::move(**view));
  }
  out.next = std::move(found.next);
  return out;
}

Result<Page> group_runs(const ProjectionStore& store, const RunFilter& filter,
                        const PageRequest& page) {
  // g/<key>/r/<sort key> (ranked, in display order) sort before g/<key>/u/<run>.
  const std::string_view c = page.cursor;
  const bool ranked = c.substr(0, 2) == "r/" && c.size() == 2 + 40 + 64 && lower_hex(c.substr(2));
  const bool other = c.substr(0, 2) == "u/" && is_digest_hex(c.substr(2));
  EVL_RETURN_IF_ERROR(check_cursor(page, ranked || other, "r/<sort key> or u/<64 hex>"));
  Accept accept = digest_keys("group member");
  if (filter.benchmark) {
    accept = [&store, &filter, base = accept](std::string_view suffix,
                                              std::string_view value) -> Result<bool> {
      auto digest_ok = base(suffix, value);
      if (!digest_ok || !*digest_ok) return digest_ok;
      auto indexed =
          store.get(store_keys::benchmark(*filter.benchmark, suffix_digest(suffix)));
      if (!indexed) return indexed.error();
      return indexed->has_value();
    };
  }
  std::string prefix = store_keys::ranked_prefix(*filter.group);
  prefix.resize(prefix.size() - 2);  // g/<key>/
  auto found = scan_page(store, prefix, page, accept, false);
  if (!found) return found.error();
  return run_page(store, std::move(*found));
}

// The views' rows of a group (list_group_rows) named by the cursors' digests.
Result<std::vector<Json>> group_rows(const ProjectionStore& store, const Digest& group,
                                     const Found& found) {
  RankingCache cache(store);
  auto ranking = cache.get(group);
  if (!ranking) return ranking.error();
  const Ranking& r = **ranking;
  std::vector<Json> rows;
  rows.reserve(found.cursors.size());
  for (const std::string& cursor : found.cursors) {
    const Digest run = suffix_digest(cursor);
    auto text = store.get(store_keys::run(run));
    if (!text) return text.error();
    if (!text->has_value()) continue;
    auto row = parse_run_view_members(**text, kGroupRowMembers);
    if (!row) return row.error().with_context(digest_text(run));
    const auto ranked = r.ranked.find(run);
    row->set("rank", ranked != r.ranked.end() ? Json(ranked->second.rank) : Json());
    row->set("tied", ranked != r.ranked.end() && ranked->second.tied);
    row->set("groupSize", r.record ? Json(r.record->size) : Json());
    row->set("leader", r.record && r.record->leader ? Json(digest_text(*r.record->leader)) : Json());
    rows.push_back(std::move(*row));
  }
  return rows;
}

Result<Json> group_json(const ProjectionStore& store, std::string_view record) {
  auto g = parse_json(record);
  if (!g) return corrupt("a stored group record is damaged; rebuild the projections");
  auto key = parse_digest_text(json_string(*g, "group").value_or(""));
  if (!key) return corrupt("a stored group record is damaged; rebuild the projections");
  auto preimage = store.get(store_keys::group_preimage(*key));
  if (!preimage) return preimage.error();
  auto parsed = preimage->has_value() ? parse_json(**preimage) : Result<Json>(Json());
  if (!parsed) return corrupt("the stored preimage of group " + digest_text(*key) + " is damaged");
  g->set("preimage", std::move(parsed).value());
  return std::move(*g);
}

template <typename T>
Result<std::vector<Json>> all_items(Result<T> page) {
  if (!page) return page.error();
  return std::move(page->items);
}

}  // namespace

Result<Page> list_runs(const ProjectionStore& store, const RunFilter& filter,
                       const PageRequest& page) {
  if (filter.group) return group_runs(store, filter, page);
  EVL_RETURN_IF_ERROR(check_cursor(page, is_digest_hex(page.cursor), "64 hex digits"));
  const std::string prefix = filter.benchmark ? store_keys::benchmark_prefix(*filter.benchmark)
                                              : std::string(store_keys::kRuns);
  auto found = scan_page(store, prefix, page, digest_keys("run index"), false);
  if (!found) return found.error();
  return run_page(store, std::move(*found));
}

Result<std::vector<Json>> list_runs(const ProjectionStore& store, const RunFilter& filter) {
  return all_items(list_runs(store, filter, PageRequest{}));
}

Result<std::vector<Json>> list_group_rows(const ProjectionStore& store, const Digest& group) {
  std::string prefix = store_keys::ranked_prefix(group);
  prefix.resize(prefix.size() - 2);  // g/<key>/
  auto found = scan_page(store, prefix, PageRequest{}, digest_keys("group member"), false);
  if (!found) return found.error();
  return group_rows(store, group, *found);
}

Result<Page> list_groups(const ProjectionStore& store, const PageRequest& page) {
  EVL_RETURN_IF_ERROR(check_cursor(page, is_digest_hex(page.cursor), "64 hex digits"));
  auto found = scan_page(store, std::string(store_keys::kGroups), page,
                         digest_keys("group record"), true);
  if (!found) return found.error();
  Page out;
  for (const std::string& record : found->values) {
    auto g = group_json(store, record);
    if (!g) return g.error();
    out.items.push_back(std::move(*g));
  }
  out.next = std::move(found->next);
  return out;
}

Result<std::vector<Json>> list_groups(const ProjectionStore& store) {
  return all_items(list_groups(store, PageRequest{}));
}

Result<std::optional<Json>> read_group(const ProjectionStore& store, const Digest& key) {
  auto record = store.get(store_keys::group(key));
  if (!record) return record.error();
  if (!record->has_value()) return std::optional<Json>();
  auto g = group_json(store, **record);
  if (!g) return g.error();
  return std::optional<Json>(std::move(*g));
}

namespace {

// L/<20-digit index>/<64 hex>: the history's cursors, and the changes of `group` (all without).
Status check_leadership_cursor(const PageRequest& page) {
  const std::string_view c = page.cursor;
  const bool valid = c.size() == 85 && c[20] == '/' &&
                     c.substr(0, 20).find_first_not_of("0123456789") == std::string_view::npos &&
                     is_digest_hex(c.substr(21));
  return check_cursor(page, valid, "<20 digits>/<64 hex>");
}
Result<bool> of_group(std::string_view suffix, const std::string& wanted_hex) {
  if (suffix.size() != 85) return corrupt("a leadership record's key is damaged; rebuild the projections");
  return wanted_hex.empty() || suffix.substr(21) == wanted_hex;
}
Result<Json> leadership_record(std::string_view record) {
  auto j = parse_json(record);
  if (!j) return corrupt("a stored leadership record is damaged; rebuild the projections");
  return std::move(*j);
}

}  // namespace

Result<Page> leadership_history(const ProjectionStore& store, const std::optional<Digest>& group,
                                const PageRequest& page) {
  EVL_RETURN_IF_ERROR(check_leadership_cursor(page));
  const std::string wanted = group ? store_keys::hex(*group) : std::string();
  Accept accept = [&wanted](std::string_view suffix, std::string_view) {
    return of_group(suffix, wanted);
  };
  auto found = scan_page(store, std::string(store_keys::kLeadership), page, accept, true);
  if (!found) return found.error();
  Page out;
  for (const std::string& record : found->values) {
    auto j = leadership_record(record);
    if (!j) return j.error();
    out.items.push_back(std::move(*j));
  }
  out.next = std::move(found->next);
  return out;
}

Result<Page> leadership_history_newest_first(const ProjectionStore& store,
                                             const std::optional<Digest>& group,
                                             const PageRequest& page) {
  EVL_RETURN_IF_ERROR(check_leadership_cursor(page));
  const std::string wanted = group ? store_keys::hex(*group) : std::string();
  const size_t limit = std::max<size_t>(page.limit, 1);
  const size_t keep = limit == SIZE_MAX ? limit : limit + 1;
  // The newest limit + 1 changes at or before the cursor, then up to limit + 1 after it.
  std::deque<std::pair<std::string, std::string>> kept;
  std::vector<std::string> newer;
  Status failed;
  Status s = store.scan(store_keys::kLeadership, [&](std::string_view key, std::string_view value) {
    const std::string_view suffix = key.substr(store_keys::kLeadership.size());
    auto taken = of_group(suffix, wanted);
    if (!taken) {
      failed = taken.error();
      return false;
    }
    if (!*taken) return true;
    if (page.cursor.empty() || suffix <= page.cursor) {
      if (kept.size() == keep) kept.pop_front();
      kept.emplace_back(suffix, value);
      return true;
    }
    newer.emplace_back(suffix);
    return newer.size() < keep;
  });
  if (!s) return s;
  if (!failed) return failed;
  Page out;
  if (kept.size() > limit) {
    out.next = kept.front().first;
    kept.pop_front();
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    auto j = leadership_record(it->second);
    if (!j) return j.error();
    out.items.push_back(std::move(*j));
  }
  // The newer page ends `limit` changes later; the first page when no change is newer still.
  if (!page.cursor.empty()) out.previous = newer.size() > limit ? newer[limit - 1] : std::string();
  return out;
}

Result<std::vector<Json>> leadership_history(const ProjectionStore& store,
                                             const std::optional<Digest>& group) {
  return all_items(leadership_history(store, group, PageRequest{}));
}

Result<Page> list_benchmarks(const ProjectionStore& store, const PageRequest& page) {
  // b/<escaped name>/<run hex>: a cursor is an escaped name (no '/', nothing below '!').
  bool valid = true;
  for (unsigned char ch : page.cursor) valid = valid && ch != '/' && ch >= 0x21;
  EVL_RETURN_IF_ERROR(check_cursor(page, valid, "a benchmark's name as its index writes it"));
  const std::string prefix(store_keys::kBenchmarks);
  Page out;
  std::string current;  // the escaped name being counted
  uint64_t runs = 0;
  bool damaged = false;
  auto flush = [&] {
    Json item = Json::object();
    item.set("benchmark", store_keys::benchmark_name(current));
    item.set("runs", runs);
    out.items.push_back(std::move(item));
  };
  const std::string from = page.cursor.empty() ? prefix : prefix + page.cursor + "/";
  Status s = store.scan_from(prefix, from, [&](std::string_view key, std::string_view) {
    const std::string_view rest = key.substr(prefix.size());
    const size_t slash = rest.rfind('/');
    if (slash == std::string_view::npos || slash == 0) {
      damaged = true;
      return false;
    }
    const std::string_view name = rest.substr(0, slash);
    if (runs > 0 && name == current) {
      ++runs;
      return true;
    }
    if (runs > 0) flush();
    if (out.items.size() == page.limit) {
      out.next = std::string(name);
      return false;
    }
    current.assign(name);
    runs = 1;
    return true;
  });
  if (!s) return s;
  if (damaged) return corrupt("a benchmark index key is damaged; rebuild the projections");
  if (runs > 0 && !out.next) flush();
  return out;
}

}  // namespace evl
