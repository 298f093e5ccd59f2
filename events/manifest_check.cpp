#include "events/manifest_check.h"

#include <array>
#include <cmath>

#include "events/jcs.h"
#include "events/kernelindex.h"
#include "events/manifest_digest.h"
#include "events/utf8.h"

namespace evl {
namespace {

constexpr std::array<std::string_view, 8> kKinds = {
    "SoftwareProject",    "OperationSpec",         "WorkloadCase",      "WorkloadSuite",
    "ImplementationRevision", "BenchmarkProtocol", "ExecutionEnvironment", "BenchmarkRun"};

// KernelIndex's serving kinds: known, deliberately not accepted (see the header).
constexpr std::array<std::string_view, 5> kServingKinds = {
    "ModelRevision", "ServingConfiguration", "ServingRun", "ServingStackRevision",
    "ServingWorkload"};

constexpr std::array<std::string_view, 13> kRunStatuses = {
    "passed",        "incorrect_shape",   "incorrect_dtype",  "incorrect_numerical",
    "compile_error", "runtime_error",     "timeout",          "resource_exceeded",
    "invalid_reference", "policy_violation", "suspected_reward_hack", "incomplete_evidence",
    "revoked"};

constexpr std::array<std::string_view, 4> kTopLevel = {"apiVersion", "kind", "metadata", "spec"};

// The top level of each kind's spec, from the v1alpha1 schemas (additionalProperties: false).
struct SpecShape {
  std::string_view kind;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
};

const std::vector<SpecShape>& spec_shapes() {
  static const std::vector<SpecShape> shapes = {
      {"SoftwareProject", {"name"}, {"kind", "repository", "homepage", "host", "packages"}},
      {"OperationSpec", {"family", "axes", "inputs", "outputs", "semantics"}, {"reference"}},
      {"WorkloadCase", {"operationSpecDigest", "axes", "tensors", "correctness"}, {"scalars"}},
      {"WorkloadSuite", {"operationSpecDigest", "cases", "correctness", "aggregation"}, {}},
      {"ImplementationRevision",
       {"projectRevision", "operation", "callable", "support", "licensing"},
       {"source", "buildVariants"}},
      {"BenchmarkProtocol", {"harness", "measurement"},
       {"correctness", "devicePolicy", "comparability"}},
      {"ExecutionEnvironment", {"hardware", "software"}, {"settings", "imageDigest"}},
      {"BenchmarkRun",
       {"implementationDigest", "workloadDigest", "protocolDigest", "environmentDigest", "status",
        "observedAt"},
       {"correctness", "timing", "measurements", "sourceNative", "evidence"}},
  };
  return shapes;
}

template <size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view value) {
  for (auto v : list) {
    if (v == value) return true;
  }
  return false;
}

std::string join(std::span<const std::string_view> list) {
  std::string out;
  for (auto v : list) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

// A value for a message: its JSON text, cut to about 80 characters.
std::string shown(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  std::string text = jcs_serialize(value);
  if (utf8_length(text) <= 80) return text;
  size_t cut = 0;
  for (size_t chars = 0; chars < 77 && cut < text.size(); ++chars) {
    do {
      ++cut;
    } while (cut < text.size() && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80);
  }
  return text.substr(0, cut) + "...";
}

// "an array", "a string", ... for messages.
std::string a_type(Json::Type type) {
  std::string name = json_type_name(type);
  return (name == "array" || name == "object" ? "an " : name == "null" ? "" : "a ") + name;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_digest_text(std::string_view s) {
  if (s.size() != 71 || s.substr(0, 7) != "sha256:") return false;
  for (char c : s.substr(7)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// ^[a-z0-9][first-rest]*$ with the given extra characters allowed after the first.
bool is_slug(std::string_view s, std::string_view extra, size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              (i > 0 && extra.find(c) != std::string_view::npos);
    if (!ok) return false;
  }
  return true;
}

class Checker {
 public:
  Checker(const Json& manifest, CheckedManifest& out) : manifest_(manifest), out_(out) {}

  void run();

 private:
  void problem(std::string rule, const std::string& what, const std::string& fix) {
    out_.problems.push_back({rule, out_.label + ": " + what + " [" + rule + "]; " + fix});
  }
  void check_top_level();
  void check_metadata();
  void check_spec_shape(const Json& spec);
  void check_digests(const Json& value, const std::string& path);
  void check_digest_value(const Json& value, const std::string& path);
  void check_run(const Json& spec);
  void check_latency(const Json& spec);
  void check_primary(const Json& spec);
  void check_size();

  const Json& manifest_;
  CheckedManifest& out_;
  bool kind_known_ = false;
};

void Checker::run() {
  if (!manifest_.is_object()) {
    problem("object", std::string("the document is a JSON ") + json_type_name(manifest_.type()),
            "a KernelIndex manifest is an object {apiVersion, kind, metadata, spec}");
    return;
  }
  check_top_level();
  check_metadata();
  const Json* spec = manifest_.find("spec");
  if (spec == nullptr || !spec->is_object()) {
    problem("spec",
            spec == nullptr ? std::string("spec is missing")
                            : "spec is " + a_type(spec->type()),
            "give the manifest a spec object as its kind's schema describes");
  } else {
    if (kind_known_) check_spec_shape(*spec);
    check_digests(*spec, "spec");
    if (out_.kind == "BenchmarkRun") check_run(*spec);
  }
  if (out_.problems.empty()) check_size();
}

void Checker::check_top_level() {
  for (const auto& [key, value] : manifest_.as_object()) {
    if (!contains(kTopLevel, key)) {
      problem("top-level", "unknown top-level member \"" + key + "\"",
              "a manifest has only apiVersion, kind, metadata and spec; remove it or move it "
              "into spec or metadata as the schema allows");
    }
  }
  const Json* api = manifest_.find("apiVersion");
  if (api == nullptr || !api->is_string() || api->as_string() != kManifestApiVersion) {
    problem("api-version",
            api == nullptr ? std::string("apiVersion is missing")
                           : "apiVersion is " + shown(*api),
            "set \"apiVersion\": \"" + std::string(kManifestApiVersion) + "\"");
  }
  const Json* kind = manifest_.find("kind");
  std::string fix = "set kind to one of " + join(manifest_kinds());
  if (kind == nullptr || !kind->is_string()) {
    problem("kind", kind == nullptr ? std::string("kind is missing") : "kind is " + shown(*kind),
            fix);
  } else if (contains(kServingKinds, kind->as_string())) {
    problem("kind", "kind " + kind->as_string() + " is a KernelIndex serving kind",
            "evledger takes the benchmark kinds only (" + join(manifest_kinds()) +
                "); leave serving manifests out of the import");
  } else if (!contains(kKinds, kind->as_string())) {
    problem("kind", "kind is " + shown(*kind), fix);
  } else {
    kind_known_ = true;
  }
}

void Checker::check_metadata() {
  const Json* metadata = manifest_.find("metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    problem("metadata",
            metadata == nullptr ? std::string("metadata is missing")
                                : "metadata is " + a_type(metadata->type()),
            "add \"metadata\": {\"name\": \"...\"} (metadata never counts in the digest)");
    return;
  }
  const Json* name = metadata->find("name");
  const std::string fix =
      "set metadata.name to 1..200 characters of a-z, 0-9, '.', '_' or '-', starting with a "
      "letter or digit";
  if (name == nullptr) {
    problem("metadata-name", "metadata.name is missing", fix);
  } else if (!name->is_string() || !is_slug(name->as_string(), "._-", 200)) {
    problem("metadata-name", "metadata.name is " + shown(*name), fix);
  }
}

void Checker::check_spec_shape(const Json& spec) {
  for (const SpecShape& shape : spec_shapes()) {
    if (shape.kind != out_.kind) continue;
    for (auto key : shape.required) {
      if (spec.find(key) == nullptr) {
        problem("spec-required", "spec." + std::string(key) + " is missing",
                "a " + out_.kind + " needs spec." + std::string(key) + " (required: " +
                    join(shape.required) + ")");
      }
    }
    for (const auto& [key, value] : spec.as_object()) {
      bool known = false;
      for (auto k : shape.required) known = known || k == key;
      for (auto k : shape.optional) known = known || k == key;
      if (!known) {
        std::vector<std::string_view> all = shape.required;
        all.insert(all.end(), shape.optional.begin(), shape.optional.end());
        problem("spec-member", "spec." + key + " is not a member of a " + out_.kind,
                "remove it; the schema defines " + join(all));
      }
    }
  }
}

void Checker::check_digest_value(const Json& value, const std::string& path) {
  if (value.is_string() && is_digest_text(value.as_string())) return;
  problem("digest-format", path + " is " + shown(value),
          "a reference is \"sha256:\" followed by 64 lowercase hex digits: write the referenced "
          "manifest's or artifact's digest as evledger prints it");
}

void Checker::check_digests(const Json& value, const std::string& path) {
  if (value.is_array()) {
    const auto& items = value.as_array();
    for (size_t i = 0; i < items.size(); ++i) {
      check_digests(items[i], path + "[" + std::to_string(i) + "]");
    }
    return;
  }
  if (!value.is_object()) return;
  for (const auto& [key, member] : value.as_object()) {
    std::string member_path = path + "." + key;
    if (key == "digest" || (key.size() > 6 && ends_with(key, "Digest"))) {
      check_digest_value(member, member_path);
    } else if (key.size() > 7 && ends_with(key, "Digests")) {
      if (!member.is_array()) {
        problem("digest-format", member_path + " is " + shown(member),
                "a digest list is an array of \"sha256:<64 lowercase hex>\" strings");
        continue;
      }
      const auto& items = member.as_array();
      for (size_t i = 0; i < items.size(); ++i) {
        check_digest_value(items[i], member_path + "[" + std::to_string(i) + "]");
      }
    } else {
      check_digests(member, member_path);
    }
  }
}

void Checker::check_run(const Json& spec) {
  if (const Json* status = spec.find("status"); status != nullptr) {
    if (!status->is_string() || !contains(kRunStatuses, status->as_string())) {
      problem("run-status", "spec.status is " + shown(*status),
              "use one of " + join(run_statuses()));
    }
  }
  if (const Json* at = spec.find("observedAt"); at != nullptr) {
    std::optional<int64_t> ms;
    if (at->is_string()) ms = parse_utc_time_ms(at->as_string());
    if (!ms) {
      problem("observed-at", "spec.observedAt is " + shown(*at),
              "write an RFC 3339 UTC time such as \"2026-07-07T02:26:56.362Z\"");
    } else {
      out_.observed_at_ms = *ms;
    }
  }
  check_latency(spec);
  check_primary(spec);
  const Json* native = spec.find("sourceNative");
  if (native == nullptr) {
    out_.use = ManifestUse::kRerunOnly;
    return;
  }
  out_.use = ManifestUse::kObservation;
  const Json* source = native->is_object() ? native->find("source") : nullptr;
  if (source == nullptr || !source->is_string() || !is_slug(source->as_string(), "-", 100)) {
    problem("source-slug",
            source == nullptr ? std::string("spec.sourceNative.source is missing")
                              : "spec.sourceNative.source is " + shown(*source),
            "name the reporting source with a slug of a-z, 0-9 and '-' (at most 100), e.g. "
            "\"sol-execbench\"");
    return;
  }
  out_.source = source->as_string();
}

void Checker::check_latency(const Json& spec) {
  const Json* timing = spec.find("timing");
  const Json* latency = timing != nullptr ? timing->find("latencyNs") : nullptr;
  if (latency == nullptr || !latency->is_object()) return;
  const std::string fix =
      "give an integer count of nanoseconds (0..2^53-1) or a duration text like \"159.785 us\" "
      "that is a whole number of nanoseconds";
  for (const auto& [key, value] : latency->as_object()) {
    std::string path = "spec.timing.latencyNs." + key;
    if (key == "confidence95" && value.is_array()) {
      const auto& bounds = value.as_array();
      for (size_t i = 0; i < bounds.size(); ++i) {
        if (!whole_latency_ns(bounds[i])) {
          problem("latency-ns", path + "[" + std::to_string(i) + "] is " + shown(bounds[i]), fix);
        }
      }
    } else if (!whole_latency_ns(value)) {
      problem("latency-ns", path + " is " + shown(value), fix);
    }
  }
}

// The primary measurement ranks the run in its group (lower first) and divides a rerun's
// value into a verdict's ratio: 0 (a harness that timed nothing, -0, 1e-999 before parse_json
// refused it) or a negative value would lead every group, and a rerun of 0 would confirm any
// run. The schemas allow it (latencyNs minimum 0, a measurement's value any number); evledger
// refuses it, as the schemas' counts (samples, sampleCount) take exclusiveMinimum 0.
void Checker::check_primary(const Json& spec) {
  const auto primary = primary_measurement(spec);
  if (!primary || primary->value > 0) return;
  const std::string value = primary->value == 0 && std::signbit(primary->value)
                                ? std::string("-0")
                                : jcs_serialize(Json(primary->value));
  problem("primary-value",
          "the primary measurement (" + comparison_metric(primary) + ") is " + value,
          "a primary measurement must be positive, since lower values rank first: report what "
          "was measured, or leave spec.timing and spec.measurements out when nothing was");
}

void Checker::check_size() {
  auto canonical = canonical_manifest(manifest_);
  if (!canonical) {
    problem("spec", canonical.error().message(), "fix the manifest's apiVersion, kind and spec");
    return;
  }
  std::string metadata = jcs_serialize(*manifest_.find("metadata"));
  size_t total = canonical->text.size() + metadata.size();
  if (total > kMaxManifestTextBytes) {
    problem("entry-size",
            "the canonical manifest (" + std::to_string(canonical->text.size()) +
                " bytes) and its metadata (" + std::to_string(metadata.size()) + " bytes) take " +
                std::to_string(total) + " bytes; a signed entry holds at most " +
                std::to_string(kMaxEntryBytes) + " bytes, which leaves " +
                std::to_string(kMaxManifestTextBytes) + " for manifest text",
            "move bulky data (samples, logs, case lists) into artifacts referenced by digest");
    return;
  }
  out_.text.canonical = std::move(canonical->text);
  out_.text.metadata = std::move(metadata);
  out_.digest = canonical->digest;
}

std::string make_label(const Json& manifest, uint64_t index, std::string_view where,
                       CheckedManifest& out) {
  if (manifest.is_object()) {
    const Json* kind = manifest.find("kind");
    if (kind != nullptr && kind->is_string()) out.kind = kind->as_string();
    const Json* metadata = manifest.find("metadata");
    const Json* name = metadata != nullptr ? metadata->find("name") : nullptr;
    if (name != nullptr && name->is_string()) out.name = name->as_string();
  }
  std::string label = "document " + std::to_string(index) + " (";
  if (!where.empty()) label += std::string(where) + "; ";
  label += out.kind.empty() ? "no kind" : out.kind;
  label += out.name.empty() ? ", no metadata.name" : " " + out.name;
  label += ")";
  return label;
}

bool digits(std::string_view s, size_t pos, size_t n, int& value) {
  if (pos + n > s.size()) return false;
  value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
  }
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

std::span<const std::string_view> manifest_kinds() { return kKinds; }
std::span<const std::string_view> run_statuses() { return kRunStatuses; }

const char* manifest_use_name(ManifestUse use) {
  switch (use) {
    case ManifestUse::kManifest: return "manifest";
    case ManifestUse::kObservation: return "observation";
    case ManifestUse::kRerunOnly: return "rerun-only";
  }
  return "?";
}

std::optional<int64_t> parse_utc_time_ms(std::string_view s) {
  int year, month, day, hour, minute, second = 0;
  if (!digits(s, 0, 4, year) || s.size() < 17 || s[4] != '-' || !digits(s, 5, 2, month) ||
      s[7] != '-' || !digits(s, 8, 2, day) || s[10] != 'T' || !digits(s, 11, 2, hour) ||
      s[13] != ':' || !digits(s, 14, 2, minute)) {
    return std::nullopt;
  }
  size_t pos = 16;
  int64_t millis = 0;
  if (s[pos] == ':') {
    if (!digits(s, pos + 1, 2, second)) return std::nullopt;
    pos += 3;
    if (pos < s.size() && s[pos] == '.') {
      size_t start = ++pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        if (pos - start < 3) millis = millis * 10 + (s[pos] - '0');
        ++pos;
      }
      if (pos == start) return std::nullopt;
      for (size_t n = pos - start; n < 3; ++n) millis *= 10;
    }
  }
  if (pos + 1 != s.size() || s[pos] != 'Z') return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000 + millis;
}

std::optional<uint64_t> whole_latency_ns(const Json& value) {
  constexpr uint64_t kMaxSafe = (uint64_t{1} << 53) - 1;
  if (value.is_number()) {
    double v = value.as_number();
    if (!(v >= 0) || v > static_cast<double>(kMaxSafe) || std::floor(v) != v) return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  if (!value.is_string()) return std::nullopt;
  std::string_view s = value.as_string();
  size_t pos = 0;
  uint64_t whole = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    if (whole > kMaxSafe) return std::nullopt;
    whole = whole * 10 + static_cast<uint64_t>(s[pos++] - '0');
  }
  if (pos == 0) return std::nullopt;
  std::string_view fraction;
  if (pos < s.size() && s[pos] == '.') {
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
    fraction = s.substr(start, pos - start);
  }
  if (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  std::string_view unit = s.substr(pos);
  int scale;  // decimal digits from the unit to ns
  if (unit == "ns") scale = 0;
  else if (unit == "us" || unit == "\xC2\xB5s") scale = 3;
  else if (unit == "ms") scale = 6;
  else if (unit == "s") scale = 9;
  else return std::nullopt;
  // Digits of the fraction beyond `scale` must all be zero: the value is whole in ns.
  uint64_t ns = whole;
  for (int i = 0; i < scale; ++i) {
    if (ns > kMaxSafe) return std::nullopt;
    ns = ns * 10 + (static_cast<size_t>(i) < fraction.size()
                        ? static_cast<uint64_t>(fraction[i] - '0') : 0);
  }
  for (size_t i = static_cast<size_t>(scale); i < fraction.size(); ++i) {
    if (fraction[i] != '0') return std::nullopt;
  }
  if (ns > kMaxSafe) return std::nullopt;
  return ns;
}

CheckedManifest check_manifest(const Json& manifest, uint64_t index, std::string_view where) {
  CheckedManifest out;
  out.label = make_label(manifest, index, where, out);
  Checker(manifest, out).run();
  return out;
}

}  // namespace evl
