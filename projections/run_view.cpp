#include "projections/run_view.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "events/jcs.h"
#include "projections/internal/jcs_writer.h"

namespace evl {
namespace {

constexpr std::array<const char*, 4> kEvidenceNames = {"reported", "reproducible", "verified",
                                                       "replicated"};
constexpr std::array<const char*, 5> kVerdictNames = {"pending", "confirmed", "contradicted",
                                                      "inconclusive", "refuted"};

Json opt_string(const std::string& s) { return s.empty() ? Json() : Json(s); }
Json opt_string(const std::optional<std::string>& s) { return s ? Json(*s) : Json(); }
Json opt_number(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

Json hardware_json(const std::optional<Hardware>& hw) {
  if (!hw) return Json();
  Json out = Json::object();
  out.set("vendor", hw->vendor);
  out.set("product", hw->product);
  out.set("architecture", hw->architecture);
  return out;
}

}  // namespace

Json rerun_record_json(const RerunRecord& r) {
  Json out = Json::object();
  out.set("index", r.index);
  out.set("event", digest_text(r.event));
  out.set("manifest", digest_text(r.manifest));
  out.set("runner", r.runner);
  out.set("owner", opt_string(r.owner));
  out.set("host", opt_string(r.host));
  out.set("status", r.status);
  out.set("primary", primary_json(r.primary));
  out.set("environmentDigest", opt_string(r.environment_digest));
  out.set("hardware", hardware_json(r.hardware));
  out.set("toleranceMilli", r.tolerance_milli);
  out.set("cases", opt_string(r.cases));
  out.set("void", opt_string(r.void_cause));
  out.set("verdict", verdict_name(r.verdict));
  out.set("ratio", opt_number(r.ratio));
  return out;
}

Json attestation_record_json(const AttestationRecord& a) {
  Json out = Json::object();
  out.set("index", a.index);
  out.set("event", digest_text(a.event));
  out.set("author", a.author);
  out.set("type", a.type);
  out.set("text", a.text);
  out.set("evidenceUrl", opt_string(a.evidence_url));
  out.set("observedNs", a.observed_ns == 0 ? Json() : Json(a.observed_ns));
  out.set("environment", opt_string(a.environment));
  out.set("void", opt_string(a.void_cause));
  return out;
}

Json correction_record_json(const CorrectionRecord& c) {
  Json out = Json::object();
  out.set("index", c.index);
  out.set("event", digest_text(c.event));
  out.set("author", c.author);
  out.set("kind", c.kind);
  out.set("role", c.role);
  out.set("reason", c.reason);
  out.set("target", digest_text(c.target));
  out.set("replacement", c.replacement ? Json(digest_text(*c.replacement)) : Json());
  out.set("source", opt_string(c.source));
  out.set("atMs", c.kind == "disqualify" ? Json(c.at_ms) : Json());
  out.set("void", opt_string(c.void_cause));
  out.set("ignored", opt_string(c.ignored));
  return out;
}

namespace {

Json history_json(const HistoryItem& h) {
  Json out = Json::object();
  out.set("index", h.index);
  out.set("event", digest_text(h.event));
  out.set("kind", h.kind);
  out.set("void", opt_string(h.void_cause));
  return out;
}

Json source_native_json(const SourceNativeMetrics& m) {
  Json out = Json::object();
  out.set("solScore", opt_number(m.sol_score));
  out.set("speedup", opt_number(m.speedup));
  out.set("casesFaster", opt_number(m.cases_faster));
  out.set("casesTotal", opt_number(m.cases_total));
  return out;
}

template <typename T, typename F>
Json array_of(const std::vector<T>& items, F to_json) {
  Json out = Json::array();
  for (const T& item : items) out.as_array().push_back(to_json(item));
  return out;
}

// Reads members of our own stored JSON; the first problem is kept and reported as kCorrupt.
class Reader {
 public:
  explicit Reader(std::string what) : what_(std::move(what)) {}

  const Json& member(const Json& obj, std::string_view key) {
    static const Json kNull;
    const Json* v = obj.find(key);
    if (v == nullptr) fail(std::string("no member ") + std::string(key));
    return v != nullptr ? *v : kNull;
  }
  std::string str(const Json& obj, std::string_view key) {  // null reads as ""
    const Json& v = member(obj, key);
    if (v.is_null()) return {};
    if (!v.is_string()) fail(std::string(key) + " is not a string");
    return v.is_string() ? v.as_string() : std::string();
  }
  std::optional<std::string> opt_str(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (v.is_null()) return std::nullopt;
    return str(obj, key);
  }
  double number(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (!v.is_number()) fail(std::string(key) + " is not a number");
    return v.is_number() ? v.as_number() : 0;
  }
  std::optional<double> opt_number(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (v.is_null()) return std::nullopt;
    return number(obj, key);
  }
  bool flag(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (!v.is_bool()) fail(std::string(key) + " is not a boolean");
    return v.is_bool() && v.as_bool();
  }
  uint64_t u64(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (v.is_null()) return 0;
    double d = number(obj, key);
    if (!(d >= 0)) return 0;
    return d >= 18446744073709551616.0 ? UINT64_MAX : static_cast<uint64_t>(d);
  }
  Digest digest(const Json& obj, std::string_view key) {
    auto parsed = parse_digest_text(str(obj, key));
    if (!parsed) fail(std::string(key) + " is not a digest");
    return parsed ? *parsed : Digest{};
  }
  std::optional<Digest> opt_digest(const Json& obj, std::string_view key) {
    if (member(obj, key).is_null()) return std::nullopt;
    return digest(obj, key);
  }
  const Json::Array& array(const Json& obj, std::string_view key) {
    static const Json::Array kEmpty;
    const Json& v = member(obj, key);
    if (!v.is_array()) fail(std::string(key) + " is not an array");
    return v.is_array() ? v.as_array() : kEmpty;
  }
  std::optional<PrimaryMeasurement> primary(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (v.is_null()) return std::nullopt;
    return PrimaryMeasurement{str(v, "metric"), str(v, "statistic"), str(v, "unit"),
                              number(v, "value")};
  }
  std::optional<Hardware> hardware(const Json& obj, std::string_view key) {
    const Json& v = member(obj, key);
    if (v.is_null()) return std::nullopt;
    return Hardware{str(v, "vendor"), str(v, "product"), str(v, "architecture")};
  }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }
  Status status() const {
    if (error_.empty()) return Status::ok();
    return corrupt(what_ + ": " + error_ + "; rebuild the projections (evledger rebuild)");
  }

 private:
  std::string what_;
  std::string error_;
};

RerunRecord read_rerun(Reader& r, const Json& j) {
  RerunRecord out;
  out.index = r.u64(j, "index");
  out.event = r.digest(j, "event");
  out.manifest = r.digest(j, "manifest");
  out.runner = r.str(j, "runner");
  out.owner = r.opt_str(j, "owner");
  out.host = r.opt_str(j, "host");
  out.status = r.str(j, "status");
  out.primary = r.primary(j, "primary");
  out.environment_digest = r.str(j, "environmentDigest");
  out.hardware = r.hardware(j, "hardware");
  out.tolerance_milli = static_cast<uint32_t>(r.u64(j, "toleranceMilli"));
  out.cases = r.str(j, "cases");
  out.void_cause = r.opt_str(j, "void");
  auto verdict = parse_verdict(r.str(j, "verdict"));
  if (!verdict) r.fail("unknown verdict");
  out.verdict = verdict.value_or(Verdict::kPending);
  out.ratio = r.opt_number(j, "ratio");
  return out;
}

AttestationRecord read_attestation(Reader& r, const Json& j) {
  AttestationRecord out;
  out.index = r.u64(j, "index");
  out.event = r.digest(j, "event");
  out.author = r.str(j, "author");
  out.type = r.str(j, "type");
  out.text = r.str(j, "text");
  out.evidence_url = r.str(j, "evidenceUrl");
  out.observed_ns = r.u64(j, "observedNs");
  out.environment = r.str(j, "environment");
  out.void_cause = r.opt_str(j, "void");
  return out;
}

CorrectionRecord read_correction(Reader& r, const Json& j) {
  CorrectionRecord out;
  out.index = r.u64(j, "index");
  out.event = r.digest(j, "event");
  out.author = r.str(j, "author");
  out.kind = r.str(j, "kind");
  out.role = r.str(j, "role");
  out.reason = r.str(j, "reason");
  out.target = r.digest(j, "target");
  out.replacement = r.opt_digest(j, "replacement");
  out.source = r.str(j, "source");
  if (auto at = r.opt_number(j, "atMs"); at && *at > -9.2e18 && *at < 9.2e18) {
    out.at_ms = static_cast<int64_t>(*at);
  }
  out.void_cause = r.opt_str(j, "void");
  out.ignored = r.opt_str(j, "ignored");
  return out;
}

HistoryItem read_history(Reader& r, const Json& j) {
  return HistoryItem{r.u64(j, "index"), r.digest(j, "event"), r.str(j, "kind"),
                     r.opt_str(j, "void")};
}

}  // namespace

const char* evidence_level_name(EvidenceLevel level) {
  return kEvidenceNames[static_cast<size_t>(level)];
}
std::optional<EvidenceLevel> parse_evidence_level(std::string_view name) {
  for (size_t i = 0; i < kEvidenceNames.size(); ++i) {
    if (name == kEvidenceNames[i]) return static_cast<EvidenceLevel>(i);
  }
  return std::nullopt;
}
const char* verdict_name(Verdict verdict) { return kVerdictNames[static_cast<size_t>(verdict)]; }
std::optional<Verdict> parse_verdict(std::string_view name) {
  for (size_t i = 0; i < kVerdictNames.size(); ++i) {
    if (name == kVerdictNames[i]) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

Json primary_json(const std::optional<PrimaryMeasurement>& primary) {
  if (!primary) return Json();
  Json out = Json::object();
  out.set("metric", primary->metric);
  out.set("statistic", primary->statistic);
  out.set("unit", primary->unit);
  out.set("value", primary->value);
  return out;
}

Result<RerunRecord> parse_rerun_record(const Json& json) {
  Reader r("stored rerun record");
  RerunRecord out = read_rerun(r, json);
  EVL_RETURN_IF_ERROR(r.status());
  return out;
}
Result<AttestationRecord> parse_attestation_record(const Json& json) {
  Reader r("stored attestation record");
  AttestationRecord out = read_attestation(r, json);
  EVL_RETURN_IF_ERROR(r.status());
  return out;
}
Result<CorrectionRecord> parse_correction_record(const Json& json) {
  Reader r("stored correction record");
  CorrectionRecord out = read_correction(r, json);
  EVL_RETURN_IF_ERROR(r.status());
  return out;
}

Json run_view_json(const RunView& v) {
  Json out = Json::object();
  out.set("run", digest_text(v.run));
  out.set("event", digest_text(v.event));
  out.set("index", v.index);
  out.set("void", opt_string(v.void_cause));
  out.set("name", opt_string(v.name));
  out.set("title", opt_string(v.title));
  out.set("benchmark", opt_string(v.benchmark));
  out.set("source", opt_string(v.source));
  out.set("externalId", opt_string(v.external_id));
  out.set("status", opt_string(v.status));
  out.set("observedAt", opt_string(v.observed_at));
  out.set("protocolDigest", opt_string(v.protocol_digest));
  out.set("environmentDigest", opt_string(v.environment_digest));
  out.set("workloadDigest", opt_string(v.workload_digest));
  out.set("implementationDigest", opt_string(v.implementation_digest));
  out.set("operationDigest", opt_string(v.operation_digest));
  out.set("correctnessKey", opt_string(v.correctness_key));
  out.set("comparisonKey", opt_string(v.comparison_key));
  out.set("primary", primary_json(v.primary));
  out.set("sourceNative", source_native_json(v.source_native));
  out.set("correctness", v.correctness);
  out.set("artifacts", v.artifacts);
  Json resolved = Json::object();
  resolved.set("protocol", v.has_protocol);
  resolved.set("environment", v.has_environment);
  resolved.set("workload", v.has_workload);
  resolved.set("implementation", v.has_implementation);
  out.set("resolved", std::move(resolved));
  out.set("gpu", hardware_json(v.gpu));
  out.set("sourceAvailable", v.source_available);
  out.set("reruns", array_of(v.reruns, rerun_record_json));
  out.set("attestations", array_of(v.attestations, attestation_record_json));
  out.set("corrections", array_of(v.corrections, correction_record_json));
  out.set("history", array_of(v.history, history_json));
  Json missing = Json::array();
  for (const auto& m : v.missing) missing.as_array().push_back(Json(m));
  out.set("missing", std::move(missing));
  out.set("evidence", evidence_level_name(v.evidence));
  Json flags = Json::array();
  for (const auto& f : v.flags) flags.as_array().push_back(Json(f));
  out.set("flags", std::move(flags));
  out.set("supersededBy", v.superseded_by ? Json(digest_text(*v.superseded_by)) : Json());
  return out;
}

namespace {

// The direct forms of the JSON above, members in JCS order (each must equal its jcs_serialize).

void write_primary(std::string& out, const std::optional<PrimaryMeasurement>& primary) {
  if (!primary) {
    out += "null";
    return;
  }
  JcsObjectWriter w(out);
  w.string("metric", primary->metric);
  w.string("statistic", primary->statistic);
  w.string("unit", primary->unit);
  w.number("value", primary->value);
}

void write_hardware(std::string& out, const std::optional<Hardware>& hw) {
  if (!hw) {
    out += "null";
    return;
  }
  JcsObjectWriter w(out);
  w.string("architecture", hw->architecture);
  w.string("product", hw->product);
  w.string("vendor", hw->vendor);
}

void write_rerun(std::string& out, const RerunRecord& r) {
  JcsObjectWriter w(out);
  w.text_or_null("cases", r.cases);
  w.text_or_null("environmentDigest", r.environment_digest);
  w.digest("event", r.event);
  write_hardware(w.key("hardware"), r.hardware);
  w.opt_string("host", r.host);
  w.number("index", static_cast<double>(r.index));
  w.digest("manifest", r.manifest);
  w.opt_string("owner", r.owner);
  write_primary(w.key("primary"), r.primary);
  w.opt_number("ratio", r.ratio);
  w.string("runner", r.runner);
  w.string("status", r.status);
  w.number("toleranceMilli", r.tolerance_milli);
  w.string("verdict", verdict_name(r.verdict));
  w.opt_string("void", r.void_cause);
}

void write_attestation(std::string& out, const AttestationRecord& a) {
  JcsObjectWriter w(out);
  w.string("author", a.author);
  w.text_or_null("environment", a.environment);
  w.digest("event", a.event);
  w.text_or_null("evidenceUrl", a.evidence_url);
  w.number("index", static_cast<double>(a.index));
  if (a.observed_ns == 0) {
    w.null("observedNs");
  } else {
    w.number("observedNs", static_cast<double>(a.observed_ns));
  }
  w.string("text", a.text);
  w.string("type", a.type);
  w.opt_string("void", a.void_cause);
}

void write_correction(std::string& out, const CorrectionRecord& c) {
  JcsObjectWriter w(out);
  if (c.kind == "disqualify") {
    w.number("atMs", static_cast<double>(c.at_ms));
  } else {
    w.null("atMs");
  }
  w.string("author", c.author);
  w.digest("event", c.event);
  w.opt_string("ignored", c.ignored);
  w.number("index", static_cast<double>(c.index));
  w.string("kind", c.kind);
  w.string("reason", c.reason);
  if (c.replacement) {
    w.digest("replacement", *c.replacement);
  } else {
    w.null("replacement");
  }
  w.string("role", c.role);
  w.text_or_null("source", c.source);
  w.digest("target", c.target);
  w.opt_string("void", c.void_cause);
}

void write_history(std::string& out, const HistoryItem& h) {
  JcsObjectWriter w(out);
  w.digest("event", h.event);
  w.number("index", static_cast<double>(h.index));
  w.string("kind", h.kind);
  w.opt_string("void", h.void_cause);
}

template <typename T, typename F>
void write_array(std::string& out, const std::vector<T>& items, F write_item) {
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.push_back(',');
    write_item(out, items[i]);
  }
  out.push_back(']');
}

void write_text(std::string& out, const std::string& s) { jcs_append_string(out, s); }

}  // namespace

std::string run_view_text(const RunView& v) {
  std::string out;
  // A catalog run's view is 1.5 to 2 KB: room for 2,047 characters, which with the string's
  // terminator is an allocation of exactly 2 KiB (jemalloc serves 2,049 bytes from 2.5 KiB).
  out.reserve(2047);
  {
    JcsObjectWriter w(out);
    w.json("artifacts", v.artifacts);
    write_array(w.key("attestations"), v.attestations, write_attestation);
    w.text_or_null("benchmark", v.benchmark);
    w.opt_string("comparisonKey", v.comparison_key);
    write_array(w.key("corrections"), v.corrections, write_correction);
    w.json("correctness", v.correctness);
    w.opt_string("correctnessKey", v.correctness_key);
    w.text_or_null("environmentDigest", v.environment_digest);
    w.digest("event", v.event);
    w.string("evidence", evidence_level_name(v.evidence));
    w.text_or_null("externalId", v.external_id);
    write_array(w.key("flags"), v.flags, write_text);
    write_hardware(w.key("gpu"), v.gpu);
    write_array(w.key("history"), v.history, write_history);
    w.text_or_null("implementationDigest", v.implementation_digest);
    w.number("index", static_cast<double>(v.index));
    write_array(w.key("missing"), v.missing, write_text);
    w.text_or_null("name", v.name);
    w.text_or_null("observedAt", v.observed_at);
    w.opt_string("operationDigest", v.operation_digest);
    write_primary(w.key("primary"), v.primary);
    w.text_or_null("protocolDigest", v.protocol_digest);
    write_array(w.key("reruns"), v.reruns, write_rerun);
    {
      JcsObjectWriter resolved(w.key("resolved"));
      resolved.boolean("environment", v.has_environment);
      resolved.boolean("implementation", v.has_implementation);
      resolved.boolean("protocol", v.has_protocol);
      resolved.boolean("workload", v.has_workload);
    }
    w.digest("run", v.run);
    w.text_or_null("source", v.source);
    w.boolean("sourceAvailable", v.source_available);
    {
      JcsObjectWriter native(w.key("sourceNative"));
      native.opt_number("casesFaster", v.source_native.cases_faster);
      native.opt_number("casesTotal", v.source_native.cases_total);
      native.opt_number("solScore", v.source_native.sol_score);
      native.opt_number("speedup", v.source_native.speedup);
    }
    w.text_or_null("status", v.status);
    if (v.superseded_by) {
      w.digest("supersededBy", *v.superseded_by);
    } else {
      w.null("supersededBy");
    }
    w.text_or_null("title", v.title);
    w.opt_string("void", v.void_cause);
    w.text_or_null("workloadDigest", v.workload_digest);
  }
  return out;
}

void prefetch_run_view(const RunView& v) {
  const char* at = reinterpret_cast<const char*>(&v);
  for (size_t offset = 0; offset < sizeof v; offset += 64) __builtin_prefetch(at + offset);
}

void prefetch_run_view_contents(const RunView& v) {
  // A string's characters, when they are not inside the string (short ones are): a digest's
  // text ("sha256:" and 64 hex digits) spans two cache lines.
  auto chars = [](const std::string& s) {
    __builtin_prefetch(s.data());
    if (s.size() > 56) __builtin_prefetch(s.data() + 64);
  };
  for (const std::string* s :
       {&v.name, &v.title, &v.benchmark, &v.source, &v.external_id, &v.status, &v.observed_at,
        &v.protocol_digest, &v.environment_digest, &v.workload_digest,
        &v.implementation_digest}) {
    chars(*s);
  }
  for (const auto* s : {&v.comparison_key, &v.operation_digest, &v.correctness_key}) {
    if (*s) chars(**s);
  }
  if (v.primary) chars(v.primary->statistic);
  if (v.gpu) chars(v.gpu->product);
  __builtin_prefetch(v.history.data());
  __builtin_prefetch(v.reruns.data());
  __builtin_prefetch(v.attestations.data());
  __builtin_prefetch(v.corrections.data());
  __builtin_prefetch(v.missing.data());
  __builtin_prefetch(v.flags.data());
}

Result<RunView> parse_run_view(std::string_view text) {
  auto parsed = parse_json(text);
  if (!parsed) return corrupt("stored run view: " + parsed.error().message());
  const Json& j = *parsed;
  Reader r("stored run view");
  RunView v;
  v.run = r.digest(j, "run");
  v.event = r.digest(j, "event");
  v.index = r.u64(j, "index");
  v.void_cause = r.opt_str(j, "void");
  v.name = r.str(j, "name");
  v.title = r.str(j, "title");
  v.benchmark = r.str(j, "benchmark");
  v.source = r.str(j, "source");
  v.external_id = r.str(j, "externalId");
  v.status = r.str(j, "status");
  v.observed_at = r.str(j, "observedAt");
  v.protocol_digest = r.str(j, "protocolDigest");
  v.environment_digest = r.str(j, "environmentDigest");
  v.workload_digest = r.str(j, "workloadDigest");
  v.implementation_digest = r.str(j, "implementationDigest");
  v.operation_digest = r.opt_str(j, "operationDigest");
  v.correctness_key = r.opt_str(j, "correctnessKey");
  v.comparison_key = r.opt_str(j, "comparisonKey");
  v.primary = r.primary(j, "primary");
  const Json& native = r.member(j, "sourceNative");
  v.source_native =
      SourceNativeMetrics{r.opt_number(native, "solScore"), r.opt_number(native, "speedup"),
                          r.opt_number(native, "casesFaster"), r.opt_number(native, "casesTotal")};
  v.correctness = r.member(j, "correctness");
  v.artifacts = r.member(j, "artifacts");
  const Json& resolved = r.member(j, "resolved");
  v.has_protocol = r.flag(resolved, "protocol");
  v.has_environment = r.flag(resolved, "environment");
  v.has_workload = r.flag(resolved, "workload");
  v.has_implementation = r.flag(resolved, "implementation");
  v.gpu = r.hardware(j, "gpu");
  v.source_available = r.flag(j, "sourceAvailable");
  for (const Json& x : r.array(j, "reruns")) v.reruns.push_back(read_rerun(r, x));
  for (const Json& x : r.array(j, "attestations")) v.attestations.push_back(read_attestation(r, x));
  for (const Json& x : r.array(j, "corrections")) v.corrections.push_back(read_correction(r, x));
  for (const Json& x : r.array(j, "history")) v.history.push_back(read_history(r, x));
  for (const Json& x : r.array(j, "missing")) {
    if (x.is_string()) v.missing.push_back(x.as_string());
  }
  auto level = parse_evidence_level(r.str(j, "evidence"));
  if (!level) r.fail("unknown evidence level");
  v.evidence = level.value_or(EvidenceLevel::kReported);
  for (const Json& x : r.array(j, "flags")) {
    if (x.is_string()) v.flags.push_back(x.as_string());
  }
  v.superseded_by = r.opt_digest(j, "supersededBy");
  EVL_RETURN_IF_ERROR(r.status());
  return v;
}

namespace {

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end of the JSON value that starts at text[at]: past its closing quote or bracket, or at
// the ',' or '}' after a number or literal; npos when the text ends inside it or a bracket
// closes that it did not open.
size_t value_end(std::string_view text, size_t at) {
  std::string closers;  // the brackets still open, innermost last
  for (size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      // The closing quote: the next one after an even number of backslashes.
      while (true) {
        const size_t quote = text.find('"', i + 1);
        if (quote == std::string_view::npos) return quote;
        size_t backslashes = 0;
        while (text[quote - 1 - backslashes] == '\\') ++backslashes;
        i = quote;
        if (backslashes % 2 == 0) break;
      }
      if (closers.empty()) return i + 1;
    } else if (c == '{' || c == '[') {
      closers.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (closers.empty()) return i;  // the end of the object around a number or literal
      if (closers.back() != c) return std::string_view::npos;
      closers.pop_back();
      if (closers.empty()) return i + 1;
    } else if (c == ',' && closers.empty()) {
      return i;
    }
  }
  return closers.empty() && at < text.size() ? text.size() : std::string_view::npos;
}

}  // namespace

Result<Json> parse_run_view_members(std::string_view text,
                                    std::span<const std::string_view> names) {
  const Status damaged = corrupt("stored run view: not a JSON object; rebuild the projections");
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && json_space(text[i])) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i] != '{') return damaged;
  ++i;
  Json out = Json::object();
  skip_space();
  if (i < text.size() && text[i] == '}') return out;
  while (true) {
    skip_space();
    if (i >= text.size() || text[i] != '"') return damaged;
    const size_t key_end = value_end(text, i);
    if (key_end == std::string_view::npos) return damaged;
    const std::string_view key = text.substr(i + 1, key_end - i - 2);
    i = key_end;
    skip_space();
    if (i >= text.size() || text[i] != ':') return damaged;
    ++i;
    skip_space();
    const size_t end = value_end(text, i);
    if (end == std::string_view::npos || end == i) return damaged;
    if (std::find(names.begin(), names.end(), key) != names.end()) {
      auto value = parse_json(text.substr(i, end - i));
      if (!value) return corrupt("stored run view: " + value.error().message());
      out.set(std::string(key), std::move(*value));
    }
    i = end;
    skip_space();
    if (i >= text.size()) return damaged;
    if (text[i] == '}') return out;
    if (text[i] != ',') return damaged;
    ++i;
  }
}

}  // namespace evl
