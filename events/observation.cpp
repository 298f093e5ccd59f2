#include "events/observation.h"

#include "events/jcs.h"
#include "events/json.h"

namespace evl {

Result<std::string> observation_source(const Observation& observation) {
  auto doc = parse_json(observation.manifest.canonical);
  if (!doc) return doc.error().with_context("observation manifest");
  if (!doc->is_object()) return rejected("observation manifest is not a JSON object");
  const Json* kind = doc->find("kind");
  if (kind == nullptr || !kind->is_string() || kind->as_string() != "BenchmarkRun") {
    return rejected("an observation carries a BenchmarkRun manifest");
  }
  const Json* spec = doc->find("spec");
  if (spec == nullptr || !spec->is_object()) return rejected("observation manifest has no spec");
  const Json* native = spec->find("sourceNative");
  if (native == nullptr || !native->is_object()) {
    return rejected("an observation's BenchmarkRun needs spec.sourceNative (a run without it "
                    "is only accepted as the manifest of a rerun)");
  }
  const Json* source = native->find("source");
  if (source == nullptr || !source->is_string() || source->as_string().empty()) {
    return rejected("observation has no spec.sourceNative.source slug");
  }
  return source->as_string();
}

Result<std::string> scope_subject(const EventBody& body) {
  if (const auto* obs = std::get_if<Observation>(&body.payload)) return observation_source(*obs);
  return std::string();
}

const ManifestText* registered_manifest(const EventBody& body) {
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) return &m->manifest;
  if (const auto* o = std::get_if<Observation>(&body.payload)) return &o->manifest;
  return nullptr;
}

namespace {

Status check_canonical(const std::string& text, const std::string& what) {
  Status canonical = jcs_check_canonical(text);
  if (!canonical.is_ok()) {
    return rejected(what + " is not RFC 8785 canonical JSON (keys sorted by UTF-16 code units, "
                    "no whitespace, ECMAScript numbers); evledger import canonicalizes manifests: " +
                    canonical.message());
  }
  return Status::ok();
}

Status check_text(const ManifestText& m, const std::string& what) {
  EVL_RETURN_IF_ERROR(check_canonical(m.canonical, what));
  if (!m.metadata.empty()) EVL_RETURN_IF_ERROR(check_canonical(m.metadata, what + " metadata"));
  return Status::ok();
}

}  // namespace

Status check_manifest_texts(const EventBody& body) {
  if (const auto* m = registered_manifest(body)) {
    return check_text(*m, std::string(event_kind_name(body.kind())) + " manifest");
  }
  if (const auto* r = std::get_if<Rerun>(&body.payload)) return check_text(r->run, "rerun manifest");
  return Status::ok();
}

Status check_log_entry(ByteView entry, CheckedEntry& checked, std::string& subject) {
  auto decoded = check_entry(entry);
  if (!decoded) return decoded.error();
  checked = std::move(*decoded);
  auto named = scope_subject(checked.body);
  if (!named) return named.error();
  subject = std::move(*named);
  return check_manifest_texts(checked.body);
}

}  // namespace evl
