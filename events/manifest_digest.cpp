#include "events/manifest_digest.h"

#include "events/jcs.h"

namespace evl {
namespace {

// The members the digest covers, in JCS order (already sorted by UTF-16 code units).
struct CoveredField {
  const char* name;
  Json::Type type;
  const char* example;
};
constexpr CoveredField kCoveredFields[] = {
    {"apiVersion", Json::Type::kString, "\"kernelindex.dev/v1alpha1\""},
    {"kind", Json::Type::kString, "\"BenchmarkRun\""},
    {"spec", Json::Type::kObject, "{...}"},
};

// "manifest BenchmarkRun sol-submission-17828" or as much of it as the manifest has.
std::string manifest_label(const Json& manifest) {
  std::string label = "manifest";
  const Json* kind = manifest.find("kind");
  if (kind != nullptr && kind->is_string()) label += " " + kind->as_string();
  const Json* metadata = manifest.find("metadata");
  const Json* name = metadata != nullptr ? metadata->find("name") : nullptr;
  if (name != nullptr && name->is_string()) label += " " + name->as_string();
  return label;
}

}  // namespace

Status check_manifest_fields(const Json& manifest) {
  if (!manifest.is_object()) {
    return rejected(std::string("manifest is a JSON ") + json_type_name(manifest.type()) +
                    "; a KernelIndex manifest is an object {apiVersion, kind, metadata, spec}");
  }
  for (const CoveredField& field : kCoveredFields) {
    const Json* value = manifest.find(field.name);
    if (value == nullptr) {
      return rejected(manifest_label(manifest) + " has no \"" + field.name +
                      "\"; its digest covers apiVersion, kind and spec, so add \"" + field.name +
                      "\": " + field.example);
    }
    if (value->type() != field.type) {
      return rejected(manifest_label(manifest) + ": \"" + field.name + "\" is a " +
                      json_type_name(value->type()) + " but must be a " +
                      json_type_name(field.type) + ", e.g. \"" + field.name +
                      "\": " + field.example);
    }
  }
  return Status::ok();
}

std::string manifest_canonical_text(const Json& manifest) {
  std::string out = "{";
  for (const CoveredField& field : kCoveredFields) {
    const Json* value = manifest.find(field.name);
    if (value == nullptr) continue;
    if (out.size() > 1) out.push_back(',');
    out += '"';
    out += field.name;  // plain ASCII: needs no escaping
    out += "\":";
    jcs_append(out, *value);
  }
  out.push_back('}');
  return out;
}

Result<Digest> manifest_digest(const Json& manifest) {
  EVL_RETURN_IF_ERROR(check_manifest_fields(manifest));
  return sha256(as_bytes(manifest_canonical_text(manifest)));
}

Result<CanonicalManifest> canonical_manifest(const Json& manifest) {
  EVL_RETURN_IF_ERROR(check_manifest_fields(manifest));
  CanonicalManifest result;
  result.text = manifest_canonical_text(manifest);
  result.digest = sha256(as_bytes(result.text));
  return result;
}

}  // namespace evl
