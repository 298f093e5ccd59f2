// events/manifest_digest.h — the digest that names a KernelIndex manifest.
//
// digest(manifest) = SHA-256 of the JCS text (events/jcs.h) of {apiVersion, kind, spec} taken
// from the manifest; metadata and any other member never count, so retitling a manifest keeps
// its digest. Text form: digest_text() in events/sha256.h gives "sha256:<64 hex>", the form
// BenchmarkRun specs use in protocolDigest, environmentDigest, workloadDigest and
// implementationDigest. See DESIGN.md "KernelIndex manifests and digests".
//
// A manifest must be an object with apiVersion (string), kind (string) and spec (object).
// Errors (kRejected) name the manifest (kind and metadata.name when present), the member and
// the fix. Whether apiVersion, kind and spec follow the KernelIndex schemas is checked
// elsewhere; the digest is defined for any manifest of this shape.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "events/json.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

// Ok when the manifest has the members its digest covers, with the right types.
Status check_manifest_fields(const Json& manifest);

// The JCS text of {apiVersion, kind, spec}: what the ledger stores and hashes. Call
// check_manifest_fields first (or use canonical_manifest): a member that is missing is left
// out of the text rather than reported here.
std::string manifest_canonical_text(const Json& manifest);

// SHA-256 of manifest_canonical_text, after check_manifest_fields.
Result<Digest> manifest_digest(const Json& manifest);

// Both at once, for the importer, which stores the text and needs the digest.
struct CanonicalManifest {
  std::string text;
  Digest digest;
};
Result<CanonicalManifest> canonical_manifest(const Json& manifest);

}  // namespace evl
