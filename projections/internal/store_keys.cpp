#include "projections/internal/store_keys.h"

#include <algorithm>
#include <cstdio>

#include "events/bytes.h"

namespace evl::store_keys {

std::string hex(const Digest& digest) { return hex_encode(digest); }

std::string index20(uint64_t index) {
  char buf[21];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(index));
  return buf;
}

std::string manifest(const Digest& digest) { return std::string(kManifests) + hex(digest); }
std::string run(const Digest& run) { return std::string(kRuns) + hex(run); }
std::string waiting_prefix(const Digest& manifest) {
  return std::string(kWaiting) + hex(manifest) + "/";
}
std::string waiting(const Digest& manifest, uint64_t run_index) {
  return waiting_prefix(manifest) + index20(run_index);
}
std::string orphan_prefix(const Digest& target) {
  return std::string(kOrphans) + hex(target) + "/";
}
std::string orphan(const Digest& target, uint64_t index, std::string_view role) {
  return orphan_prefix(target) + index20(index) + "/" + std::string(role);
}
std::string group(const Digest& key) { return std::string(kGroups) + hex(key); }
std::string group_preimage(const Digest& key) { return std::string(kGroupKeys) + hex(key); }
std::string ranked_prefix(const Digest& key) {
  return std::string(kGroupMembers) + hex(key) + "/r/";
}
std::string ranked(const Digest& key, std::string_view sort_key) {
  return ranked_prefix(key) + std::string(sort_key);
}
std::string unranked_prefix(const Digest& key) {
  return std::string(kGroupMembers) + hex(key) + "/u/";
}
std::string unranked(const Digest& key, const Digest& run) {
  return unranked_prefix(key) + hex(run);
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
  return benchmark_prefix(benchmark) + hex(run);
}
std::string leadership(uint64_t index, const Digest& key) {
  return std::string(kLeadership) + index20(index) + "/" + hex(key);
}
std::string void_event(uint64_t index) { return std::string(kVoid) + index20(index); }
std::string skipped(uint64_t index) { return std::string(kSkipped) + index20(index); }

bool digest_suffix(std::string_view key, Digest& out) {
  if (key.size() < 64) return false;
  auto bytes = hex_decode(key.substr(key.size() - 64));
  if (!bytes || bytes->size() != 32) return false;
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return true;
}

}  // namespace evl::store_keys
