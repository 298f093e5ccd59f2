#include "projections/internal/registry.h"

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/internal/jcs_writer.h"
#include "projections/internal/store_keys.h"

namespace evl {
namespace {

void copy_string(Json& out, const char* name, const Json& from, std::string_view path) {
  if (auto s = json_string(from, path)) out.set(name, *s);
}

void workload_members(Json& out, const Json& spec) {
  copy_string(out, "operationSpecDigest", spec, "operationSpecDigest");
  if (auto key = correctness_key(spec)) out.set("correctnessKey", digest_text(*key));
  copy_string(out, "comparator", spec, "correctness.comparator");
  copy_string(out, "description", spec, "correctness.description");
  if (const Json* cases = spec.find("cases"); cases != nullptr && cases->is_array()) {
    out.set("cases", cases->as_array().size());
  }
  copy_string(out, "aggregationMetric", spec, "aggregation.metric");
  copy_string(out, "aggregationStatistic", spec, "aggregation.statistic");
}

void kind_members(Json& out, const std::string& kind, const Json& spec) {
  if (kind == "BenchmarkProtocol") {
    copy_string(out, "harness", spec, "harness.name");
    copy_string(out, "harnessVersion", spec, "harness.version");
    copy_string(out, "timer", spec, "measurement.timer");
    copy_string(out, "primaryStatistic", spec, "measurement.primaryStatistic");
    copy_string(out, "correctnessReference", spec, "correctness.reference");
    copy_string(out, "comparator", spec, "correctness.comparator");
    copy_string(out, "family", spec, "comparability.family");
  } else if (kind == "ExecutionEnvironment") {
    copy_string(out, "vendor", spec, "hardware.vendor");
    copy_string(out, "product", spec, "hardware.product");
    copy_string(out, "architecture", spec, "hardware.architecture");
  } else if (kind == "WorkloadCase" || kind == "WorkloadSuite") {
    workload_members(out, spec);
  } else if (kind == "ImplementationRevision") {
    copy_string(out, "repository", spec, "projectRevision.repository");
    copy_string(out, "commit", spec, "projectRevision.commit");
    copy_string(out, "version", spec, "projectRevision.version");
    copy_string(out, "operationSpecDigest", spec, "operation.specDigest");
    copy_string(out, "language", spec, "callable.language");
    out.set("sourceAvailable", implementation_source_available(spec));
  }
}

}  // namespace

Json manifest_summary(const Digest& digest, const Json& manifest, const Json& metadata) {
  Json out = Json::object();
  out.as_object().reserve(12);  // the most a kind has: filled without regrowing
  out.set("digest", digest_text(digest));
  std::string kind = json_string(manifest, "kind").value_or("");
  out.set("kind", kind);
  copy_string(out, "name", metadata, "name");
  copy_string(out, "title", metadata, "title");
  const Json* spec = manifest.find("spec");
  if (spec != nullptr && spec->is_object()) kind_members(out, kind, *spec);
  return out;
}

Hardware summary_hardware(const Json& summary) {
  return Hardware{json_string(summary, "vendor").value_or(""),
                  json_string(summary, "product").value_or(""),
                  json_string(summary, "architecture").value_or("")};
}

ManifestFacts manifest_facts(const Json& summary) {
  const Json* source = summary.find("sourceAvailable");
  return ManifestFacts{summary_hardware(summary), json_string(summary, "operationSpecDigest"),
                       json_string(summary, "correctnessKey"),
                       source != nullptr && source->is_bool() && source->as_bool()};
}

Result<ManifestRecord> parse_manifest_record(const Digest& digest, std::string_view text) {
  Status damaged = corrupt("stored manifest record " + digest_text(digest) +
                           " is damaged; rebuild the projections (evledger rebuild)");
  auto parsed = parse_json(text);
  if (!parsed) return damaged;
  const Json* summary = parsed->find("summary");
  const Json* index = parsed->find("index");
  auto event = parse_digest_text(json_string(*parsed, "event").value_or(""));
  if (summary == nullptr || !summary->is_object() || index == nullptr || !index->is_number() ||
      !(index->as_number() >= 0 && index->as_number() < 9007199254740992.0) || !event) {
    return damaged;
  }
  ManifestRecord record;
  record.digest = digest;
  record.kind = json_string(*summary, "kind").value_or("");
  record.index = static_cast<uint64_t>(index->as_number());
  record.event = *event;
  record.summary = *summary;
  return record;
}

Result<std::optional<ManifestRecord>> find_manifest(const ProjectionStore& store,
                                                    const Digest& digest) {
  auto text = store.get(store_keys::manifest(digest));
  if (!text) return text.error();
  if (!text->has_value()) return std::optional<ManifestRecord>();
  auto record = parse_manifest_record(digest, **text);
  if (!record) return record.error();
  return std::optional<ManifestRecord>(std::move(record).value());
}

std::string manifest_record_text(const ManifestRecord& record) {
  std::string out;
  {
    JcsObjectWriter w(out);
    w.digest("event", record.event);
    w.number("index", static_cast<double>(record.index));
    if (record.summary_text.empty()) {
      w.json("summary", record.summary);
    } else {
      w.key("summary") += record.summary_text;
    }
  }
  return out;
}

}  // namespace evl
