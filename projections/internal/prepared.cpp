#include "projections/internal/prepared.h"

#include <utility>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/kernelindex.h"
#include "events/observation.h"

namespace evl {
namespace {

Json parse_metadata(const std::string& text) {
  if (text.empty()) return Json();
  auto parsed = parse_json(text);
  if (!parsed || !parsed->is_object()) return Json();
  return std::move(*parsed);
}

void add_artifact(Json& artifacts, const Json& spec, std::string_view path, const char* kind) {
  const Json* at = json_path(spec, path);
  auto uri = at != nullptr ? json_string(*at, "uri") : std::nullopt;
  if (!uri) return;
  Json a = Json::object();
  a.set("kind", kind);
  a.set("uri", *uri);
  a.set("digest", at->find("digest") != nullptr ? *at->find("digest") : Json());
  a.set("raw", true);
  artifacts.as_array().push_back(std::move(a));
}

Json run_artifacts(const Json& spec) {
  Json artifacts = Json::array();
  add_artifact(artifacts, spec, "evidence.logs", "logs");
  add_artifact(artifacts, spec, "evidence.rawSamples", "rawSamples");
  add_artifact(artifacts, spec, "timing.rawSamples", "timingRawSamples");
  if (auto repository = json_string(spec, "evidence.harness.repository")) {
    Json a = Json::object();
    a.set("kind", "harness");
    a.set("repository", *repository);
    a.set("commit", json_string(spec, "evidence.harness.commit").value_or(""));
    a.set("raw", false);
    artifacts.as_array().push_back(std::move(a));
  }
  return artifacts;
}

// A view from the observed manifest alone.
RunView new_run_view(const Digest& run, const Json& manifest, const Json& metadata) {
  static const Json kEmpty = Json::object();
  const Json* spec_member = manifest.find("spec");
  const Json& spec = spec_member != nullptr && spec_member->is_object() ? *spec_member : kEmpty;
  RunView v;
  v.run = run;
  v.name = json_string(metadata, "name").value_or("");
  v.title = json_string(metadata, "title").value_or("");
  v.benchmark = json_string(spec, "sourceNative.benchmark").value_or("");
  v.source = json_string(spec, "sourceNative.source").value_or("");
  v.external_id = json_string(spec, "sourceNative.externalId").value_or("");
  v.status = json_string(spec, "status").value_or("");
  v.observed_at = json_string(spec, "observedAt").value_or("");
  v.protocol_digest = json_string(spec, "protocolDigest").value_or("");
  v.environment_digest = json_string(spec, "environmentDigest").value_or("");
  v.workload_digest = json_string(spec, "workloadDigest").value_or("");
  v.implementation_digest = json_string(spec, "implementationDigest").value_or("");
  v.primary = primary_measurement(spec);
  v.source_native = source_native_metrics(spec);
  if (const Json* c = spec.find("correctness")) v.correctness = *c;
  v.artifacts = run_artifacts(spec);
  return v;
}

}  // namespace

PreparedManifest prepare_manifest(const ManifestText& text, bool observation,
                                  const Digest* digest, bool summary_text) {
  PreparedManifest out;
  out.digest = digest != nullptr ? *digest : sha256(as_bytes(text.canonical));
  auto manifest = parse_json(text.canonical);
  if (!manifest) {
    out.parse_error = manifest.error().message();
    return out;
  }
  out.parsed = true;
  out.object = manifest->is_object();
  if (!out.object) return out;
  out.kind = json_string(*manifest, "kind").value_or("");
  const bool view = observation && out.kind == "BenchmarkRun";
  // The metadata (name, title) goes into the summary's text and a view only.
  const Json metadata = summary_text || view ? parse_metadata(text.metadata) : Json();
  ManifestSummary summary = summarize_manifest(out.digest, *manifest, metadata, summary_text);
  out.summary_text = std::move(summary.text);
  out.facts = std::move(summary.facts);
  if (view) out.view = new_run_view(out.digest, *manifest, metadata);
  return out;
}

std::optional<Registration> registered(const EventBody& body, uint64_t index, bool is_void) {
  if (is_void) return std::nullopt;
  PreparedManifest p;
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
    p = prepare_manifest(m->manifest, false, nullptr, true);
    if (!p.object) return std::nullopt;
  } else if (const auto* o = std::get_if<Observation>(&body.payload)) {
    p = prepare_manifest(o->manifest, false, nullptr, true);  // no view: only the kind
    if (!p.parsed || p.kind != "BenchmarkRun") return std::nullopt;
  } else {
    return std::nullopt;
  }
  return Registration{index, std::move(p.facts), std::move(p.summary_text)};
}

void EventManifests::add(uint64_t index, const EventBody& body, bool is_void) {
  if (const ManifestText* text = registered_manifest(body)) {
    carriers_.push_back({index, sha256(as_bytes(text->canonical)), &body, is_void});
  }
}

Result<std::optional<Registration>> EventManifests::registered(const Digest& digest,
                                                               uint64_t before) const {
  for (const Carrier& c : carriers_) {
    if (c.index >= before) break;
    if (c.digest != digest) continue;
    if (auto r = evl::registered(*c.body, c.index, c.is_void)) return r;
  }
  return std::optional<Registration>();
}

std::unique_ptr<PreparedManifest> prepare_event(const EventBody& body, const Digest* digest) {
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
    return std::make_unique<PreparedManifest>(prepare_manifest(m->manifest, false, digest));
  }
  if (const auto* o = std::get_if<Observation>(&body.payload)) {
    return std::make_unique<PreparedManifest>(prepare_manifest(o->manifest, true, digest));
  }
  return nullptr;
}

}  // namespace evl
