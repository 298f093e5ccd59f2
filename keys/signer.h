// keys/signer.h — turning event bodies into signed entries.
//
// Thread safety: pure functions over a const SecretKey.
#pragma once

#include "events/event.h"
#include "keys/key.h"

namespace evl {

// DSSE-signs canonical body bytes: the entry's first (author's) signature. kRejected when the
// body is not canonical or its author is not `key`.
Result<Bytes> sign_body(const SecretKey& key, ByteView body);

// Encodes `body` (its author must be `key`'s public key) and signs it.
Result<Bytes> sign_event(const SecretKey& key, const EventBody& body);

// Adds `key`'s signature to an existing entry (a co-signature). kRejected when the entry does
// not decode or the key has signed it already.
Result<Bytes> add_signature(const SecretKey& key, ByteView entry);

}  // namespace evl
