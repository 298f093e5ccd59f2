#include "events/sha256.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>

namespace evl {

Digest sha256(ByteView data) {
  Digest out;
  SHA256(data.data(), data.size(), out.data());
  return out;
}

struct Sha256::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  EVL_ASSERT(state_->ctx != nullptr);
  EVL_ASSERT(EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) == 1);
}
Sha256::~Sha256() = default;

Sha256& Sha256::update(ByteView data) {
  EVL_ASSERT(EVP_DigestUpdate(state_->ctx, data.data(), data.size()) == 1);
  return *this;
}

Digest Sha256::finish() {
  Digest out;
  unsigned int len = 0;
  EVL_ASSERT(EVP_DigestFinal_ex(state_->ctx, out.data(), &len) == 1 && len == out.size());
  return out;
}

std::string digest_text(const Digest& digest) { return "sha256:" + hex_encode(digest); }

Result<Digest> parse_digest_text(std::string_view text) {
  constexpr std::string_view kPrefix = "sha256:";
  if (text.size() != kPrefix.size() + 64 || text.substr(0, kPrefix.size()) != kPrefix) {
    return rejected("'" + std::string(text) + "' is not a digest of the form sha256:<64 hex>");
  }
  for (char c : text.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return rejected("digest '" + std::string(text) + "' must use lowercase hex digits");
    }
  }
  auto bytes = hex_decode(text.substr(kPrefix.size()));
  if (!bytes) return bytes.error();
  Digest out;
  std::memcpy(out.data(), bytes->data(), out.size());
  return out;
}

}  // namespace evl
