// The stored text of a run view written directly (run_view_text) is the JCS text of its JSON
// object (run_view_json), for random views with every member present, absent and escaped; the
// same for the other records written directly, and for manifest summaries.
#include "projections/run_view.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <array>
#include <random>
#include <string>

#include "events/jcs.h"
#include "projections/internal/groups.h"
#include "projections/internal/registry.h"

namespace evl {
namespace {

class RandomView {
 public:
  explicit RandomView(uint64_t seed) : rng_(seed) {}

  RunView make() {
    RunView v;
    v.run = digest();
    v.event = digest();
    v.index = rng_() % 100000;
    v.void_cause = opt_text();
    for (std::string* s : {&v.name, &v.title, &v.benchmark, &v.source, &v.external_id,
                           &v.status, &v.observed_at, &v.protocol_digest, &v.environment_digest,
                           &v.workload_digest, &v.implementation_digest}) {
      *s = maybe_empty();
    }
    v.primary = primary();
    v.source_native = {opt_number(), opt_number(), opt_number(), opt_number()};
    v.correctness = chance() ? Json() : Json(Json::Object{{"z", Json(text())}, {"a", Json(1.5)}});
    v.artifacts = Json::array();
    if (chance()) v.artifacts.as_array().push_back(Json(Json::Object{{"uri", Json(text())}}));
    v.has_protocol = chance();
    v.has_environment = chance();
    v.has_workload = chance();
    v.has_implementation = chance();
    v.gpu = hardware();
    v.operation_digest = opt_text();
    v.correctness_key = opt_text();
    v.source_available = chance();
    for (size_t n = rng_() % 3; n > 0; --n) v.reruns.push_back(rerun());
    for (size_t n = rng_() % 3; n > 0; --n) v.attestations.push_back(attestation());
    for (size_t n = rng_() % 3; n > 0; --n) v.corrections.push_back(correction());
    for (size_t n = rng_() % 4; n > 0; --n) {
      v.history.push_back({rng_() % 1000, digest(), text(), opt_text()});
    }
    v.comparison_key = opt_text();
    for (size_t n = rng_() % 3; n > 0; --n) v.missing.push_back(text());
    v.evidence = static_cast<EvidenceLevel>(rng_() % 4);
    for (size_t n = rng_() % 3; n > 0; --n) v.flags.push_back(text());
    if (chance()) v.superseded_by = digest();
    return v;
  }

 private:
  bool chance() { return rng_() % 2 == 0; }
  Digest digest() {
    Digest d;
    for (auto& b : d) b = static_cast<uint8_t>(rng_());
    return d;
  }
  std::string text() {
    static const std::vector<std::string> kTexts = {
        "a", "NVIDIA B200", "quote \" and \\ backslash", "tab\tnew\nline", "\x01 control",
        "été ✓ 𝄞", "sha256:00ff", "</script>"};
    return kTexts[rng_() % kTexts.size()];
  }
  std::string maybe_empty() { return chance() ? std::string() : text(); }
  std::optional<std::string> opt_text() {
    return chance() ? std::nullopt : std::optional<std::string>(text());
  }
  double number() {
    static const std::vector<double> kNumbers = {0, -0.0, 1, 159785, 0.1, 1e21, 1.5e-7, -42.25,
                                                 9007199254740991.0};
    return kNumbers[rng_() % kNumbers.size()];
  }
  std::optional<double> opt_number() {
    return chance() ? std::nullopt : std::optional<double>(number());
  }
  std::optional<PrimaryMeasurement> primary() {
    if (chance()) return std::nullopt;
    return PrimaryMeasurement{text(), text(), text(), number()};
  }
  std::optional<Hardware> hardware() {
    if (chance()) return std::nullopt;
    return Hardware{text(), maybe_empty(), text()};
  }
  RerunRecord rerun() {
    RerunRecord r;
    r.index = rng_() % 1000;
    r.event = digest();
    r.manifest = digest();
    r.runner = text();
    r.owner = opt_text();
    r.host = opt_text();
    r.status = text();
    r.primary = primary();
    r.environment_digest = maybe_empty();
    r.hardware = hardware();
    r.tolerance_milli = static_cast<uint32_t>(rng_() % 200);
    r.cases = maybe_empty();
    r.void_cause = opt_text();
    r.verdict = static_cast<Verdict>(rng_() % 5);
    r.ratio = opt_number();
    return r;
  }
  AttestationRecord attestation() {
    AttestationRecord a;
    a.index = rng_() % 1000;
    a.event = digest();
    a.author = text();
    a.type = text();
    a.text = maybe_empty();
    a.evidence_url = maybe_empty();
    a.observed_ns = chance() ? 0 : rng_() % 4000000000000;
    a.environment = maybe_empty();
    a.void_cause = opt_text();
    return a;
  }
  CorrectionRecord correction() {
    static const std::vector<std::string> kKinds = {"retract", "supersede", "disqualify"};
    CorrectionRecord c;
    c.index = rng_() % 1000;
    c.event = digest();
    c.author = text();
    c.kind = kKinds[rng_() % kKinds.size()];
    c.role = chance() ? "target" : "replacement";
    c.reason = maybe_empty();
    c.target = digest();
    if (chance()) c.replacement = digest();
    c.source = maybe_empty();
    c.at_ms = static_cast<int64_t>(rng_() % 2000000000000) - 1000;
    c.void_cause = opt_text();
    c.ignored = opt_text();
    return c;
  }

  std::mt19937_64 rng_;
};

TEST_CASE("a run view written directly is the JCS text of its JSON object",
          "[projections][run_view]") {
  RandomView random(20261130);
  for (int i = 0; i < 2000; ++i) {
    RunView v = random.make();
    const std::string expected = jcs_serialize(run_view_json(v));
    REQUIRE(run_view_text(v) == expected);
    auto parsed = parse_run_view(expected);
    REQUIRE(parsed);
    CHECK(run_view_text(*parsed) == expected);
  }
}

TEST_CASE("the members read from a stored view are those of its JSON object; a damaged text is refused",
          "[projections][run_view]") {
  RandomView random(20261202);
  const std::array<std::string_view, 5> names = {"title", "primary", "run", "history", "flags"};
  for (int i = 0; i < 500; ++i) {
    const Json full = run_view_json(random.make());
    const std::string text = jcs_serialize(full);
    Json expected = Json::object();
    for (const auto& [name, value] : full.as_object()) {
      if (std::find(names.begin(), names.end(), name) != names.end()) expected.set(name, value);
    }
    auto read = parse_run_view_members(text, names);
    REQUIRE(read);
    CHECK(jcs_serialize(*read) == jcs_serialize(expected));
    if (i < 20) {
      // No start of the text is a whole object: each is refused, none read past its end.
      for (size_t n = 0; n < text.size(); ++n) {
        auto cut = parse_run_view_members(std::string_view(text).substr(0, n), names);
        CHECK_FALSE(cut);
        if (!cut) CHECK(cut.error().code() == Code::kCorrupt);
      }
    }
  }
  CHECK(jcs_serialize(parse_run_view_members("{}", names).value()) == "{}");
  for (const char* damaged : {"[]", "{\"title\":}", "{\"title\" \"x\"}", "{\"a\":[1}",
                              "{\"a\":{\"b\":1]}", "{\"a\":1 \"b\":2}", "{\"title\":\"x\\\"}"}) {
    INFO(damaged);
    CHECK_FALSE(parse_run_view_members(damaged, names));
  }
}

TEST_CASE("group records written directly are the JCS text of their JSON",
          "[projections][run_view]") {
  std::mt19937_64 rng(7);
  auto digest = [&] {
    Digest d;
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    return d;
  };
  for (int i = 0; i < 200; ++i) {
    GroupRecord g;
    g.key = digest();
    if (i % 3 != 0) {
      g.leader = digest();
      g.leader_value = i % 3 == 1 ? 159785.0 : 0.000125;
    }
    g.size = rng() % 1000;
    g.members = g.size + rng() % 10;
    Json expected_g = Json::object();
    expected_g.set("group", digest_text(g.key));
    expected_g.set("leader", g.leader ? Json(digest_text(*g.leader)) : Json());
    expected_g.set("leaderValue", g.leader_value ? Json(*g.leader_value) : Json());
    expected_g.set("size", g.size);
    expected_g.set("members", g.members);
    CHECK(group_record_text(g) == jcs_serialize(expected_g));
    auto parsed = parse_group_record(g.key, group_record_text(g));
    REQUIRE(parsed);
    CHECK(parsed->leader == g.leader);
    CHECK(parsed->members == g.members);
  }
}

// A manifest of a random kind whose summary paths are each absent, a string (escaped or not),
// another type, or (for objects on the way) not an object.
class RandomManifest {
 public:
  explicit RandomManifest(uint64_t seed) : rng_(seed) {}

  Json manifest() {
    static const char* const kKinds[] = {
        "BenchmarkProtocol", "ExecutionEnvironment", "WorkloadCase", "WorkloadSuite",
        "ImplementationRevision", "BenchmarkRun", "OperationSpec", "SoftwareProject", "Other"};
    Json m = Json::object();
    switch (rng_() % 12) {
      case 0: break;                      // no kind
      case 1: m.set("kind", 7); break;    // not a string
      default: m.set("kind", kKinds[rng_() % std::size(kKinds)]);
    }
    if (rng_() % 10 == 0) return m;       // no spec
    if (rng_() % 10 == 0) {
      m.set("spec", "not an object");
      return m;
    }
    Json spec = Json::object();
    for (const char* path :
         {"harness.name", "harness.version", "measurement.timer", "measurement.primaryStatistic",
          "correctness.reference", "correctness.comparator", "correctness.description",
          "comparability.family", "hardware.vendor", "hardware.product", "hardware.architecture",
          "operationSpecDigest", "aggregation.metric", "aggregation.statistic",
          "projectRevision.repository", "projectRevision.commit", "projectRevision.version",
          "operation.specDigest", "callable.language", "source.contentDigest"}) {
      set_path(spec, path);
    }
    if (rng_() % 3 != 0) {
      Json cases = Json::array();
      for (uint64_t n = rng_() % 5; n > 0; --n) cases.as_array().push_back(Json::object());
      spec.set("cases", rng_() % 5 == 0 ? Json("many") : cases);
    }
    if (rng_() % 4 == 0) spec.set("correctness", rng_() % 2 == 0 ? Json() : Json(0.5));
    m.set("spec", spec);
    return m;
  }

  Json metadata() {
    switch (rng_() % 6) {
      case 0: return Json();
      case 1: return Json("not an object");
      default: {
        Json meta = Json::object();
        set_path(meta, "name");
        set_path(meta, "title");
        return meta;
      }
    }
  }

 private:
  void set_path(Json& root, std::string_view path) {
    const uint64_t choice = rng_() % 8;
    if (choice < 3) return;  // absent
    Json* at = &root;
    for (size_t dot; (dot = path.find('.')) != std::string_view::npos;) {
      std::string part(path.substr(0, dot));
      path.remove_prefix(dot + 1);
      Json* next = at->find(part);
      if (next == nullptr) next = &at->set(part, Json::object());
      if (!next->is_object()) return;
      at = next;
    }
    static const char* const kTexts[] = {"cuda", "B200 \"lab\"", "é · µs", "", "a\nb",
                                         "sha256:0ce6d84b5b5aa97dec7d"};
    Json value = choice == 3   ? Json(12.5)
                 : choice == 4 ? Json(true)
                               : Json(kTexts[rng_() % std::size(kTexts)]);
    at->set(std::string(path), std::move(value));
  }

  std::mt19937_64 rng_;
};

TEST_CASE("a manifest summary written directly is the JCS text of its JSON, with the same facts",
          "[projections][registry]") {
  RandomManifest random(20261201);
  Digest digest{};
  for (int i = 0; i < 5000; ++i) {
    digest[i % 32] = static_cast<uint8_t>(i);
    const Json manifest = random.manifest();
    const Json metadata = random.metadata();
    INFO("manifest " << jcs_serialize(manifest) << " metadata " << jcs_serialize(metadata));
    const Json summary = manifest_summary(digest, manifest, metadata);
    const ManifestSummary direct = summarize_manifest(digest, manifest, metadata);
    REQUIRE(direct.text == jcs_serialize(summary));
    REQUIRE(direct.facts == manifest_facts(summary));
    const ManifestSummary facts_only = summarize_manifest(digest, manifest, metadata, false);
    REQUIRE(facts_only.facts == direct.facts);
    REQUIRE(facts_only.text.empty());
  }
}

TEST_CASE("value sort keys are 16 hex digits that sort as the values do",
          "[projections][groups]") {
  // The ranked index keys (projections/FORMAT.md): IEEE 754 bits with the sign bit flipped for
  // positives and every bit flipped for negatives, as lowercase hex.
  CHECK(value_sort_key(0.0) == "8000000000000000");
  CHECK(value_sort_key(-0.0) == "8000000000000000");
  CHECK(value_sort_key(1.0) == "bff0000000000000");
  CHECK(value_sort_key(-1.0) == "400fffffffffffff");
  CHECK(value_sort_key(159785.0) == "c103814800000000");
  const double values[] = {-1e300, -2.5, -1.0, -1e-300, 0.0, 1e-300, 0.5, 1.0, 159785.0, 1e300};
  for (size_t i = 1; i < std::size(values); ++i) {
    INFO(values[i - 1] << " < " << values[i]);
    CHECK(value_sort_key(values[i - 1]) < value_sort_key(values[i]));
  }
}

}  // namespace
}  // namespace evl
