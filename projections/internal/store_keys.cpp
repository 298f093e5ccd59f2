#include "projections/internal/store_keys.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "events/bytes.h"

namespace evl::store_keys {

namespace {

// The fold builds several keys for each event: each is made in one allocation, with room for
// what the longest callers append (an index, a role).
constexpr size_t kTailRoom = 32;

void append_index20(std::string& out, uint64_t index) {
  const size_t at = out.size();
  out.resize(at + 20, '0');
  for (size_t i = at + 20; index != 0; index /= 10) out[--i] = static_cast<char>('0' + index % 10);
}

// prefix, the digest's hex, then suffix.
std::string hex_key(std::string_view prefix, const Digest& digest, std::string_view suffix = {}) {
  std::string out;
  out.reserve(prefix.size() + 2 * digest.size() + suffix.size() + kTailRoom);
  out.append(prefix);
  hex_append(out, digest);
  out.append(suffix);
  return out;
}

}  // namespace

std::string hex(const Digest& digest) { return hex_encode(digest); }

std::string index20(uint64_t index) {
  std::string out;
  append_index20(out, index);
  return out;
}

std::string run(const Digest& run) { return hex_key(kRuns, run); }
std::string waiting_prefix(const Digest& manifest) { return hex_key(kWaiting, manifest, "/"); }
std::string waiting(const Digest& manifest, uint64_t run_index) {
  std::string out = waiting_prefix(manifest);
  append_index20(out, run_index);
  return out;
}
std::string orphan_prefix(const Digest& target) { return hex_key(kOrphans, target, "/"); }
std::string orphan(const Digest& target, uint64_t index, std::string_view role) {
  std::string out = orphan_prefix(target);
  append_index20(out, index);
  out.push_back('/');
  out.append(role);
  return out;
}
std::string group(const Digest& key) { return hex_key(kGroups, key); }
std::string group_preimage(const Digest& key) { return hex_key(kGroupKeys, key); }
std::string ranked_prefix(const Digest& key) { return hex_key(kGroupMembers, key, "/r/"); }
std::string ranked(const Digest& key, std::string_view sort_key) {
  std::string out = ranked_prefix(key);
  out.append(sort_key);
  return out;
}
std::string unranked_prefix(const Digest& key) { return hex_key(kGroupMembers, key, "/u/"); }
std::string unranked(const Digest& key, const Digest& run) {
  std::string out = unranked_prefix(key);
  hex_append(out, run);
  return out;
}

std::string benchmark_prefix(std::string_view benchmark) {
  std::string out(kBenchmarks);
  for (unsigned char c : benchmark) {
    if (c == '%' || c == '/' || c < 0x21) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('/');
  return out;
}
std::string benchmark(std::string_view benchmark, const Digest& run) {
  std::string out = benchmark_prefix(benchmark);
  hex_append(out, run);
  return out;
}
std::string benchmark_name(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    uint8_t byte[1];
    if (escaped[i] == '%' && i + 2 < escaped.size() &&
        hex_decode_into(escaped.substr(i + 1, 2), byte)) {
      out.push_back(static_cast<char>(byte[0]));
      i += 2;
    } else {
      out.push_back(escaped[i]);
    }
  }
  return out;
}
std::string leadership(uint64_t index, const Digest& key) {
  std::string out(kLeadership);
  append_index20(out, index);
  out.push_back('/');
  hex_append(out, key);
  return out;
}
std::string void_event(uint64_t index) {
  std::string out(kVoid);
  append_index20(out, index);
  return out;
}
std::string skipped(uint64_t index) {
  std::string out(kSkipped);
  append_index20(out, index);
  return out;
}

bool digest_suffix(std::string_view key, Digest& out) {
  if (key.size() < 64) return false;
  auto bytes = hex_decode(key.substr(key.size() - 64));
  if (!bytes || bytes->size() != 32) return false;
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return true;
}

}  // namespace evl::store_keys
