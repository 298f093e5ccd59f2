#include "events/manifest_digest.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "events/json.h"
#include "events/sha256.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

Json parse(std::string_view text) {
  Result<Json> parsed = parse_json(text);
  INFO("input: " << text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

std::string digest_of(const Json& manifest) {
  Result<Digest> digest = manifest_digest(manifest);
  REQUIRE(digest.has_value());
  return digest_text(*digest);
}

// Digests of the seed manifests in fixtures/seeds (run 17828 and run 38823), as the BenchmarkRun
// specs and the seed pages print them. The manifests below are written here by hand: other
// member order, whitespace, escapes, number spellings and metadata than the seeds, which
// canonicalization and the digest rule must all wash out.
constexpr const char* kProtocolV10Digest =
    "sha256:2964c5c4ed9cb0dcdc0f74674035bc71bf5e66620939e38441060f76434ed3e5";
constexpr const char* kEnvironmentV10Digest =
    "sha256:5296c820e166474e590abb1beaf7728cdfe0a4bde9bf55f8966a40f4f5401621";
constexpr const char* kEnvironmentV11Digest =
    "sha256:f304afb2fedab4bbeadf8ac36a990ff517ab6e824dfe5a3ee0fe46259ff5e39f";
constexpr const char* kRun17828Digest =
    "sha256:86b55a5fb1e31fa546677f69fc7fd9dc183f3f8b9771ed696e7ae2c0df4b90d6";
constexpr const char* kRun38823Digest =
    "sha256:7e18c26ca3b60572c4fc8589c4b3b9a86b548ef031df4242ea2483b649bd6a47";

constexpr const char* kEnvironmentV10 = R"({
  "metadata": {"name": "hand-written-b200", "title": "metadata never counts"},
  "spec": {"software": {"libraries": {"evaluation_stack": "v1.0"}},
           "hardware": {"vendor": "nvidia", "architecture": "sm_100", "product": "NVIDIA\u0020B200"}},
  "kind": "ExecutionEnvironment",
  "apiVersion": "kernelindex.dev\/v1alpha1"
})";

constexpr const char* kEnvironmentV11 =
    R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":{"hardware":)"
    R"({"architecture":"sm_100","product":"NVIDIA B200","vendor":"nvidia"},"software":{"libraries":)"
    R"({"evaluation_stack":"v1.1"}}}})";

constexpr const char* kProtocolV10 = R"({
  "apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkProtocol",
  "spec": {
    "measurement": {"timer": "harness_reported", "primaryStatistic": "mean"},
    "harness": {"version": "v1.0", "name": "SOL-ExecBench evaluation stack"},
    "correctness": {"reference": "definition reference implementation", "comparator": "sol_execbench_eval"},
    "comparability": {"family": "sol_execbench_leaderboard", "notes": "Suite-mean latency and SOL-Score as published by the SOL-ExecBench leaderboard. Comparable only within one definition, GPU type, and evaluation stack version."}
  }
})";

constexpr const char* kRun17828 = R"({
  "apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun",
  "metadata": {"name": "renamed-run"},
  "spec": {
    "timing": {"primaryStatistic": "mean", "latencyNs": {"mean": 1.59785e5}},
    "status": "passed", "observedAt": "2026-07-07T02:26:56.362Z",
    "sourceNative": {"externalId": "17828", "source": "sol-execbench",
      "benchmark": "091_fused_gqa_qkv_rope_qk_norm_backward",
      "metrics": {"fast_1_total": 16.0, "fast_1_count": 1.6E1, "sol_score": 9.46374e-1,
                  "latency_ms": 0.1597850, "avg_speedup": 10.2584}},
    "implementationDigest": "sha256:73ddb2b143cf21ca68835055a341ed972ed63d6f653c82aa39795faf88c8ae4b",
    "environmentDigest": "sha256:5296c820e166474e590abb1beaf7728cdfe0a4bde9bf55f8966a40f4f5401621",
    "workloadDigest": "sha256:494ad832e50c6e16bbc8add09e1cd729b48e6e327caf2848db8220231a9438ce",
    "protocolDigest": "sha256:2964c5c4ed9cb0dcdc0f74674035bc71bf5e66620939e38441060f76434ed3e5"
  }
})";

TEST_CASE("manifest_digest reproduces the seed digests from hand-written manifests",
          "[events][manifest_digest]") {
  CHECK(digest_of(parse(kEnvironmentV10)) == kEnvironmentV10Digest);
  CHECK(digest_of(parse(kEnvironmentV11)) == kEnvironmentV11Digest);
  CHECK(digest_of(parse(kProtocolV10)) == kProtocolV10Digest);
  Json run = parse(kRun17828);
  CHECK(digest_of(run) == kRun17828Digest);
  // The run names the protocol and environment above by these digests.
  CHECK(run.find("spec")->find("protocolDigest")->as_string() == kProtocolV10Digest);
  CHECK(run.find("spec")->find("environmentDigest")->as_string() == kEnvironmentV10Digest);
}

TEST_CASE("manifest_canonical_text is the JCS of apiVersion, kind and spec only",
          "[events][manifest_digest]") {
  Json manifest = parse(kEnvironmentV10);
  const std::string expected =
      R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":{"hardware":)"
      R"({"architecture":"sm_100","product":"NVIDIA B200","vendor":"nvidia"},"software":{"libraries":)"
      R"({"evaluation_stack":"v1.0"}}}})";
  CHECK(manifest_canonical_text(manifest) == expected);
  Json subset = Json::object();
  for (const char* field : {"spec", "kind", "apiVersion"}) subset.set(field, *manifest.find(field));
  CHECK(jcs_serialize(subset) == expected);
  Result<CanonicalManifest> both = canonical_manifest(manifest);
  REQUIRE(both.has_value());
  CHECK(both->text == expected);
  CHECK(digest_text(both->digest) == kEnvironmentV10Digest);
  CHECK(both->digest == sha256(as_bytes(expected)));
}

TEST_CASE("manifest digests ignore metadata and unknown top-level members but not spec",
          "[events][manifest_digest]") {
  Json manifest = parse(kEnvironmentV10);
  manifest.set("metadata", parse(R"({"name": "other", "labels": {"x": "y"}})"));
  manifest.set("status", "anything outside apiVersion, kind and spec");
  CHECK(digest_of(manifest) == kEnvironmentV10Digest);
  manifest.find("spec")->find("hardware")->set("product", "NVIDIA H100");
  CHECK(digest_of(manifest) != kEnvironmentV10Digest);
}

TEST_CASE("manifest_digest names the missing or mistyped member", "[events][manifest_digest]") {
  struct Case {
    const char* manifest;
    std::vector<const char*> message_parts;
  };
  const std::vector<Case> cases = {
      {R"({"kind": "ExecutionEnvironment", "spec": {}})",
       {"manifest ExecutionEnvironment has no \"apiVersion\"",
        "add \"apiVersion\": \"kernelindex.dev/v1alpha1\""}},
      {R"({"apiVersion": "kernelindex.dev/v1alpha1", "spec": {}, "metadata": {"name": "n1"}})",
       {"manifest n1 has no \"kind\""}},
      {R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": "r"}})",
       {"manifest BenchmarkRun r has no \"spec\"", "covers apiVersion, kind and spec"}},
      {R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": 3, "spec": {}})",
       {"\"kind\" is a number but must be a string"}},
      {R"({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "WorkloadCase", "spec": []})",
       {"manifest WorkloadCase: \"spec\" is a array but must be a object"}},
      {R"([1, 2])", {"manifest is a JSON array"}},
  };
  for (const Case& c : cases) {
    Json manifest = parse(c.manifest);
    Result<Digest> digest = manifest_digest(manifest);
    REQUIRE_FALSE(digest.has_value());
    CHECK(digest.error().code() == Code::kRejected);
    CHECK_FALSE(canonical_manifest(manifest).has_value());
    CHECK_FALSE(check_manifest_fields(manifest).is_ok());
    INFO("message: " << digest.error().message());
    for (const char* part : c.message_parts)
      CHECK_THAT(digest.error().message(), Catch::Contains(part));
  }
}

// Which kinds a BenchmarkRun's digest fields point at.
const std::map<std::string, std::vector<std::string>> kRunReferences = {
    {"protocolDigest", {"BenchmarkProtocol"}},
    {"environmentDigest", {"ExecutionEnvironment"}},
    {"workloadDigest", {"WorkloadCase", "WorkloadSuite"}},
    {"implementationDigest", {"ImplementationRevision"}},
};

const Json& find_kind(const Json& manifests, const std::string& kind) {
  for (const Json& m : manifests.as_array()) {
    if (m.find("kind")->as_string() == kind) return m;
  }
  FAIL("no " << kind << " manifest");
  throw std::logic_error("unreachable");
}

TEST_CASE("the seed runs' digest references match the digests of the seed manifests",
          "[events][manifest_digest][shared]") {
  std::optional<std::filesystem::path> shared = test::shared_dir();
  if (!shared) {
    WARN("../shared is absent: skipping the seed files (the inline seed digests still ran)");
    return;
  }
  const std::map<std::string, std::string> expected_run_digest = {{"17828", kRun17828Digest},
                                                                  {"38823", kRun38823Digest}};
  for (const auto& [id, run_digest] : expected_run_digest) {
    INFO("run " << id);
    Json manifests =
        parse(test::read_file(*shared / ("fixtures/seeds/run-" + id + ".manifests.json")));
    const Json& run = find_kind(manifests, "BenchmarkRun");
    CHECK(digest_of(run) == run_digest);
    int checked = 0;
    for (const Json& m : manifests.as_array()) {
      for (const auto& [field, kinds] : kRunReferences) {
        if (std::find(kinds.begin(), kinds.end(), m.find("kind")->as_string()) == kinds.end())
          continue;
        INFO(field);
        CHECK(run.find("spec")->find(field)->as_string() == digest_of(m));
        ++checked;
      }
    }
    CHECK(checked >= 2);  // the seeds carry the protocol and the environment
  }
}

TEST_CASE("the digests printed on the seed pages are the run digest and the run's references",
          "[events][manifest_digest][shared]") {
  std::optional<std::filesystem::path> shared = test::shared_dir();
  if (!shared) {
    WARN("../shared is absent: skipping the seed pages");
    return;
  }
  for (const char* id : {"17828", "38823"}) {
    INFO("run " << id);
    std::string page =
        test::read_file(*shared / (std::string("fixtures/seeds/run-") + id + "-page.txt"));
    Json manifests = parse(
        test::read_file(*shared / (std::string("fixtures/seeds/run-") + id + ".manifests.json")));
    const Json& run = find_kind(manifests, "BenchmarkRun");
    const std::string run_digest = digest_of(run);

    // The page's "Show manifest" block holds the run, protocol and environment again.
    size_t open = page.find("Show manifest");
    size_t close = page.find("\nCite this record");
    REQUIRE(open != std::string::npos);
    REQUIRE(close != std::string::npos);
    Json shown = parse(page.substr(open + 13, close - open - 13));
    CHECK(digest_of(*shown.find("run")) == run_digest);
    CHECK(digest_of(*shown.find("protocol")) ==
          run.find("spec")->find("protocolDigest")->as_string());
    CHECK(digest_of(*shown.find("environment")) ==
          run.find("spec")->find("environmentDigest")->as_string());

    // Every digest on the page, whole or cut short with "…": the run's own digest (printed
    // after "external id", truncated), the four references in the manifest block (whole), and
    // the comparison key, which needs the workload manifest the seeds do not carry.
    const std::regex digest_pattern("(comparison key)?sha256:([0-9a-f]+)(…)?");
    int run_digest_prefixes = 0, references = 0, comparison_keys = 0;
    for (auto it = std::sregex_iterator(page.begin(), page.end(), digest_pattern);
         it != std::sregex_iterator(); ++it) {
      const std::string hex = (*it)[2];
      if ((*it)[1].matched) {
        ++comparison_keys;
        continue;
      }
      if ((*it)[3].matched) {
        CHECK(run_digest.compare(7, hex.size(), hex) == 0);
        CHECK(hex.size() >= 16);
        ++run_digest_prefixes;
      } else {
        bool is_reference = false;
        for (const auto& [field, kinds] : kRunReferences) {
          is_reference =
              is_reference || run.find("spec")->find(field)->as_string() == "sha256:" + hex;
        }
        CHECK(is_reference);
        ++references;
      }
    }
    CHECK(run_digest_prefixes == 1);
    CHECK(references == 4);
    CHECK(comparison_keys == 1);
  }
}

}  // namespace
}  // namespace evl
