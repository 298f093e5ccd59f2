#include "events/manifest_check.h"

#include <catch2/catch.hpp>
#include <string>

#include "events/jcs.h"
#include "events/manifest_digest.h"
#include "keys/signer.h"
#include "tests/support/fixtures.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

// Fixtures written for these tests: a source-reported run, a rerun-style run, a suite.
constexpr const char* kRun = R"({
  "apiVersion": "kernelindex.dev/v1alpha1",
  "kind": "BenchmarkRun",
  "metadata": {"name": "test-run-1", "title": "Team A, softmax, B200", "labels": {"worker": "w1"}},
  "spec": {
    "implementationDigest": "sha256:1111111111111111111111111111111111111111111111111111111111111111",
    "workloadDigest": "sha256:2222222222222222222222222222222222222222222222222222222222222222",
    "protocolDigest": "sha256:3333333333333333333333333333333333333333333333333333333333333333",
    "environmentDigest": "sha256:4444444444444444444444444444444444444444444444444444444444444444",
    "status": "passed",
    "timing": {"latencyNs": {"mean": 42000, "median": "41.5 us"}, "primaryStatistic": "mean"},
    "observedAt": "2026-03-01T10:20:30.456Z",
    "sourceNative": {"source": "test-source", "benchmark": "001_softmax_forward",
                     "externalId": "7", "metrics": {"sol_score": 0.5}}
  }
})";

constexpr const char* kSuite = R"({
  "apiVersion": "kernelindex.dev/v1alpha1",
  "kind": "WorkloadSuite",
  "metadata": {"name": "softmax-suite"},
  "spec": {
    "operationSpecDigest": "sha256:5555555555555555555555555555555555555555555555555555555555555555",
    "cases": [{"externalId": "0", "axes": {"tokens": 1024}}],
    "correctness": {"comparator": "test_eval"},
    "aggregation": {"metric": "latency", "statistic": "mean"}
  }
})";

Json parse(std::string_view text) {
  auto parsed = parse_json(text);
  INFO("input: " << text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

// `base` with the member at a dotted path replaced (or added), or removed when value is null
// and `remove` is set.
Json with(std::string_view base, const std::string& path, Json value, bool remove = false) {
  Json doc = parse(base);
  Json* node = &doc;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (dot == std::string::npos) {
      if (remove) {
        auto& members = node->as_object();
        std::erase_if(members, [&](const Json::Member& m) { return m.first == key; });
      } else {
        node->set(key, std::move(value));
      }
      return doc;
    }
    node = node->find(key);
    REQUIRE(node != nullptr);
    start = dot + 1;
  }
}

Json without(std::string_view base, const std::string& path) { return with(base, path, {}, true); }

// The message of the problem with `rule`; fails when there is none.
std::string problem(const CheckedManifest& checked, const std::string& rule) {
  for (const auto& p : checked.problems) {
    if (p.rule == rule) return p.message;
  }
  std::string all;
  for (const auto& p : checked.problems) all += p.rule + ": " + p.message + "\n";
  FAIL("no problem with rule " << rule << "; problems:\n" << all);
  return {};
}

TEST_CASE("a source-reported run is an observation by its source, with its text and digest",
          "[manifest_check]") {
  Json run = parse(kRun);
  CheckedManifest c = check_manifest(run, 3, "catalog.json line 9");
  INFO(c.problems.size());
  REQUIRE(c.ok());
  CHECK(c.use == ManifestUse::kObservation);
  CHECK(c.source == "test-source");
  CHECK(c.kind == "BenchmarkRun");
  CHECK(c.name == "test-run-1");
  CHECK(c.label == "document 3 (catalog.json line 9; BenchmarkRun test-run-1)");
  CHECK(c.observed_at_ms == 1772360430456);
  CHECK(c.text.canonical == manifest_canonical_text(run));
  CHECK(c.text.metadata == jcs_serialize(*run.find("metadata")));
  CHECK(c.digest == *manifest_digest(run));
}

TEST_CASE("a run without sourceNative can only be a rerun's manifest", "[manifest_check]") {
  CheckedManifest c = check_manifest(without(kRun, "spec.sourceNative"), 1);
  REQUIRE(c.ok());
  CHECK(c.use == ManifestUse::kRerunOnly);
  CHECK(c.source.empty());
  CHECK(std::string(manifest_use_name(c.use)) == "rerun-only");
}

TEST_CASE("every kind but BenchmarkRun is a manifest event, with claimed time 0",
          "[manifest_check]") {
  CheckedManifest c = check_manifest(parse(kSuite), 2);
  REQUIRE(c.ok());
  CHECK(c.use == ManifestUse::kManifest);
  CHECK(c.observed_at_ms == 0);
  CHECK(c.label == "document 2 (WorkloadSuite softmax-suite)");
}

TEST_CASE("the seed manifests pass and their digests are the ones the runs reference",
          "[manifest_check][seeds]") {
  auto shared = test::shared_dir();
  if (!shared) {
    WARN("../shared is absent: skipping the seed files");
    return;
  }
  for (const char* seed : {"run-17828", "run-38823"}) {
    Json docs = parse(test::read_file(*shared / "fixtures/seeds" / (std::string(seed) +
                                                                     ".manifests.json")));
    REQUIRE(docs.is_array());
    std::vector<CheckedManifest> checked;
    for (size_t i = 0; i < docs.as_array().size(); ++i) {
      checked.push_back(check_manifest(docs.as_array()[i], i + 1));
      INFO(seed << " document " << i + 1);
      CHECK(checked.back().ok());
    }
    REQUIRE(checked.size() == 3);
    const Json& run_spec = *docs.as_array()[2].find("spec");
    CHECK(checked[2].use == ManifestUse::kObservation);
    CHECK(checked[2].source == "sol-execbench");
    CHECK(digest_text(checked[0].digest) == run_spec.find("protocolDigest")->as_string());
    CHECK(digest_text(checked[1].digest) == run_spec.find("environmentDigest")->as_string());
  }
}

TEST_CASE("a document that is not an object is refused (rule object)", "[manifest_check]") {
  CheckedManifest c = check_manifest(parse("[1, 2]"), 5, "x.jsonl line 5");
  CHECK(c.label == "document 5 (x.jsonl line 5; no kind, no metadata.name)");
  CHECK(problem(c, "object") ==
        "document 5 (x.jsonl line 5; no kind, no metadata.name): the document is a JSON array "
        "[object]; a KernelIndex manifest is an object {apiVersion, kind, metadata, spec}");
}

TEST_CASE("members beside apiVersion, kind, metadata and spec are refused (rule top-level)",
          "[manifest_check]") {
  CheckedManifest c = check_manifest(with(kSuite, "status", "ready"), 1);
  CHECK_THAT(problem(c, "top-level"), Catch::Contains("unknown top-level member \"status\"") &&
                                          Catch::Contains("remove it"));
}

TEST_CASE("apiVersion must be kernelindex.dev/v1alpha1 (rule api-version)", "[manifest_check]") {
  CheckedManifest c = check_manifest(with(kSuite, "apiVersion", "kernelindex.dev/v1"), 1);
  CHECK(problem(c, "api-version") ==
        "document 1 (WorkloadSuite softmax-suite): apiVersion is \"kernelindex.dev/v1\" "
        "[api-version]; set \"apiVersion\": \"kernelindex.dev/v1alpha1\"");
  CHECK_THAT(problem(check_manifest(without(kSuite, "apiVersion"), 1), "api-version"),
             Catch::Contains("apiVersion is missing"));
}

TEST_CASE("kind must be one of the eight benchmark kinds, and serving kinds are refused (rule kind)",
          "[manifest_check]") {
  CheckedManifest unknown = check_manifest(with(kSuite, "kind", "Workload"), 1);
  CHECK_THAT(problem(unknown, "kind"),
             Catch::Contains("kind is \"Workload\" [kind]; set kind to one of SoftwareProject, "
                             "OperationSpec, WorkloadCase, WorkloadSuite, ImplementationRevision, "
                             "BenchmarkProtocol, ExecutionEnvironment, BenchmarkRun"));
  CheckedManifest serving = check_manifest(with(kSuite, "kind", "ServingRun"), 1);
  CHECK_THAT(problem(serving, "kind"),
             Catch::Contains("kind ServingRun is a KernelIndex serving kind [kind]") &&
                 Catch::Contains("leave serving manifests out of the import"));
  CHECK(manifest_kinds().size() == 8);
}

TEST_CASE("metadata must be an object (rule metadata)", "[manifest_check]") {
  CHECK_THAT(problem(check_manifest(with(kSuite, "metadata", "softmax"), 1), "metadata"),
             Catch::Contains("metadata is a string [metadata]; add \"metadata\": {\"name\""));
  CHECK_THAT(problem(check_manifest(without(kSuite, "metadata"), 1), "metadata"),
             Catch::Contains("metadata is missing"));
}

TEST_CASE("metadata.name is required and follows the schemas' pattern (rule metadata-name)",
          "[manifest_check]") {
  CheckedManifest missing = check_manifest(without(kSuite, "metadata.name"), 4);
  CHECK(problem(missing, "metadata-name") ==
        "document 4 (WorkloadSuite, no metadata.name): metadata.name is missing "
        "[metadata-name]; set metadata.name to 1..200 characters of a-z, 0-9, '.', '_' or '-', "
        "starting with a letter or digit");
  CheckedManifest upper = check_manifest(with(kSuite, "metadata.name", "Softmax Suite"), 4);
  CHECK_THAT(problem(upper, "metadata-name"),
             Catch::Contains("metadata.name is \"Softmax Suite\" [metadata-name]"));
  CHECK(!check_manifest(with(kSuite, "metadata.name", std::string(201, 'a')), 4).ok());
}

TEST_CASE("spec must be an object (rule spec)", "[manifest_check]") {
  CHECK_THAT(problem(check_manifest(with(kSuite, "spec", Json::array()), 1), "spec"),
             Catch::Contains("spec is an array [spec]"));
  CHECK_THAT(problem(check_manifest(without(kSuite, "spec"), 1), "spec"),
             Catch::Contains("spec is missing [spec]; give the manifest a spec object"));
}

TEST_CASE("spec needs the members its kind's schema requires (rule spec-required)",
          "[manifest_check]") {
  CheckedManifest c = check_manifest(without(kSuite, "spec.aggregation"), 1);
  CHECK(problem(c, "spec-required") ==
        "document 1 (WorkloadSuite softmax-suite): spec.aggregation is missing [spec-required]; "
        "a WorkloadSuite needs spec.aggregation (required: operationSpecDigest, cases, "
        "correctness, aggregation)");
  CHECK_THAT(problem(check_manifest(without(kRun, "spec.status"), 1), "spec-required"),
             Catch::Contains("spec.status is missing"));
}

TEST_CASE("spec members the kind's schema does not define are refused (rule spec-member)",
          "[manifest_check]") {
  CheckedManifest c = check_manifest(with(kSuite, "spec.popularity", 9001), 1);
  CHECK(problem(c, "spec-member") ==
        "document 1 (WorkloadSuite softmax-suite): spec.popularity is not a member of a "
        "WorkloadSuite [spec-member]; remove it; the schema defines operationSpecDigest, cases, "
        "correctness, aggregation");
}

TEST_CASE("every reference is sha256 and 64 lowercase hex digits, at any depth (rule digest-format)",
          "[manifest_check]") {
  CheckedManifest md5 = check_manifest(with(kSuite, "spec.operationSpecDigest", "md5:abc123"), 1);
  CHECK(problem(md5, "digest-format") ==
        "document 1 (WorkloadSuite softmax-suite): spec.operationSpecDigest is \"md5:abc123\" "
        "[digest-format]; a reference is \"sha256:\" followed by 64 lowercase hex digits: write "
        "the referenced manifest's or artifact's digest as evledger prints it");
  std::string upper = "sha256:" + std::string(64, 'A');
  CHECK_THAT(problem(check_manifest(with(kRun, "spec.workloadDigest", upper), 1), "digest-format"),
             Catch::Contains("spec.workloadDigest is \"sha256:AAAA"));
  CHECK_THAT(problem(check_manifest(with(kRun, "spec.protocolDigest", 7), 1), "digest-format"),
             Catch::Contains("spec.protocolDigest is 7"));
  // Nested artifact digests ("digest") and digest lists ("...Digests").
  Json artifact = parse(R"({"logs": {"uri": "https://example.org/l", "digest": "sha256:12"}})");
  CHECK_THAT(problem(check_manifest(with(kRun, "spec.evidence", artifact), 1), "digest-format"),
             Catch::Contains("spec.evidence.logs.digest is \"sha256:12\""));
  Json list = parse(R"(["sha256:)" + std::string(64, 'a') + R"(", "nope"])");
  CheckedManifest listed = check_manifest(with(kRun, "spec.sourceNative.relatedDigests", list), 1);
  CHECK_THAT(problem(listed, "digest-format"),
             Catch::Contains("spec.sourceNative.relatedDigests[1] is \"nope\""));
  CHECK(listed.problems.size() == 1);
}

TEST_CASE("a run's status is one of the schema's values (rule run-status)", "[manifest_check]") {
  CheckedManifest c = check_manifest(with(kRun, "spec.status", "success"), 1);
  CHECK_THAT(problem(c, "run-status"),
             Catch::Contains("spec.status is \"success\" [run-status]; use one of passed, "
                             "incorrect_shape,") &&
                 Catch::Contains("incomplete_evidence, revoked"));
  CHECK(run_statuses().size() == 13);
  CHECK(check_manifest(with(kRun, "spec.status", "timeout"), 1).ok());
}

TEST_CASE("observedAt is an RFC 3339 UTC time on a real date (rule observed-at)", "[manifest_check]") {
  for (const char* bad : {"2026-02-30T00:00:00Z", "2026-03-01T10:20:30+01:00",
                          "2026-03-01 10:20:30Z", "2026-03-01T24:00:00Z", "2026-03-01T10:20:30.Z"}) {
    INFO(bad);
    CHECK_THAT(problem(check_manifest(with(kRun, "spec.observedAt", bad), 1), "observed-at"),
               Catch::Contains("[observed-at]; write an RFC 3339 UTC time such as"));
  }
  CHECK(parse_utc_time_ms("1970-01-01T00:00Z") == 0);
  CHECK(parse_utc_time_ms("2024-02-29T00:00:01.5Z") == 1709164801500);
  CHECK(parse_utc_time_ms("2026-07-07T02:26:56.362999Z") == 1783391216362);
  CHECK(!parse_utc_time_ms("2023-02-29T00:00:00Z"));
}

TEST_CASE("the source slug of a source-reported run is a-z, 0-9 and '-' (rule source-slug)",
          "[manifest_check]") {
  CheckedManifest c = check_manifest(with(kRun, "spec.sourceNative.source", "SOL ExecBench"), 1);
  CHECK_THAT(problem(c, "source-slug"),
             Catch::Contains("spec.sourceNative.source is \"SOL ExecBench\" [source-slug]"));
  CHECK_THAT(problem(check_manifest(without(kRun, "spec.sourceNative.source"), 1), "source-slug"),
             Catch::Contains("spec.sourceNative.source is missing"));
}

TEST_CASE("latencies are whole nanoseconds, as integers or duration texts (rule latency-ns)",
          "[manifest_check]") {
  CheckedManifest c =
      check_manifest(with(kRun, "spec.timing.latencyNs.median", "0.0000005 ms"), 1);
  CHECK_THAT(problem(c, "latency-ns"),
             Catch::Contains("spec.timing.latencyNs.median is \"0.0000005 ms\" [latency-ns]"));
  CHECK(!check_manifest(with(kRun, "spec.timing.latencyNs.mean", 1.5), 1).ok());
  CHECK(!check_manifest(with(kRun, "spec.timing.latencyNs.mean", -1), 1).ok());
  CHECK(whole_latency_ns(Json("159.785 us")) == 159785);
  CHECK(whole_latency_ns(Json("159.785\xC2\xB5s")) == 159785);
  CHECK(whole_latency_ns(Json("1.5 s")) == 1500000000);
  CHECK(whole_latency_ns(Json("12ns")) == 12);
  CHECK(whole_latency_ns(Json("2.000 ns")) == 2);
  CHECK(!whole_latency_ns(Json("2.5 ns")));
  CHECK(!whole_latency_ns(Json("5 min")));
  CHECK(!whole_latency_ns(Json(9007199254740992.0)));
}

TEST_CASE("a run's primary measurement must be positive: 0, -0 and negatives are refused "
          "(rule primary-value)",
          "[manifest_check]") {
  CHECK_THAT(problem(check_manifest(with(kRun, "spec.timing.latencyNs.mean", 0), 1),
                     "primary-value"),
             Catch::Contains("the primary measurement (latency:mean:ns) is 0 [primary-value]") &&
                 Catch::Contains("must be positive"));
  CHECK_THAT(problem(check_manifest(with(kRun, "spec.timing.latencyNs.mean", -0.0), 1),
                     "primary-value"),
             Catch::Contains("(latency:mean:ns) is -0"));
  // The median is the primary when the statistic says so; the mean's 0 then decides nothing.
  Json median_run = with(kRun, "spec.timing.primaryStatistic", "median");
  CHECK_THAT(problem(check_manifest(with(jcs_serialize(median_run), "spec.timing.latencyNs.median", "0 us"),
                                    1),
                     "primary-value"),
             Catch::Contains("(latency:median:ns) is 0"));
  CHECK(check_manifest(with(jcs_serialize(median_run), "spec.timing.latencyNs.mean", 0), 1).ok());
  // Without timing, the first measurement is the primary one, whatever its unit.
  Json measured = without(kRun, "spec.timing");
  const auto measurement = [&](double value) {
    return with(jcs_serialize(measured), "spec.measurements",
                parse(R"([{"metric":"latency","statistic":"p50","unit":"ms","value":)" +
                      jcs_serialize(Json(value)) + "}]"));
  };
  CHECK_THAT(problem(check_manifest(measurement(-0.25), 1), "primary-value"),
             Catch::Contains("(latency:p50:ms) is -0.25"));
  CHECK_THAT(problem(check_manifest(measurement(0), 1), "primary-value"),
             Catch::Contains("is 0"));
  CHECK(check_manifest(measurement(5e-324), 1).ok());  // tiny, but what was measured
  CHECK(check_manifest(measurement(0.031), 1).ok());
  CHECK(check_manifest(parse(kRun), 1).ok());
  // A run without any primary measurement is not refused for it.
  CHECK(check_manifest(without(jcs_serialize(measured), "spec.measurements"), 1).ok());
}

TEST_CASE("a manifest too large for one entry is refused with the limit (rule entry-size)",
          "[manifest_check]") {
  Json big = with(kSuite, "metadata.description", std::string(kMaxManifestTextBytes, 'x'));
  CheckedManifest c = check_manifest(big, 1);
  CHECK_THAT(problem(c, "entry-size"),
             Catch::Contains("a signed entry holds at most 65535 bytes, which leaves 63487 for "
                             "manifest text") &&
                 Catch::Contains("move bulky data"));
  CHECK(c.text.canonical.empty());
}

TEST_CASE("a manifest at the size limit still fits in a signed entry with the most signatures",
          "[manifest_check]") {
  auto text_bytes = [](const Json& m) {
    return jcs_serialize(*m.find("metadata")).size() + manifest_canonical_text(m).size();
  };
  size_t around = text_bytes(with(kSuite, "metadata.description", ""));
  std::string filler(kMaxManifestTextBytes - around, 'x');
  CheckedManifest c = check_manifest(with(kSuite, "metadata.description", filler), 1);
  for (const auto& p : c.problems) INFO(p.message);
  REQUIRE(c.ok());
  REQUIRE(c.text.canonical.size() + c.text.metadata.size() == kMaxManifestTextBytes);
  SecretKey author = test::test_key("importer.example.org", 0x21);
  EventBody body;
  body.author = author.public_key();
  body.claimed_time_ms = -1;  // the widest int64 encoding costs the same 8 bytes
  body.payload = ManifestEvent{c.text};
  Bytes entry = test::signed_entry(author, body);
  CHECK(entry.size() <= 256 + kMaxManifestTextBytes);  // the documented one-signature overhead
  for (uint8_t seed = 0x22; seed < 0x21 + kMaxSignatures; ++seed) {  // the most an entry may hold
    SecretKey cosigner = test::test_key("cosigner", seed);
    auto cosigned = add_signature(cosigner, entry);
    REQUIRE(cosigned.has_value());
    entry = std::move(cosigned.value());
  }
  CHECK(entry.size() <= kMaxEntryBytes);
  CHECK(check_entry(entry).has_value());
}

TEST_CASE("every problem of a document is listed, each naming the document",
          "[manifest_check]") {
  Json doc = with(kRun, "spec.status", "ok");
  doc.find("spec")->set("workloadDigest", "sha256:0");
  doc.set("apiVersion", "v2");
  CheckedManifest c = check_manifest(doc, 12, "a.yaml line 40");
  CHECK(c.problems.size() == 3);
  for (const auto& p : c.problems) {
    CHECK_THAT(p.message,
               Catch::StartsWith("document 12 (a.yaml line 40; BenchmarkRun test-run-1): "));
  }
  CHECK(c.text.canonical.empty());
}

}  // namespace
}  // namespace evl
