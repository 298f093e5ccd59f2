#include "events/kernelindex.h"

#include <catch2/catch.hpp>
#include <string>

#include "events/jcs.h"
#include "events/manifest_digest.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

Json parse(std::string_view text) {
  auto parsed = parse_json(text);
  INFO(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

std::optional<double> latency(std::string_view json_text) { return latency_ns(parse(json_text)); }

std::string sha_of(std::string_view text) { return digest_text(sha256(as_bytes(text))); }

TEST_CASE("the primary measurement of a timed run is its mean latency when the statistic is mean",
          "[projections][kernelindex]") {
  Json spec = parse(
      R"({"timing":{"primaryStatistic":"mean","latencyNs":{"mean":159785,"median":150000}}})");
  auto p = primary_measurement(spec);
  REQUIRE(p.has_value());
  CHECK(*p == PrimaryMeasurement{"latency", "mean", "ns", 159785});
  CHECK(comparison_metric(p) == "latency:mean:ns");
}

TEST_CASE("a statistic other than mean reads the median and falls back to the mean",
          "[projections][kernelindex]") {
  auto median = primary_measurement(
      parse(R"({"timing":{"primaryStatistic":"median","latencyNs":{"mean":9,"median":8120}}})"));
  REQUIRE(median.has_value());
  CHECK(median->value == 8120);
  CHECK(median->statistic == "median");
  auto p95 = primary_measurement(
      parse(R"({"timing":{"primaryStatistic":"p95","latencyNs":{"mean":77}}})"));
  REQUIRE(p95.has_value());
  CHECK(p95->value == 77);
  CHECK(p95->statistic == "p95");
  auto mean_falls_back = primary_measurement(
      parse(R"({"timing":{"primaryStatistic":"mean","latencyNs":{"median":"1.75ms"}}})"));
  REQUIRE(mean_falls_back.has_value());
  CHECK(mean_falls_back->value == 1750000);
}

TEST_CASE("latency strings convert to nanoseconds exactly", "[projections][kernelindex]") {
  CHECK(latency(R"("159.8 us")") == 159800.0);
  CHECK(latency(R"("159.8 µs")") == 159800.0);
  CHECK(latency(R"("1.75ms")") == 1750000.0);
  CHECK(latency(R"("2 s")") == 2e9);
  CHECK(latency(R"("12ns")") == 12.0);
  CHECK(latency(R"("0.5ns")") == 0.5);
  CHECK(latency(R"("1.750693 ms")") == 1750693.0);
  CHECK(latency(R"("9007199.254740991 s")") == 9007199254740991.0);
  CHECK(latency("159785") == 159785.0);
}

TEST_CASE("latency values the schema does not allow have no value", "[projections][kernelindex]") {
  for (const char* bad :
       {R"("1.5")", R"("ms")", R"("1. ms")", R"(".5 ms")", R"("-1 ms")", R"("1  ms")", R"("1 min")",
        R"("1e3 ns")", R"(" 1 ns")", "-3", "true", "null", "[1]"}) {
    INFO(bad);
    CHECK_FALSE(latency(bad).has_value());
  }
}

TEST_CASE("without timing the first measurement is primary, and none without either",
          "[projections][kernelindex]") {
  auto m = primary_measurement(parse(
      R"({"measurements":[{"metric":"throughput","statistic":"median","unit":"tflops","value":812.5},)"
      R"({"metric":"latency","statistic":"mean","unit":"ns","value":3}]})"));
  REQUIRE(m.has_value());
  CHECK(*m == PrimaryMeasurement{"throughput", "median", "tflops", 812.5});
  CHECK_FALSE(
      primary_measurement(parse(R"({"measurements":[{"metric":"x","unit":"ns","value":1}]})")));
  CHECK_FALSE(primary_measurement(parse(R"({"measurements":[]})")));
  CHECK_FALSE(primary_measurement(parse(R"({"status":"passed"})")));
  CHECK_FALSE(primary_measurement(parse(R"({"timing":"fast"})")));
  CHECK(comparison_metric(std::nullopt) == "none");
}

TEST_CASE("timing without a usable value falls through to the measurements",
          "[projections][kernelindex]") {
  auto m = primary_measurement(
      parse(R"({"timing":{"primaryStatistic":"mean","latencyNs":{"p95":5}},)"
            R"("measurements":[{"metric":"latency","statistic":"p95","unit":"ns","value":5}]})"));
  REQUIRE(m.has_value());
  CHECK(m->statistic == "p95");
}

TEST_CASE("the correctness key hashes the workload's correctness under one member",
          "[projections][kernelindex]") {
  Json workload = parse(
      R"({"operationSpecDigest":"sha256:00","correctness":{"description":"every case","comparator":"sol_execbench_eval"}})");
  auto key = correctness_key(workload);
  REQUIRE(key.has_value());
  CHECK(
      digest_text(*key) ==
      sha_of(R"({"correctness":{"comparator":"sol_execbench_eval","description":"every case"}})"));
  CHECK_FALSE(correctness_key(parse(R"({"operationSpecDigest":"sha256:00"})")));
}

TEST_CASE("the comparison key hashes the JCS text of its documented members",
          "[projections][kernelindex]") {
  const std::string op = sha_of("op"), wl = sha_of("wl"), pr = sha_of("pr"), env = sha_of("env"),
                    impl = sha_of("impl");
  Json run = parse(R"({"workloadDigest":")" + wl + R"(","protocolDigest":")" + pr +
                   R"(","environmentDigest":")" + env + R"(","implementationDigest":")" + impl +
                   R"(","timing":{"primaryStatistic":"mean","latencyNs":{"mean":10}}})");
  Json workload =
      parse(R"({"operationSpecDigest":")" + op + R"(","correctness":{"comparator":"c"}})");
  auto inputs = comparison_inputs(run, workload);
  REQUIRE(inputs.has_value());
  const std::string correctness = sha_of(R"({"correctness":{"comparator":"c"}})");
  CHECK(inputs->correctness == correctness);
  const std::string expected_text = R"({"correctness":")" + correctness + R"(","environment":")" +
                                    env + R"(","metric":"latency:mean:ns","operation":")" + op +
                                    R"(","protocol":")" + pr + R"(","v":1,"workload":")" + wl +
                                    R"("})";
  CHECK(jcs_serialize(comparison_preimage(*inputs)) == expected_text);
  CHECK(digest_text(comparison_key(*inputs)) == sha_of(expected_text));
  // comparison_key writes the JCS text itself: it must stay the text of the preimage object,
  // escapes included (a metric comes from the manifest's own strings).
  for (const std::string metric : {"none", "a\"b\\c:\u00e9:\x01\n", "\xf0\x9f\x9a\x80:x:\x7f"}) {
    ComparisonInputs odd = *inputs;
    odd.metric = metric;
    odd.operation = "";
    CHECK(comparison_key(odd) == sha256(as_bytes(jcs_serialize(comparison_preimage(odd)))));
  }

  Json other_impl = run;
  other_impl.set("implementationDigest", sha_of("another implementation"));
  CHECK(comparison_key(*comparison_inputs(other_impl, workload)) == comparison_key(*inputs));
  Json no_metric = run;
  no_metric.as_object().erase(no_metric.as_object().end() - 1);  // timing
  CHECK(comparison_inputs(no_metric, workload)->metric == "none");
  CHECK_FALSE(comparison_inputs(run, parse(R"({"correctness":{}})")));
}

TEST_CASE("source-native metrics read SOL score, speedup and cases faster",
          "[projections][kernelindex]") {
  auto m = source_native_metrics(parse(
      R"({"sourceNative":{"source":"sol-execbench","metrics":{"sol_score":0.946374,"avg_speedup":10.2584,"fast_1_count":16,"fast_1_total":16}}})"));
  CHECK(m.sol_score == 0.946374);
  CHECK(m.speedup == 10.2584);
  CHECK(m.cases_faster == 16);
  CHECK(m.cases_total == 16);
  CHECK(source_native_metrics(parse(R"({"sourceNative":{"source":"x"}})")) ==
        SourceNativeMetrics{});
  CHECK_FALSE(source_native_metrics(parse(R"({"sourceNative":{"metrics":{"sol_score":"high"}}})"))
                  .sol_score);
}

TEST_CASE("hardware comes from an execution environment's spec", "[projections][kernelindex]") {
  auto hw = environment_hardware(
      parse(R"({"hardware":{"vendor":"nvidia","product":"NVIDIA B200","architecture":"sm_100"}})"));
  REQUIRE(hw.has_value());
  CHECK(*hw == Hardware{"nvidia", "NVIDIA B200", "sm_100"});
  CHECK_FALSE(environment_hardware(parse(R"({"hardware":{"vendor":"nvidia","product":"B200"}})")));
  CHECK_FALSE(environment_hardware(parse(R"({"software":{}})")));
}

TEST_CASE("an implementation's source is available from a repository commit or a mirrored copy",
          "[projections][kernelindex]") {
  CHECK(implementation_source_available(parse(
      R"({"projectRevision":{"repository":"https://example.invalid/k","commit":"b81d40e0b81d40e0b81d40e0b81d40e0b81d40e0"}})")));
  CHECK(implementation_source_available(parse(R"({"source":{"contentDigest":"sha256:11"}})")));
  CHECK(implementation_source_available(parse(
      R"({"buildVariants":[{"name":"pip","install":{"kind":"pip"}},{"name":"src","install":{"kind":"git","repository":"r","commit":"c"}}]})")));
  CHECK_FALSE(implementation_source_available(
      parse(R"({"projectRevision":{"repository":"https://example.invalid/k"}})")));
  CHECK_FALSE(implementation_source_available(parse(R"({"projectRevision":{"version":"1.0"}})")));
  CHECK_FALSE(
      implementation_source_available(parse(R"({"buildVariants":[{"install":{"kind":"pip"}}]})")));
}

TEST_CASE("the seed runs' measurements and metrics read as their pages show",
          "[projections][kernelindex][seeds]") {
  auto shared = test::shared_dir();
  if (!shared) {
    WARN("../shared is absent: skipping the seed manifests");
    return;
  }
  struct Expected {
    const char* file;
    double mean;
    double sol, speedup, faster, total;
  };
  for (const Expected& e :
       {Expected{"run-17828.manifests.json", 159785, 0.946374, 10.2584, 16, 16},
        Expected{"run-38823.manifests.json", 1750693, 0.559752, 1.1676, 13, 16}}) {
    Json manifests = parse(test::read_file(*shared / "fixtures" / "seeds" / e.file));
    bool saw_run = false;
    for (const Json& m : manifests.as_array()) {
      const Json& spec = *m.find("spec");
      if (json_string(m, "kind") == "ExecutionEnvironment") {
        CHECK(environment_hardware(spec) == Hardware{"nvidia", "NVIDIA B200", "sm_100"});
      }
      if (json_string(m, "kind") != "BenchmarkRun") continue;
      saw_run = true;
      CHECK(primary_measurement(spec) == PrimaryMeasurement{"latency", "mean", "ns", e.mean});
      CHECK(source_native_metrics(spec) ==
            SourceNativeMetrics{e.sol, e.speedup, e.faster, e.total});
    }
    CHECK(saw_run);
  }
}

}  // namespace
}  // namespace evl
