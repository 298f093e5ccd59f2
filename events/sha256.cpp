#include "events/sha256.h"

#include <openssl/evp.h>

#include <vector>

namespace evl {

namespace {

// The SHA-256 implementation, fetched once: EVP_sha256() makes every init look it up again,
// under a lock that the checking threads then share.
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVL_ASSERT(md != nullptr);
  return md;
}

// Digest contexts this thread has finished with, for the next Sha256 to reuse: a context is a
// heap object that OpenSSL sets up on every EVP_MD_CTX_new.
struct SpareContexts {
  std::vector<EVP_MD_CTX*> spare;
  ~SpareContexts() {
    for (EVP_MD_CTX* ctx : spare) EVP_MD_CTX_free(ctx);
  }
};
thread_local SpareContexts t_contexts;

}  // namespace

Sha256::Sha256() {
  if (t_contexts.spare.empty()) {
    ctx_ = EVP_MD_CTX_new();
  } else {
    ctx_ = t_contexts.spare.back();
    t_contexts.spare.pop_back();
  }
  EVL_ASSERT(ctx_ != nullptr);
  EVL_ASSERT(EVP_DigestInit_ex2(ctx_, sha256_md(), nullptr) == 1);
}

Sha256::~Sha256() {
  constexpr size_t kMaxSpare = 8;
  if (t_contexts.spare.size() < kMaxSpare) {
    t_contexts.spare.push_back(ctx_);
  } else {
    EVP_MD_CTX_free(ctx_);
  }
}

// Through Sha256, not OpenSSL's one-shot SHA256(): that one looks the implementation up under a
// lock on every call.
Digest sha256(ByteView data) { return Sha256().update(data).finish(); }

Sha256& Sha256::update(ByteView data) {
  EVL_ASSERT(EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1);
  return *this;
}

Digest Sha256::finish() {
  Digest out;
  unsigned int len = 0;
  EVL_ASSERT(EVP_DigestFinal_ex(ctx_, out.data(), &len) == 1 && len == out.size());
  return out;
}

std::string digest_text(const Digest& digest) {
  // One allocation (the prefix put before a hex string would take a second): the fold and the
  // summaries write digests as text for nearly every event.
  std::string out;
  out.reserve(7 + 2 * digest.size());
  out.append("sha256:");
  hex_append(out, digest);
  return out;
}

Result<Digest> parse_digest_text(std::string_view text) {
  constexpr std::string_view kPrefix = "sha256:";
  if (text.size() != kPrefix.size() + 64 || text.substr(0, kPrefix.size()) != kPrefix) {
    return rejected("'" + std::string(text) + "' is not a digest of the form sha256:<64 hex>");
  }
  // Decoded without allocating: the fold parses the digests views carry as text at every step.
  Digest out;
  if (!hex_decode_into(text.substr(kPrefix.size()), out, true)) {
    return rejected("digest '" + std::string(text) + "' must use lowercase hex digits");
  }
  return out;
}

}  // namespace evl
