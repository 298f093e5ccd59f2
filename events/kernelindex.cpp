#include "events/kernelindex.h"

#include <cmath>
#include <cstdlib>

#include "events/jcs.h"

namespace evl {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Power of ten that turns one of the unit into nanoseconds; -1 for an unknown unit. Both the
// micro sign (U+00B5, the schema's) and the Greek mu (U+03BC) spell microseconds.
int unit_exponent(std::string_view unit) {
  if (unit == "ns") return 0;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 3;
  if (unit == "ms") return 6;
  if (unit == "s") return 9;
  return -1;
}

std::optional<double> latency_text_ns(std::string_view text) {
  size_t i = 0;
  std::string digits;
  while (i < text.size() && is_digit(text[i])) digits.push_back(text[i++]);
  if (digits.empty()) return std::nullopt;
  int fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) {
      digits.push_back(text[i++]);
      ++fraction_digits;
    }
    if (fraction_digits == 0) return std::nullopt;
  }
  if (i < text.size() && is_space(text[i])) ++i;
  int exponent = unit_exponent(text.substr(i));
  if (exponent < 0) return std::nullopt;
  // "<all digits>e<n>" has no decimal point, so strtod reads it the same in every locale, and
  // glibc's strtod rounds correctly: exact for integers below 2^53.
  std::string scientific = digits + "e" + std::to_string(exponent - fraction_digits);
  char* end = nullptr;
  double value = std::strtod(scientific.c_str(), &end);
  if (end != scientific.c_str() + scientific.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<double> number_at(const Json& object, std::string_view key) {
  const Json* value = object.find(key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->as_number();
}

std::optional<PrimaryMeasurement> timing_primary(const Json& timing) {
  auto statistic = json_string(timing, "primaryStatistic");
  const Json* latency = timing.find("latencyNs");
  if (!statistic || latency == nullptr || !latency->is_object()) return std::nullopt;
  const bool mean = *statistic == "mean";
  const Json* preferred = latency->find(mean ? "mean" : "median");
  const Json* other = latency->find(mean ? "median" : "mean");
  std::optional<double> value = preferred != nullptr ? latency_ns(*preferred) : std::nullopt;
  if (!value && other != nullptr) value = latency_ns(*other);
  if (!value) return std::nullopt;
  return PrimaryMeasurement{"latency", *statistic, "ns", *value};
}

std::optional<PrimaryMeasurement> first_measurement(const Json& run_spec) {
  const Json* measurements = run_spec.find("measurements");
  if (measurements == nullptr || !measurements->is_array() || measurements->as_array().empty()) {
    return std::nullopt;
  }
  const Json& first = measurements->as_array().front();
  auto metric = json_string(first, "metric");
  auto statistic = json_string(first, "statistic");
  auto unit = json_string(first, "unit");
  auto value = number_at(first, "value");
  if (!metric || !statistic || !unit || !value) return std::nullopt;
  return PrimaryMeasurement{*metric, *statistic, *unit, *value};
}

bool has_string(const Json& value, std::string_view path) {
  auto s = json_string(value, path);
  return s && !s->empty();
}

}  // namespace

const Json* json_path(const Json& value, std::string_view dotted_path) {
  const Json* at = &value;
  while (at != nullptr) {
    size_t dot = dotted_path.find('.');
    at = at->find(dotted_path.substr(0, dot));
    if (dot == std::string_view::npos) return at;
    dotted_path.remove_prefix(dot + 1);
  }
  return nullptr;
}

std::optional<std::string> json_string(const Json& value, std::string_view dotted_path) {
  const Json* at = json_path(value, dotted_path);
  if (at == nullptr || !at->is_string()) return std::nullopt;
  return at->as_string();
}

std::optional<double> latency_ns(const Json& value) {
  if (value.is_number()) {
    double v = value.as_number();
    if (!(v >= 0)) return std::nullopt;
    return v;
  }
  if (value.is_string()) return latency_text_ns(value.as_string());
  return std::nullopt;
}

std::optional<PrimaryMeasurement> primary_measurement(const Json& run_spec) {
  if (const Json* timing = run_spec.find("timing"); timing != nullptr && timing->is_object()) {
    if (auto primary = timing_primary(*timing)) return primary;
  }
  return first_measurement(run_spec);
}

std::string comparison_metric(const std::optional<PrimaryMeasurement>& primary) {
  if (!primary) return "none";
  return primary->metric + ":" + primary->statistic + ":" + primary->unit;
}

std::optional<Digest> correctness_key(const Json& workload_spec) {
  const Json* correctness = workload_spec.find("correctness");
  if (correctness == nullptr) return std::nullopt;
  Json preimage = Json::object();
  preimage.set("correctness", *correctness);
  return sha256(as_bytes(jcs_serialize(preimage)));
}

Json comparison_preimage(const ComparisonInputs& in) {
  Json preimage = Json::object();
  preimage.set("v", 1);
  preimage.set("operation", in.operation);
  preimage.set("workload", in.workload);
  preimage.set("protocol", in.protocol);
  preimage.set("environment", in.environment);
  preimage.set("correctness", in.correctness);
  preimage.set("metric", in.metric);
  return preimage;
}

std::string comparison_preimage_text(const ComparisonInputs& in) {
  // Written directly with its keys in JCS order: the fold computes a key for every run view it
  // stores. The tests compare it with jcs_serialize(comparison_preimage(in)).
  const std::pair<std::string_view, const std::string*> members[] = {
      {"correctness", &in.correctness}, {"environment", &in.environment},
      {"metric", &in.metric},           {"operation", &in.operation},
      {"protocol", &in.protocol}};
  std::string text;
  text.reserve(511);  // six digests and a metric name: one allocation
  text += '{';
  for (const auto& [key, value] : members) {
    jcs_append_string(text, key);
    text += ':';
    jcs_append_string(text, *value);
    text += ',';
  }
  text += "\"v\":1,\"workload\":";
  jcs_append_string(text, in.workload);
  text += '}';
  return text;
}

Digest comparison_key(const ComparisonInputs& in) {
  return sha256(as_bytes(comparison_preimage_text(in)));
}

std::optional<ComparisonInputs> comparison_inputs(const Json& run_spec, const Json& workload_spec) {
  auto operation = json_string(workload_spec, "operationSpecDigest");
  auto workload = json_string(run_spec, "workloadDigest");
  auto protocol = json_string(run_spec, "protocolDigest");
  auto environment = json_string(run_spec, "environmentDigest");
  auto correctness = correctness_key(workload_spec);
  if (!operation || !workload || !protocol || !environment || !correctness) return std::nullopt;
  return ComparisonInputs{*operation,
                          *workload,
                          *protocol,
                          *environment,
                          digest_text(*correctness),
                          comparison_metric(primary_measurement(run_spec))};
}

SourceNativeMetrics source_native_metrics(const Json& run_spec) {
  SourceNativeMetrics out;
  const Json* metrics = json_path(run_spec, "sourceNative.metrics");
  if (metrics == nullptr || !metrics->is_object()) return out;
  out.sol_score = number_at(*metrics, "sol_score");
  out.speedup = number_at(*metrics, "avg_speedup");
  out.cases_faster = number_at(*metrics, "fast_1_count");
  out.cases_total = number_at(*metrics, "fast_1_total");
  return out;
}

std::optional<Hardware> environment_hardware(const Json& environment_spec) {
  auto product = json_string(environment_spec, "hardware.product");
  auto architecture = json_string(environment_spec, "hardware.architecture");
  if (!product || !architecture) return std::nullopt;
  return Hardware{json_string(environment_spec, "hardware.vendor").value_or(""), *product,
                  *architecture};
}

bool implementation_source_available(const Json& implementation_spec) {
  if (has_string(implementation_spec, "projectRevision.repository") &&
      has_string(implementation_spec, "projectRevision.commit")) {
    return true;
  }
  if (has_string(implementation_spec, "source.contentDigest")) return true;
  const Json* variants = implementation_spec.find("buildVariants");
  if (variants == nullptr || !variants->is_array()) return false;
  for (const Json& variant : variants->as_array()) {
    if (has_string(variant, "install.repository") && has_string(variant, "install.commit")) {
      return true;
    }
  }
  return false;
}

}  // namespace evl
