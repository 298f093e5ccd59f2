// What the site's pages read besides the listings (projections/query_site.h).
#include "projections/query_site.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "events/bytes.h"
#include "projections/internal/apply.h"
#include "projections/internal/groups.h"
#include "projections/internal/store_keys.h"
#include "projections/internal/views.h"
#include "projections/query.h"

namespace evl {
namespace {

Result<uint64_t> count_keys(const ProjectionStore& store, std::string_view prefix) {
  uint64_t n = 0;
  Status s = store.scan(prefix, [&](std::string_view, std::string_view) {
    ++n;
    return true;
  });
  if (!s) return s;
  return n;
}

// The stored view of `run` (without the group-derived members), or nullopt.
Result<std::optional<RunView>> stored_view(const ProjectionStore& store, const Digest& run) {
  auto text = store.get(store_keys::run(run));
  if (!text) return text.error();
  if (!text->has_value()) return std::optional<RunView>();
  auto view = parse_run_view(**text);
  if (!view) return view.error();
  return std::optional<RunView>(std::move(*view));
}

bool lists_event(const RunView& view, uint64_t index) {
  return std::any_of(view.history.begin(), view.history.end(),
                     [&](const HistoryItem& h) { return h.index == index; });
}

char folded(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = folded(c);
  return out;
}

// Whether `text` holds `needle` (lowercase) without regard to ASCII case, copying nothing.
bool holds_folded(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return folded(a) == b; }) != text.end();
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The hex digits of a query that names a digest or a start of one, or "".
std::string digest_start(std::string_view query) {
  std::string_view q = query;
  if (q.substr(0, 7) == "sha256:") q.remove_prefix(7);
  if (q.size() >= kEllipsis.size() && q.substr(q.size() - kEllipsis.size()) == kEllipsis) {
    q.remove_suffix(kEllipsis.size());
  }
  const std::string hex = lower(q);
  if (hex.size() < kMinDigestPrefix || hex.size() > 64 ||
      hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return "";
  }
  return hex;
}

bool matches(const RunView& view, const std::string& needle, const std::string& hex) {
  if (!hex.empty()) {
    if (store_keys::hex(view.run).compare(0, hex.size(), hex) == 0) return true;
    if (view.comparison_key && view.comparison_key->size() > 7 &&
        view.comparison_key->compare(7, hex.size(), hex) == 0) {
      return true;
    }
  }
  for (const std::string* field : {&view.benchmark, &view.name, &view.title, &view.source,
                                   &view.external_id}) {
    if (holds_folded(*field, needle)) return true;
  }
  return view.gpu && holds_folded(view.gpu->product, needle);
}

}  // namespace

Result<ProjectionCounts> count_projections(const ProjectionStore& store) {
  ProjectionCounts c;
  const std::pair<std::string_view, uint64_t*> families[] = {
      {store_keys::kRuns, &c.runs},
      {store_keys::kGroups, &c.groups},
      {store_keys::kLeadership, &c.leadership_changes},
      {store_keys::kVoid, &c.void_events},
      {store_keys::kSkipped, &c.skipped_events}};
  for (const auto& [prefix, count] : families) {
    auto n = count_keys(store, prefix);
    if (!n) return n.error();
    *count = *n;
  }
  // b/<escaped name>/<run>: one benchmark per distinct name.
  std::string last;
  Status s = store.scan(store_keys::kBenchmarks, [&](std::string_view key, std::string_view) {
    const std::string_view rest = key.substr(store_keys::kBenchmarks.size());
    const std::string_view name = rest.substr(0, rest.rfind('/'));
    if (c.benchmarks == 0 || name != last) {
      ++c.benchmarks;
      last.assign(name);
    }
    return true;
  });
  if (!s) return s;
  return c;
}

Result<std::vector<Json>> latest_leadership_changes(const ProjectionStore& store, size_t limit) {
  if (limit == 0) return std::vector<Json>();
  PageRequest page;
  page.limit = limit;
  auto newest = leadership_history_newest_first(store, std::nullopt, page);
  if (!newest) return newest.error();
  return std::move(newest->items);
}

Result<Page> current_records(const ProjectionStore& store, const PageRequest& page) {
  const std::string& c = page.cursor;
  if (!c.empty() && (c.size() != 64 || c.find_first_not_of("0123456789abcdef") != std::string::npos)) {
    return usage_error(page.what + " '" + c.substr(0, 100) + "' is not a position in the "
                       "current records (a group key's 64 hex digits): pass the 'next' of the "
                       "page before, or nothing for the first page");
  }
  std::vector<Digest> leaders;
  Page out;
  Status failed;
  const std::string from = std::string(store_keys::kGroups) + c;
  Status s = store.scan_from(store_keys::kGroups, from, [&](std::string_view key,
                                                           std::string_view value) {
    Digest group;
    if (!store_keys::digest_suffix(key, group)) {
      failed = corrupt("a group record's key is damaged; rebuild the projections");
      return false;
    }
    auto record = parse_group_record(group, value);
    if (!record) {
      failed = record.error();
      return false;
    }
    if (!record->leader) return true;
    if (leaders.size() == page.limit) {
      out.next = store_keys::hex(group);
      return false;
    }
    leaders.push_back(*record->leader);
    return true;
  });
  if (!s) return s;
  if (!failed) return failed;
  // Without a ranking cache: a leader's rank is read from the start of its group's ranking,
  // where it stands, not from the whole group.
  for (const Digest& run : leaders) {
    auto view = full_view(store, run, nullptr, nullptr);
    if (!view) return view.error();
    if (*view) out.items.push_back(std::move(**view));
  }
  return out;
}

Result<std::vector<Digest>> runs_touched_by(const ProjectionStore& store, uint64_t index,
                                            const EventBody& body) {
  std::set<Digest> touched;
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
    // The runs that referenced this manifest: their views hold its digest's text.
    const std::string hex = store_keys::hex(sha256(as_bytes(m->manifest.canonical)));
    Status failed;
    Status s = store.scan(store_keys::kRuns, [&](std::string_view, std::string_view value) {
      if (value.find(hex) == std::string_view::npos) return true;
      auto view = parse_run_view(value);
      if (!view) {
        failed = view.error();
        return false;
      }
      if (lists_event(*view, index)) touched.insert(view->run);
      return true;
    });
    if (!s) return s;
    if (!failed) return failed;
    return std::vector<Digest>(touched.begin(), touched.end());
  }
  std::vector<Digest> candidates;
  if (auto target = event_target(body)) candidates.push_back(*target);
  if (const auto* c = std::get_if<Correction>(&body.payload);
      c != nullptr && c->kind == Correction::Kind::kSupersede) {
    candidates.push_back(c->replacement);
  }
  for (const Digest& run : candidates) {
    auto view = stored_view(store, run);
    if (!view) return view.error();
    if (*view && lists_event(**view, index)) touched.insert(run);
  }
  return std::vector<Digest>(touched.begin(), touched.end());
}

Result<BenchmarkGroups> benchmark_groups(const ProjectionStore& store, std::string_view benchmark) {
  RunFilter filter;
  filter.benchmark = std::string(benchmark);
  auto runs = list_runs(store, filter);
  if (!runs) return runs.error();
  BenchmarkGroups out;
  std::map<std::string, Json> gpus;  // comparison key -> the hardware of its first run
  for (const Json& run : *runs) {
    const Json* key = run.find("comparisonKey");
    if (key == nullptr || !key->is_string()) {
      ++out.ungrouped;
      continue;
    }
    const Json* gpu = run.find("gpu");
    gpus.emplace(key->as_string(), gpu != nullptr ? *gpu : Json());
  }
  for (auto& [key_text, gpu] : gpus) {
    auto key = parse_digest_text(key_text);
    if (!key) return corrupt("a stored run view's comparison key is damaged; rebuild the projections");
    auto group = read_group(store, *key);
    if (!group) return group.error();
    if (!*group) continue;
    (*group)->set("gpu", std::move(gpu));
    out.groups.push_back(std::move(**group));
  }
  out.runs = std::move(*runs);
  return out;
}

Result<Page> search_runs(const ProjectionStore& store, std::string_view query,
                         const PageRequest& page) {
  const std::string_view q = trimmed(query);
  if (q.size() < kMinSearchQuery || q.size() > kMaxSearchQuery) {
    return usage_error("q= must hold " + std::to_string(kMinSearchQuery) + " to " +
                       std::to_string(kMaxSearchQuery) + " characters: a benchmark, an "
                       "implementation, a source, a GPU, an external id or the start of a digest");
  }
  const std::string needle = lower(q), hex = digest_start(q);
  // Every field searched is in a view's stored (JCS) text as it is, unless JSON escapes it.
  const bool prefilter = hex.empty() && needle.find_first_of("\"\\") == std::string::npos &&
                         std::none_of(needle.begin(), needle.end(),
                                      [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  const std::string& c = page.cursor;
  if (!c.empty() && (c.size() != 64 || c.find_first_not_of("0123456789abcdef") != std::string::npos)) {
    return usage_error(page.what + " '" + c.substr(0, 100) + "' is not a position in this "
                       "search (64 hex digits): pass the 'next' of the page before, or nothing "
                       "for the first page");
  }
  std::vector<Digest> found;
  Page out;
  Status failed;
  const std::string from = std::string(store_keys::kRuns) + c;
  Status s = store.scan_from(store_keys::kRuns, from, [&](std::string_view, std::string_view value) {
    if (prefilter && !holds_folded(value, needle)) return true;
    auto view = parse_run_view(value);
    if (!view) {
      failed = view.error();
      return false;
    }
    if (!matches(*view, needle, hex)) return true;
    if (found.size() == page.limit) {
      out.next = store_keys::hex(view->run);
      return false;
    }
    found.push_back(view->run);
    return true;
  });
  if (!s) return s;
  if (!failed) return failed;
  RankingCache cache(store);
  for (const Digest& run : found) {
    auto view = full_view(store, run, &cache, nullptr);
    if (!view) return view.error();
    if (*view) out.items.push_back(std::move(**view));
  }
  return out;
}

}  // namespace evl
