// events/sha256.h — SHA-256 (OpenSSL, which uses the CPU's SHA extensions) and digest text.
//
// Thread safety: pure functions; a Sha256 hasher is not shared between threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "events/bytes.h"

struct evp_md_ctx_st;  // EVP_MD_CTX, <openssl/evp.h>

namespace evl {

using Digest = std::array<uint8_t, 32>;

Digest sha256(ByteView data);

// Incremental hashing for data that arrives in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(ByteView data);
  Sha256& update(std::string_view data) { return update(as_bytes(data)); }
  Digest finish();

 private:
  evp_md_ctx_st* ctx_;  // OpenSSL's EVP_MD_CTX, reused from this thread's spare contexts
};

// "sha256:<64 lowercase hex>", the text form of event ids and manifest digests.
std::string digest_text(const Digest& digest);
// Parses "sha256:<64 hex>"; the hex must be lowercase.
Result<Digest> parse_digest_text(std::string_view text);

}  // namespace evl
