#include "projections/digest.h"

#include "events/bytes.h"

namespace evl {

Result<Digest> projection_digest(const ProjectionStore& store) {
  Sha256 hasher;
  hasher.update(kProjectionDigestDomain);
  Status s = store.scan("", [&](std::string_view key, std::string_view value) {
    hasher.update(ByteView(u64_be(key.size())));
    hasher.update(key);
    hasher.update(ByteView(u64_be(value.size())));
    hasher.update(value);
    return true;
  });
  if (!s) return s;
  return hasher.finish();
}

std::string projection_statement(std::string_view origin, uint64_t size, const Digest& digest) {
  std::string out(kProjectionDigestDomain);
  out += origin;
  out += '\n';
  out += std::to_string(size);
  out += '\n';
  out += base64_encode(digest);
  out += '\n';
  return out;
}

}  // namespace evl
