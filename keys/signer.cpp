#include "keys/signer.h"

namespace evl {

namespace {

EntrySignature signature_by(const SecretKey& key, ByteView body) {
  EntrySignature sig;
  sig.public_key = key.public_key();
  sig.signature = key.sign(pae(kEventPayloadType, body));
  return sig;
}

}  // namespace

Result<Bytes> sign_body(const SecretKey& key, ByteView body) {
  auto decoded = decode_body(body);
  if (!decoded) return decoded.error();
  if (decoded->author != key.public_key()) {
    return rejected("the body's author is not the key '" + key.name() +
                    "'; set the author field to its public key before signing");
  }
  SignedEvent entry;
  entry.body.assign(body.begin(), body.end());
  entry.signatures.push_back(signature_by(key, body));
  Bytes bytes = encode_entry(entry);
  if (bytes.size() > kMaxEntryBytes) {
    return rejected("the signed entry would be " + std::to_string(bytes.size()) +
                    " bytes; the limit is " + std::to_string(kMaxEntryBytes));
  }
  return bytes;
}

Result<Bytes> sign_event(const SecretKey& key, const EventBody& body) {
  return sign_body(key, encode_body(body));
}

Result<Bytes> add_signature(const SecretKey& key, ByteView entry_bytes) {
  auto entry = decode_entry(entry_bytes);
  if (!entry) return entry.error();
  for (const auto& sig : entry->signatures) {
    if (sig.public_key == key.public_key()) {
      return rejected("key '" + key.name() + "' has signed this entry already");
    }
  }
  entry->signatures.push_back(signature_by(key, entry->body));
  return encode_entry(*entry);
}

}  // namespace evl
