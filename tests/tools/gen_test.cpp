// The synthetic SOL-ExecBench catalog: deterministic, self-contained, consistent.
#include "tools/gen/sol_catalog.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "events/jcs.h"
#include "events/manifest_check.h"
#include "events/manifest_digest.h"

namespace evl::gen {
namespace {

struct Catalog {
  std::vector<Json> manifests;
  std::string bytes;
  SolCatalogStats stats;
};

Catalog generate(uint64_t runs, uint64_t seed) {
  Catalog c;
  c.stats = generate_sol_catalog({runs, seed}, [&](const Json& m) {
    c.manifests.push_back(m);
    jcs_append(c.bytes, m);
    c.bytes.push_back('\n');
  });
  return c;
}

// The member at a dotted path, or nullptr.
const Json* json_path(const Json& value, std::string_view path) {
  const Json* node = &value;
  while (node != nullptr) {
    size_t dot = path.find('.');
    node = node->find(path.substr(0, dot));
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return node;
}

const Json& at(const Json& value, std::string_view path) {
  const Json* found = json_path(value, path);
  INFO(path);
  REQUIRE(found != nullptr);
  return *found;
}

std::string kind_of(const Json& m) { return m.find("kind")->as_string(); }

TEST_CASE("gen is deterministic: the same seed gives the same bytes", "[gen]") {
  Catalog a = generate(400, 42);
  Catalog b = generate(400, 42);
  CHECK(a.bytes == b.bytes);
  CHECK(a.stats.manifests == a.manifests.size());
  CHECK(generate(400, 43).bytes != a.bytes);
}

TEST_CASE("every generated manifest passes the import checks and every reference resolves",
          "[gen]") {
  Catalog c = generate(1500, 7);
  std::map<std::string, size_t> position;  // digest → index in the stream
  for (size_t i = 0; i < c.manifests.size(); ++i) {
    CheckedManifest checked = check_manifest(c.manifests[i], i + 1);
    for (const auto& p : checked.problems) INFO(p.message);
    REQUIRE(checked.ok());
    bool fresh = position.emplace(digest_text(checked.digest), i).second;
    CHECK(fresh);  // no manifest is generated twice
    if (kind_of(c.manifests[i]) == "BenchmarkRun") {
      CHECK(checked.use == ManifestUse::kObservation);
      CHECK(checked.source == "sol-execbench");
    }
  }
  uint64_t late = 0;
  for (size_t i = 0; i < c.manifests.size(); ++i) {
    const Json& m = c.manifests[i];
    const Json& spec = *m.find("spec");
    std::vector<std::string> refs;
    if (kind_of(m) == "BenchmarkRun") {
      for (const char* k : {"implementationDigest", "workloadDigest", "protocolDigest",
                            "environmentDigest"}) {
        refs.push_back(at(spec, k).as_string());
      }
    } else if (kind_of(m) == "WorkloadSuite" || kind_of(m) == "WorkloadCase") {
      refs.push_back(at(spec, "operationSpecDigest").as_string());
      CHECK(spec.find("correctness") != nullptr);
    } else if (kind_of(m) == "ImplementationRevision") {
      refs.push_back(at(spec, "operation.specDigest").as_string());
    }
    for (const auto& ref : refs) {
      INFO(kind_of(m) << " " << i << " references " << ref);
      auto it = position.find(ref);
      REQUIRE(it != position.end());
      if (it->second > i) {
        CHECK(kind_of(c.manifests[it->second]).rfind("Workload", 0) == 0);
        ++late;
      }
    }
  }
  CHECK(late > 0);
  CHECK(c.stats.late_workloads > 0);
}

TEST_CASE("generated metrics agree: latency, speedup and SOL score", "[gen]") {
  Catalog c = generate(3000, 11);
  std::map<std::string, const Json*> by_digest;
  for (const auto& m : c.manifests) by_digest[digest_text(*manifest_digest(m))] = &m;
  // Per comparison group: the reference latency (latency x speedup) and the SOL bound
  // (latency x sol_score) must be one value each, up to the published rounding.
  struct Group {
    std::vector<double> reference, bound;
  };
  std::map<std::string, Group> groups;
  uint64_t passed = 0, failed = 0, capped = 0;
  std::map<std::pair<std::string, double>, int> latencies;
  uint64_t ties = 0;
  for (const auto& m : c.manifests) {
    if (kind_of(m) != "BenchmarkRun") continue;
    const Json& spec = *m.find("spec");
    const Json& metrics = at(spec, "sourceNative.metrics");
    const Json& workload = *by_digest.at(at(spec, "workloadDigest").as_string());
    const Json* cases = json_path(workload, "spec.cases");
    double total = cases != nullptr ? static_cast<double>(cases->as_array().size()) : 1.0;
    CHECK(at(metrics, "fast_1_total").as_number() == total);
    CHECK(at(metrics, "fast_1_count").as_number() <= total);
    if (at(spec, "status").as_string() != "passed") {
      ++failed;
      continue;
    }
    ++passed;
    double latency = at(spec, "timing.latencyNs.mean").as_number();
    CHECK(at(spec, "timing.primaryStatistic").as_string() == "mean");
    CHECK(at(metrics, "latency_ms").as_number() * 1e6 == Approx(latency).epsilon(1e-12));
    double speedup = at(metrics, "avg_speedup").as_number();
    double sol = at(metrics, "sol_score").as_number();
    REQUIRE(sol > 0);
    REQUIRE(sol <= 1);
    std::string group = at(spec, "sourceNative.benchmark").as_string() + " " +
                        at(spec, "environmentDigest").as_string() + " " +
                        at(spec, "protocolDigest").as_string();
    groups[group].reference.push_back(latency * speedup);
    if (sol < 1) groups[group].bound.push_back(latency * sol);
    else ++capped;
    if (++latencies[{group, latency}] == 2) ++ties;
  }
  for (const auto& [name, g] : groups) {
    INFO(name);
    for (double r : g.reference) CHECK(r == Approx(g.reference.front()).epsilon(1e-3));
    for (double b : g.bound) CHECK(b == Approx(g.bound.front()).epsilon(2e-3));
  }
  CHECK(passed > 2500);
  CHECK(failed > 0);
  CHECK(failed == c.stats.non_passed);
  CHECK(capped > 0);
  CHECK(ties > 0);
}

TEST_CASE("the generated B200 protocols and environments are the seeds' manifests", "[gen]") {
  Catalog c = generate(10, 1);
  std::set<std::string> digests;
  for (const auto& m : c.manifests) digests.insert(digest_text(*manifest_digest(m)));
  for (const char* seed :
       {"sha256:2964c5c4ed9cb0dcdc0f74674035bc71bf5e66620939e38441060f76434ed3e5",
        "sha256:5296c820e166474e590abb1beaf7728cdfe0a4bde9bf55f8966a40f4f5401621",
        "sha256:6383f62490dad270ad2146a94f67b48fba5cfcbc0b9b180f02665c69cc4433a0",
        "sha256:f304afb2fedab4bbeadf8ac36a990ff517ab6e824dfe5a3ee0fe46259ff5e39f"}) {
    CHECK(digests.count(seed) == 1);
  }
}

TEST_CASE("some generated implementations publish their source and some do not", "[gen]") {
  Catalog c = generate(500, 3);
  uint64_t with_source = 0, without = 0;
  for (const auto& m : c.manifests) {
    if (kind_of(m) != "ImplementationRevision") continue;
    // KernelIndex's rule: the source is available with a repository and a commit.
    const Json& spec = *m.find("spec");
    bool source = json_path(spec, "projectRevision.repository") != nullptr &&
                  json_path(spec, "projectRevision.commit") != nullptr;
    ++(source ? with_source : without);
  }
  CHECK(with_source == c.stats.source_available);
  CHECK(with_source > 0);
  CHECK(without > 0);
}

}  // namespace
}  // namespace evl::gen
