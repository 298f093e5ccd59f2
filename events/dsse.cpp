#include "events/dsse.h"

#include <sodium.h>

#include <string>

namespace evl {

void pae_into(std::string_view payload_type, ByteView payload, Bytes& out) {
  std::string head = "DSSEv1 " + std::to_string(payload_type.size()) + " " +
                     std::string(payload_type) + " " + std::to_string(payload.size()) + " ";
  out.clear();
  out.reserve(head.size() + payload.size());
  out.insert(out.end(), head.begin(), head.end());
  out.insert(out.end(), payload.begin(), payload.end());
}

Bytes pae(std::string_view payload_type, ByteView payload) {
  Bytes out;
  pae_into(payload_type, payload, out);
  return out;
}

bool ed25519_verify(const PublicKey& public_key, ByteView message, ByteView signature) {
  if (signature.size() != crypto_sign_BYTES) return false;
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                     public_key.data()) == 0;
}

bool dsse_verify(const PublicKey& public_key, ByteView body, ByteView signature) {
  Bytes message = pae(kEventPayloadType, body);
  return ed25519_verify(public_key, message, signature);
}

}  // namespace evl
