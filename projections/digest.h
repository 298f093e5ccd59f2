// projections/digest.h — one hash over the whole projection state, and the statement the log
// key signs about it.
//
// projection_digest = SHA-256 of the bytes
//     "evledger/projections/v1\n"
//     then, for every key of the store in byte order:
//     u64be(key length) ‖ key ‖ u64be(value length) ‖ value
// (projections/FORMAT.md draws it). Two stores with the same contents have the same digest;
// any difference in any key or value changes it. An auditor rebuilds the projections from the
// log prefix of the stated size and compares digests.
//
// Thread safety: pure functions over a store the caller reads in one snapshot.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "events/sha256.h"
#include "events/status.h"
#include "projections/store.h"

namespace evl {

inline constexpr std::string_view kProjectionDigestDomain = "evledger/projections/v1\n";

Result<Digest> projection_digest(const ProjectionStore& store);

// "evledger/projections/v1\n<origin>\n<size>\n<base64 digest>\n": the body of the signed note
// the server publishes (signed by the log key).
std::string projection_statement(std::string_view origin, uint64_t size, const Digest& digest);

}  // namespace evl
