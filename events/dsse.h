// events/dsse.h — DSSE v1 pre-authentication encoding and Ed25519 verification.
//
//   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
//
// LEN is the decimal byte length. Every evledger signature is Ed25519 over
// PAE(kEventPayloadType, body), so any DSSE verifier checks an event given its public key.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "events/bytes.h"

namespace evl {

using PublicKey = std::array<uint8_t, 32>;
using Signature64 = std::array<uint8_t, 64>;

inline constexpr std::string_view kEventPayloadType = "application/vnd.evledger.event.v1+capnp";

Bytes pae(std::string_view payload_type, ByteView payload);
// The same into `out` (replacing what it held), for callers that reuse one buffer.
void pae_into(std::string_view payload_type, ByteView payload, Bytes& out);

// Ed25519 verification with libsodium's crypto_sign_verify_detached (1.0.18): rejects
// small-order public keys, a non-canonical S and a signature that is not 64 bytes.
[[nodiscard]] bool ed25519_verify(const PublicKey& public_key, ByteView message,
                                  ByteView signature);

// Verifies `signature` by `public_key` over PAE(kEventPayloadType, body).
[[nodiscard]] bool dsse_verify(const PublicKey& public_key, ByteView body, ByteView signature);

}  // namespace evl
