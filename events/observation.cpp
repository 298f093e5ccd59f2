#include "events/observation.h"

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

}  // namespace evl
