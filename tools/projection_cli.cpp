#include "tools/projection_cli.h"

#include <algorithm>

#include "events/jcs.h"
#include "projections/query.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

Status with_projections(const Args& args,
                        const std::function<Status(const KeyValueStore&, uint64_t)>& fn) {
  return with_projections(args, [&](const Ledger&, const KeyValueStore& state, uint64_t size) {
    return fn(state, size);
  });
}

Status with_projections(
    const Args& args,
    const std::function<Status(const Ledger&, const KeyValueStore&, uint64_t)>& fn) {
  auto ledger = open_ledger(args, false);
  if (!ledger) return ledger.error();
  return (*ledger)->read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != size) {
      return rejected("the projections cover " + std::to_string(*applied) + " of " +
                      std::to_string(size) + " entries; run 'evledger rebuild --ledger " +
                      (*ledger)->dir() + "' (any append also catches them up)");
    }
    return fn(**ledger, state, size);
  });
}

namespace {

// What the command line may name by a digest's start: runs (their digests) and comparison
// groups (their keys).
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

Result<std::string> prefix_arg(const std::string& text, const std::string& what,
                               const PrefixKind& kind) {
  std::string_view hex = text;
  if (hex.size() >= kEllipsis.size() && hex.substr(hex.size() - kEllipsis.size()) == kEllipsis) {
    hex.remove_suffix(kEllipsis.size());
  }
  if (hex.substr(0, 7) == "sha256:") hex.remove_prefix(7);
  const bool digits = hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (!digits || hex.size() < kMinRunPrefix || hex.size() > 64) {
    return usage_error(what + ": '" + text + "' is not a " + kind.digest +
                       ": give sha256:<64 hex> or its first " + std::to_string(kMinRunPrefix) +
                       " or more lowercase hex digits, as " + kind.listing);
  }
  return std::string(hex);
}

Result<Digest> resolve(const KeyValueStore& state, const std::string& hex_prefix,
                       const std::string& what, const PrefixKind& kind) {
  constexpr size_t kListed = 5;
  auto found = kind.find(state, hex_prefix, kListed + 1);
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

Result<std::string> run_prefix_arg(const std::string& text, const std::string& what) {
  return prefix_arg(text, what, kRunPrefix);
}

Result<Digest> resolve_run(const KeyValueStore& state, const std::string& hex_prefix,
                           const std::string& what) {
  return resolve(state, hex_prefix, what, kRunPrefix);
}

Result<std::string> group_prefix_arg(const std::string& text, const std::string& what) {
  return prefix_arg(text, what, kGroupPrefix);
}

Result<Digest> resolve_group(const KeyValueStore& state, const std::string& hex_prefix,
                             const std::string& what) {
  return resolve(state, hex_prefix, what, kGroupPrefix);
}

std::string json_line(const Json& value) { return jcs_serialize(value); }

std::string short_digest(std::string text, size_t hex_digits) {
  const size_t cut = std::string_view("sha256:").size() + hex_digits;
  if (text.size() <= cut) return text;
  text.resize(cut);
  return text + std::string(kEllipsis);
}

std::string padded(std::string text, size_t width) {
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;  // not a continuation byte
  if (chars < width) text.append(width - chars, ' ');
  return text;
}

std::string text_of(const Json* value) {
  if (value == nullptr || value->is_null()) return "-";
  if (value->is_string()) return value->as_string();
  return jcs_serialize(*value);
}

}  // namespace evl::cli
