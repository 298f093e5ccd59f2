#include "projections/internal/registry.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>
#include <utility>
#include <variant>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/internal/jcs_writer.h"

namespace evl {
namespace {

// A member of a summary: a string (the manifest's, or one made here), a count or a flag.
using SummaryValue = std::variant<std::string_view, double, bool>;
using AddMember = std::function<void(std::string_view, const SummaryValue&)>;

// The strings a summary makes rather than finds in the manifest; they outlive the visit.
struct MadeStrings {
  std::string digest, correctness_key;
};

void copy_string(const AddMember& add, std::string_view name, const Json& from,
                 std::string_view path) {
  const Json* at = json_path(from, path);
  if (at != nullptr && at->is_string()) add(name, std::string_view(at->as_string()));
}

void workload_members(const AddMember& add, const Json& spec, MadeStrings& made) {
  copy_string(add, "operationSpecDigest", spec, "operationSpecDigest");
  if (auto key = correctness_key(spec)) {
    made.correctness_key = digest_text(*key);
    add("correctnessKey", std::string_view(made.correctness_key));
  }
  copy_string(add, "comparator", spec, "correctness.comparator");
  copy_string(add, "description", spec, "correctness.description");
  if (const Json* cases = spec.find("cases"); cases != nullptr && cases->is_array()) {
    add("cases", static_cast<double>(cases->as_array().size()));
  }
  copy_string(add, "aggregationMetric", spec, "aggregation.metric");
  copy_string(add, "aggregationStatistic", spec, "aggregation.statistic");
}

void kind_members(const AddMember& add, std::string_view kind, const Json& spec,
                  MadeStrings& made) {
  if (kind == "BenchmarkProtocol") {
    copy_string(add, "harness", spec, "harness.name");
    copy_string(add, "harnessVersion", spec, "harness.version");
    copy_string(add, "timer", spec, "measurement.timer");
    copy_string(add, "primaryStatistic", spec, "measurement.primaryStatistic");
    copy_string(add, "correctnessReference", spec, "correctness.reference");
    copy_string(add, "comparator", spec, "correctness.comparator");
    copy_string(add, "family", spec, "comparability.family");
  } else if (kind == "ExecutionEnvironment") {
    copy_string(add, "vendor", spec, "hardware.vendor");
    copy_string(add, "product", spec, "hardware.product");
    copy_string(add, "architecture", spec, "hardware.architecture");
  } else if (kind == "WorkloadCase" || kind == "WorkloadSuite") {
    workload_members(add, spec, made);
  } else if (kind == "ImplementationRevision") {
    copy_string(add, "repository", spec, "projectRevision.repository");
    copy_string(add, "commit", spec, "projectRevision.commit");
    copy_string(add, "version", spec, "projectRevision.version");
    copy_string(add, "operationSpecDigest", spec, "operation.specDigest");
    copy_string(add, "language", spec, "callable.language");
    add("sourceAvailable", implementation_source_available(spec));
  }
}

// Calls `add` for each member of the summary, in no particular order: the one list of them,
// for both forms of the summary below.
void visit_summary(const Digest& digest, const Json& manifest, const Json& metadata,
                   MadeStrings& made, const AddMember& add) {
  made.digest = digest_text(digest);
  add("digest", std::string_view(made.digest));
  const Json* kind = manifest.find("kind");
  const std::string_view kind_name =
      kind != nullptr && kind->is_string() ? std::string_view(kind->as_string()) : "";
  add("kind", kind_name);
  copy_string(add, "name", metadata, "name");
  copy_string(add, "title", metadata, "title");
  const Json* spec = manifest.find("spec");
  if (spec != nullptr && spec->is_object()) kind_members(add, kind_name, *spec, made);
}

}  // namespace

Json manifest_summary(const Digest& digest, const Json& manifest, const Json& metadata) {
  Json out = Json::object();
  out.as_object().reserve(11);  // the most a kind has (a protocol's or a workload's)
  MadeStrings made;
  visit_summary(digest, manifest, metadata, made,
                [&](std::string_view key, const SummaryValue& value) {
                  std::visit([&](const auto& v) { out.set(std::string(key), Json(v)); }, value);
                });
  return out;
}

ManifestSummary summarize_manifest(const Digest& digest, const Json& manifest,
                                   const Json& metadata, bool with_text) {
  // At most 11 members (a protocol's or a workload's): on the stack, sorted by key, written in
  // that order.
  std::array<std::pair<std::string_view, SummaryValue>, 16> members;
  size_t count = 0;
  MadeStrings made;
  visit_summary(digest, manifest, metadata, made,
                [&](std::string_view key, const SummaryValue& value) {
                  EVL_ASSERT(count < members.size());
                  members[count++] = {key, value};
                });
  ManifestSummary out;
  // A kind's members have distinct keys, so the facts do not depend on their order.
  auto text = [&](std::string_view key) -> std::optional<std::string> {
    for (size_t i = 0; i < count; ++i) {
      const auto* s = std::get_if<std::string_view>(&members[i].second);
      if (members[i].first == key && s != nullptr) return std::string(*s);
    }
    return std::nullopt;
  };
  out.facts.hardware = Hardware{text("vendor").value_or(""), text("product").value_or(""),
                                text("architecture").value_or("")};
  out.facts.operation_spec_digest = text("operationSpecDigest");
  out.facts.correctness_key = text("correctnessKey");
  for (size_t i = 0; i < count; ++i) {
    const auto* flag = std::get_if<bool>(&members[i].second);
    if (flag != nullptr && members[i].first == "sourceAvailable") out.facts.source_available = *flag;
  }
  if (!with_text) return out;
  std::sort(members.begin(), members.begin() + count,
            [](const auto& a, const auto& b) { return jcs_key_less(a.first, b.first); });
  out.text.reserve(511);  // most summaries fit (an allocation of 512 bytes), instead of growing
  JcsObjectWriter w(out.text);
  for (size_t i = 0; i < count; ++i) {
    const auto& [key, value] = members[i];
    if (const auto* s = std::get_if<std::string_view>(&value)) {
      w.string(key, *s);
    } else if (const auto* n = std::get_if<double>(&value)) {
      w.number(key, *n);
    } else {
      w.boolean(key, std::get<bool>(value));
    }
  }
  return out;
}

ManifestFacts manifest_facts(const Json& summary) {
  const Json* source = summary.find("sourceAvailable");
  const Hardware hardware{json_string(summary, "vendor").value_or(""),
                          json_string(summary, "product").value_or(""),
                          json_string(summary, "architecture").value_or("")};
  return ManifestFacts{hardware, json_string(summary, "operationSpecDigest"),
                       json_string(summary, "correctnessKey"),
                       source != nullptr && source->is_bool() && source->as_bool()};
}

}  // namespace evl
