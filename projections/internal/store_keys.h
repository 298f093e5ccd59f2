// projections/internal/store_keys.h — the key layout of the projection store.
//
// Every key is printable text (digests as 64 lowercase hex, log indexes as 20 zero-padded
// decimal digits, so byte order is numeric order). projections/FORMAT.md documents the layout;
// change both together.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "events/sha256.h"

namespace evl::store_keys {

inline constexpr std::string_view kNext = "#/next";      // the next log index to apply
inline constexpr std::string_view kVersion = "#/version";  // the state's projection format
inline constexpr std::string_view kRuns = "r/";          // r/<run>
inline constexpr std::string_view kWaiting = "w/";       // w/<manifest>/<run index>
inline constexpr std::string_view kOrphans = "o/";       // o/<target run>/<event index>/<role>
inline constexpr std::string_view kGroups = "G/";        // G/<comparison key>
inline constexpr std::string_view kGroupKeys = "K/";     // K/<comparison key>: preimage
inline constexpr std::string_view kGroupMembers = "g/";  // g/<key>/r/<sort>, g/<key>/u/<run>
inline constexpr std::string_view kBenchmarks = "b/";    // b/<benchmark>/<run>
inline constexpr std::string_view kLeadership = "L/";    // L/<event index>/<key>
inline constexpr std::string_view kVoid = "v/";          // v/<event index>
inline constexpr std::string_view kSkipped = "s/";       // s/<event index>

std::string hex(const Digest& digest);
std::string index20(uint64_t index);

std::string run(const Digest& run);
std::string waiting_prefix(const Digest& manifest);
std::string waiting(const Digest& manifest, uint64_t run_index);
std::string orphan_prefix(const Digest& target);
std::string orphan(const Digest& target, uint64_t index, std::string_view role);
std::string group(const Digest& key);
std::string group_preimage(const Digest& key);
std::string ranked_prefix(const Digest& key);
std::string ranked(const Digest& key, std::string_view sort_key);
std::string unranked_prefix(const Digest& key);
std::string unranked(const Digest& key, const Digest& run);
// '%', '/' and bytes below 0x21 are written %XX, so that one benchmark's prefix never
// matches another's.
std::string benchmark_prefix(std::string_view benchmark);
std::string benchmark(std::string_view benchmark, const Digest& run);
// The benchmark's name back from its escaped form in a b/ key (between "b/" and the "/").
std::string benchmark_name(std::string_view escaped);
std::string leadership(uint64_t index, const Digest& key);
std::string void_event(uint64_t index);
std::string skipped(uint64_t index);

// The digest of a key's last 64 hex characters (w/, b/, g/ keys end with one).
bool digest_suffix(std::string_view key, Digest& out);

}  // namespace evl::store_keys
