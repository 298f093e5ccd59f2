#include "tools/gen/sol_catalog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/manifest_check.h"
#include "events/manifest_digest.h"
#include "tools/gen/random.h"

namespace evl::gen {
namespace {

Json manifest(const char* kind, Json metadata, Json spec) {
  return O({{"apiVersion", kManifestApiVersion},
            {"kind", kind},
            {"metadata", std::move(metadata)},
            {"spec", std::move(spec)}});
}

std::string digest_of(const Json& m) {
  auto d = manifest_digest(m);
  EVL_ASSERT(d.has_value());
  return digest_text(*d);
}

double round_to(double v, double scale) { return std::round(v * scale) / scale; }

// "2026-07-07T02:26:56.362Z" (proleptic Gregorian; H. Hinnant's civil_from_days).
std::string utc_text(int64_t ms) {
  int64_t days = ms / 86400000, rem = ms % 86400000;
  days += 719468;
  int64_t era = days / 146097;
  unsigned doe = static_cast<unsigned>(days - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  unsigned d = doy - (153 * mp + 2) / 5 + 1;
  unsigned m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[96];  // room for any int64 year, which the compiler cannot rule out
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600000),
                static_cast<long long>(rem / 60000 % 60), static_cast<long long>(rem / 1000 % 60),
                static_cast<long long>(rem % 1000));
  return buf;
}

constexpr int64_t kStartMs = 1767571200000;    // 2026-01-05T00:00:00Z: stack v1.0
constexpr int64_t kStack11Ms = 1785542400000;  // 2026-08-01T00:00:00Z: stack v1.1
constexpr int64_t kEndMs = 1790726400000;      // 2026-09-30T00:00:00Z

struct Stack {
  const char* version;  // "v1.0"
  const char* slug;     // "v1-0"
};
constexpr std::array<Stack, 2> kStacks = {{{"v1.0", "v1-0"}, {"v1.1", "v1-1"}}};

struct Gpu {
  const char* product;
  const char* arch;
  const char* short_name;
  const char* slug;
  const char* worker;
};
constexpr std::array<Gpu, 2> kGpus = {{
    {"NVIDIA B200", "sm_100", "B200", "b200", "B200-ext-prod-"},
    {"NVIDIA H100", "sm_90", "H100", "h100", "H100-ext-prod-"},
}};

constexpr const char* kBases[] = {
    "fused_gqa_qkv_rope_qk_norm", "language_model_decoder_prenorm_attention_ffn_residual",
    "rmsnorm_residual_add", "swiglu_mlp", "moe_topk_router_softmax", "grouped_gemm_moe_experts",
    "flash_attention_causal", "paged_kv_cache_decode_attention", "rotary_embedding",
    "layernorm_gelu", "cross_entropy_logits", "mamba2_selective_scan", "fp8_blockwise_gemm",
    "int4_dequant_gemm", "conv1d_depthwise_causal", "softmax_topk_sampling",
    "linear_attention_chunked", "mla_latent_attention", "sliding_window_attention",
    "rmsnorm_fp8_quant", "embedding_bag_sum", "fused_adamw_update", "sparse_block_topk_attention",
    "gated_delta_net_chunked", "vision_patch_embed_layernorm", "alibi_bias_attention"};

constexpr const char* kTeams[] = {
    "Meridian Kernels", "Tensorworks", "Lattice Labs", "Kestrel AI", "Quanta Compute",
    "Ironwood", "Fathom", "Northstar ML", "Cobalt Systems", "Halcyon", "Vector Forge",
    "Parallax", "Bluefin", "Saffron Research", "Tidewater", "Orchid Compute", "Juniper Labs",
    "Basalt", "Aurora Kernels", "Pinecrest AI", "Granite Flow", "Lumen Systems", "Redshift",
    "Marlin Compute"};

std::string slug_of(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') out.push_back(static_cast<char>(c - 'A' + 'a'));
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out.push_back(c);
    else if (!out.empty() && out.back() != '-') out.push_back('-');
  }
  return out;
}

struct Team {
  std::string name, slug, repository, language;
  bool source = false;
  bool emitted = false;
};

struct Benchmark {
  std::string name;  // "091_fused_gqa_qkv_rope_qk_norm_backward"
  uint64_t hidden = 0;
  uint64_t cases = 0;
  bool single_case = false;
  bool late = false;
  bool workload_emitted = false;
  uint64_t late_runs = 0;
  std::string op_digest, workload_digest;
  std::optional<Json> workload;  // kept until emitted
  std::array<double, 2> sol_ns{};                 // per GPU
  std::array<std::array<double, 2>, 2> ref_ns{};  // per GPU, per stack
};

struct Measured {
  double speedup = 0;
  uint64_t latency_ns = 0;
  double sol_score = 0;
  uint64_t fast = 0;
};

class Generator {
 public:
  Generator(const SolCatalogOptions& options, const std::function<void(const Json&)>& emit)
      : options_(options), emit_(emit), rng_(options.seed ^ 0x5EC7A7A10C47A106ull) {}

  SolCatalogStats run();

 private:
  void put(const Json& m) {
    emit_(m);
    ++stats_.manifests;
  }
  void emit_fixed();
  Benchmark& benchmark(uint64_t index);
  Team& team(uint64_t index);
  void ensure_workload(Benchmark& b) {
    if (b.workload_emitted) return;
    put(*b.workload);
    b.workload.reset();
    b.workload_emitted = true;
  }
  Json operation(const Benchmark& b);
  Json workload(const Benchmark& b);
  std::string implementation(const Team& t, const Benchmark& b, uint64_t id, const Gpu& gpu);
  Measured measure(const Benchmark& b, size_t gpu, size_t stack);
  void run_one(int64_t at_ms, uint64_t id);

  SolCatalogOptions options_;
  const std::function<void(const Json&)>& emit_;
  Rng rng_;
  SolCatalogStats stats_;
  std::array<std::string, 2> protocol_digest_;
  std::array<std::array<std::string, 2>, 2> environment_digest_;  // per GPU, per stack
  uint64_t benchmark_count_ = 0;
  std::map<uint64_t, Benchmark> benchmarks_;
  std::vector<Team> teams_;
  std::map<std::array<uint64_t, 3>, Measured> last_passed_;  // (benchmark, GPU, stack)
};

void Generator::emit_fixed() {
  for (size_t s = 0; s < kStacks.size(); ++s) {
    const Stack& st = kStacks[s];
    Json protocol = manifest(
        "BenchmarkProtocol",
        O({{"name", std::string("sol-execbench-leaderboard-") + st.slug},
           {"title", std::string("SOL-ExecBench evaluation stack ") + st.version}}),
        O({{"harness", O({{"name", "SOL-ExecBench evaluation stack"}, {"version", st.version}})},
           {"correctness", O({{"reference", "definition reference implementation"},
                              {"comparator", "sol_execbench_eval"}})},
           {"measurement", O({{"timer", "harness_reported"}, {"primaryStatistic", "mean"}})},
           {"comparability",
            O({{"notes",
                "Suite-mean latency and SOL-Score as published by the SOL-ExecBench "
                "leaderboard. Comparable only within one definition, GPU type, and evaluation "
                "stack version."},
               {"family", "sol_execbench_leaderboard"}})}}));
    protocol_digest_[s] = digest_of(protocol);
    put(protocol);
    for (size_t g = 0; g < kGpus.size(); ++g) {
      const Gpu& gpu = kGpus[g];
      Json env = manifest(
          "ExecutionEnvironment",
          O({{"name", std::string("sol-execbench-") + gpu.slug + "-" + st.slug},
             {"title", std::string("SOL-ExecBench ") + gpu.product + ", stack " + st.version}}),
          O({{"hardware",
              O({{"vendor", "nvidia"}, {"product", gpu.product}, {"architecture", gpu.arch}})},
             {"software", O({{"libraries", O({{"evaluation_stack", st.version}})}})}}));
      environment_digest_[g][s] = digest_of(env);
      put(env);
    }
  }
}

Json Generator::operation(const Benchmark& b) {
  std::string family = slug_of(b.name.substr(4));
  return manifest(
      "OperationSpec",
      O({{"name", "sol-def-" + b.name}, {"title", "SOL-ExecBench definition " + b.name}}),
      O({{"family", family},
         {"axes", O({{"tokens", O({{"role", "variable"}, {"type", "integer"}, {"minimum", 1}})},
                     {"hidden", O({{"role", "constant"}, {"type", "integer"},
                                   {"value", b.hidden}})}})},
         {"inputs",
          A({O({{"name", "x"},
                {"tensor", O({{"shape", A({"tokens", "hidden"})}, {"dtype", "bf16"},
                              {"layout", "row_major"}})}}),
             O({{"name", "weight"},
                {"tensor", O({{"shape", A({"hidden"})}, {"dtype", "bf16"},
                              {"layout", "contiguous"}})}})})},
         {"outputs", A({O({{"name", "y"},
                           {"tensor", O({{"shape", A({"tokens", "hidden"})}, {"dtype", "bf16"},
                                         {"layout", "row_major"}})}})})},
         {"semantics", O({{"expression", "y = reference(" + b.name + ", x, weight)"},
                          {"mutation", "none"},
                          {"determinism", "deterministic"}})}}));
}

Json Generator::workload(const Benchmark& b) {
  Json correctness_suite =
      O({{"comparator", "sol_execbench_eval"},
         {"description", "Correctness must pass on every case in the SOL evaluation stack."}});
  if (b.single_case) {
    uint64_t tokens = 4096;
    return manifest(
        "WorkloadCase",
        O({{"name", "sol-case-" + b.name}, {"title", b.name + ", tokens 4096"}}),
        O({{"operationSpecDigest", b.op_digest},
           {"axes", O({{"tokens", tokens}, {"hidden", b.hidden}})},
           {"tensors",
            O({{"x", O({{"shape", A({tokens, b.hidden})}, {"dtype", "bf16"},
                        {"data", O({{"generator", "normal"}, {"seed", 1000 + b.hidden}})}})},
               {"weight", O({{"shape", A({b.hidden})}, {"dtype", "bf16"},
                             {"data", O({{"generator", "normal"}, {"seed", 2000 + b.hidden}})}})}})},
           {"correctness", O({{"comparator", "sol_execbench_eval"},
                              {"maxAbsoluteError", 0.01},
                              {"maxRelativeError", 0.01}})}}));
  }
  Json cases = Json::array();
  for (uint64_t c = 0; c < b.cases; ++c) {
    cases.as_array().push_back(
        O({{"externalId", std::to_string(c)},
           {"axes", O({{"tokens", uint64_t{128} << (c % 8)}, {"hidden", b.hidden * (1 + c / 8)}})}}));
  }
  return manifest("WorkloadSuite",
                  O({{"name", "sol-suite-" + b.name},
                     {"title", b.name + ", suite of " + std::to_string(b.cases) + " cases"}}),
                  O({{"operationSpecDigest", b.op_digest},
                     {"cases", std::move(cases)},
                     {"correctness", std::move(correctness_suite)},
                     {"aggregation", O({{"metric", "latency"}, {"statistic", "mean"}})}}));
}

Benchmark& Generator::benchmark(uint64_t index) {
  auto it = benchmarks_.find(index);
  if (it != benchmarks_.end()) return it->second;
  Benchmark b;
  uint64_t number = index + 1;
  std::string base = kBases[rng_.below(std::size(kBases))];
  bool backward = rng_.chance(0.5);
  if (number == 91) base = kBases[0], backward = true;  // the seeds' definitions
  if (number == 56) base = kBases[1], backward = true;
  char prefix[8];
  std::snprintf(prefix, sizeof prefix, "%03llu_", static_cast<unsigned long long>(number));
  b.name = prefix + base + (backward ? "_backward" : "_forward");
  b.hidden = uint64_t{1024} << rng_.below(4);
  b.single_case = rng_.chance(0.125);
  b.cases = b.single_case ? 1 : 4 + rng_.below(21);
  b.late = rng_.chance(0.1);
  double u = rng_.uniform();
  b.sol_ns[0] = std::round(5000 + 1995000 * u * u * u);
  b.sol_ns[1] = std::round(b.sol_ns[0] * (1.6 + 0.8 * rng_.uniform()));
  for (size_t g = 0; g < 2; ++g) {
    double v = rng_.uniform();
    b.ref_ns[g][0] = std::round(b.sol_ns[g] * (3 + 17 * v * v));
    b.ref_ns[g][1] = std::round(b.ref_ns[g][0] * (0.95 + 0.1 * rng_.uniform()));
  }
  Json op = operation(b);
  b.op_digest = digest_of(op);
  put(op);
  Json w = workload(b);
  b.workload_digest = digest_of(w);
  b.workload = std::move(w);
  ++stats_.benchmarks;
  auto& stored = benchmarks_.emplace(index, std::move(b)).first->second;
  if (!stored.late) ensure_workload(stored);
  return stored;
}

Team& Generator::team(uint64_t index) {
  Team& t = teams_[index];
  if (t.emitted) return t;
  t.emitted = true;
  ++stats_.teams;
  Json spec = O({{"name", t.name}, {"kind", "library"}});
  if (t.source) spec.set("repository", t.repository);
  spec.set("host", O({{"kind", "other"}, {"id", "git.example.org/" + t.slug + "/sol-kernels"}}));
  put(manifest("SoftwareProject", O({{"name", "sol-team-" + t.slug}, {"title", t.name}}),
               std::move(spec)));
  return t;
}

std::string Generator::implementation(const Team& t, const Benchmark& b, uint64_t id,
                                      const Gpu& gpu) {
  std::string ids = std::to_string(id);
  Json revision = t.source ? O({{"repository", t.repository}, {"commit", rng_.hex(40)}})
                           : O({{"version", "submission-" + ids}});
  std::string ext = t.language == "triton" ? ".py" : ".cu";
  Json spec =
      O({{"projectRevision", revision},
         {"operation", O({{"specDigest", b.op_digest}})},
         {"callable", O({{"language", t.language},
                         {"path", "solutions/" + b.name + "/kernel" + ext},
                         {"symbol", "run"},
                         {"interface", "pytorch"}})},
         {"support", O({{"hardwareArchitectures", A({gpu.arch})},
                        {"productsTested", A({gpu.product})},
                        {"dtypes", A({"bf16"})}})}});
  if (t.source) {
    spec.set("buildVariants",
             A({O({{"name", "source"},
                   {"install", O({{"kind", "git"}, {"repository", t.repository},
                                  {"commit", revision.find("commit")->as_string()}})}})}));
    spec.set("licensing", O({{"declared", "Apache-2.0"}, {"evidence", O({{"path", "LICENSE"}})}}));
    ++stats_.source_available;
  } else {
    spec.set("licensing", O({{"declared", "NOASSERTION"}}));
  }
  Json m = manifest("ImplementationRevision",
                    O({{"name", "sol-impl-" + ids},
                       {"title", t.name + " submission " + ids + " for " + b.name}}),
                    std::move(spec));
  put(m);
  return digest_of(m);
}

Measured Generator::measure(const Benchmark& b, size_t gpu, size_t stack) {
  double sol = b.sol_ns[gpu], ref = b.ref_ns[gpu][stack];
  double max_speedup = ref / sol;  // at least 3 by construction
  double u = rng_.uniform();
  double speedup = rng_.chance(0.01) ? max_speedup * (1.0 + 0.05 * u)  // beats the bound
                                     : 0.5 + (max_speedup * 0.98 - 0.5) * u * std::sqrt(u);
  Measured m;
  m.speedup = std::max(0.0001, round_to(speedup, 1e4));
  m.latency_ns = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(ref / m.speedup)));
  m.sol_score = round_to(std::min(1.0, sol / static_cast<double>(m.latency_ns)), 1e6);
  for (uint64_t c = 0; c < b.cases; ++c) {
    if (m.speedup * (0.7 + 0.6 * rng_.uniform()) > 1.0) ++m.fast;
  }
  return m;
}

void Generator::run_one(int64_t at_ms, uint64_t id) {
  size_t stack = at_ms >= kStack11Ms ? 1 : 0;
  size_t g = rng_.chance(0.7) ? 0 : 1;
  const Gpu& gpu = kGpus[g];
  // Popular benchmarks take more runs: index = B * u^1.5, which skews towards low numbers.
  double u = rng_.uniform();
  uint64_t index = static_cast<uint64_t>(static_cast<double>(benchmark_count_) * u * std::sqrt(u));
  Benchmark& b = benchmark(index);
  double v = rng_.uniform();
  Team& t = team(static_cast<uint64_t>(teams_.size() * v * v));
  std::string impl = implementation(t, b, id, gpu);

  double roll = rng_.uniform();
  const char* status = roll < 0.03   ? "incorrect_numerical"
                       : roll < 0.05 ? "runtime_error"
                       : roll < 0.06 ? "compile_error"
                       : roll < 0.07 ? "timeout"
                                     : "passed";
  bool passed = std::string_view(status) == "passed";
  bool timed = passed || std::string_view(status) == "incorrect_numerical";
  Json metrics = Json::object();
  Json spec = O({{"status", status}});
  if (timed) {
    std::array<uint64_t, 3> group = {index, g, stack};
    Measured m;
    auto last = last_passed_.find(group);
    if (passed && last != last_passed_.end() && rng_.chance(0.03)) {
      m = last->second;  // an exact tie with an earlier run of the group
      ++stats_.ties;
    } else {
      m = measure(b, g, stack);
    }
    if (passed) last_passed_[group] = m;
    metrics = O({{"sol_score", passed ? m.sol_score : 0.0},
                 {"latency_ms", static_cast<double>(m.latency_ns) / 1e6},
                 {"avg_speedup", m.speedup},
                 {"fast_1_count", passed ? m.fast : 0},
                 {"fast_1_total", b.cases}});
    spec.set("timing", O({{"latencyNs", O({{"mean", m.latency_ns}})},
                          {"primaryStatistic", "mean"}}));
  } else {
    metrics = O({{"fast_1_count", 0}, {"fast_1_total", b.cases}});
  }
  if (!passed) ++stats_.non_passed;
  std::string ids = std::to_string(id);
  spec.set("observedAt", utc_text(at_ms));
  spec.set("sourceNative", O({{"source", "sol-execbench"},
                              {"metrics", std::move(metrics)},
                              {"benchmark", b.name},
                              {"externalId", ids}}));
  spec.set("protocolDigest", protocol_digest_[stack]);
  spec.set("workloadDigest", b.workload_digest);
  spec.set("environmentDigest", environment_digest_[g][stack]);
  spec.set("implementationDigest", impl);
  put(manifest("BenchmarkRun",
               O({{"name", "sol-submission-" + ids},
                  {"title", t.name + " \xC2\xB7 " + b.name + " \xC2\xB7 " + gpu.short_name},
                  {"labels", O({{"worker", gpu.worker + std::to_string(rng_.below(4000))}})}}),
               std::move(spec)));
  ++stats_.runs;
  if (!b.workload_emitted && ++b.late_runs >= 2) {
    ensure_workload(b);
    ++stats_.late_workloads;
  }
}

SolCatalogStats Generator::run() {
  benchmark_count_ = std::max<uint64_t>(3, std::min<uint64_t>(235, options_.runs / 30));
  size_t team_count = static_cast<size_t>(
      std::max<uint64_t>(4, std::min<uint64_t>(std::size(kTeams), options_.runs / 50)));
  for (size_t i = 0; i < team_count; ++i) {
    Team t;
    t.name = kTeams[i];
    t.slug = slug_of(t.name);
    t.repository = "https://git.example.org/" + t.slug + "/sol-kernels";
    t.source = rng_.chance(0.4);
    static constexpr const char* kLanguages[] = {"triton", "cuda", "cute_dsl", "cutlass"};
    t.language = kLanguages[rng_.below(4)];
    teams_.push_back(std::move(t));
  }
  emit_fixed();
  double span = static_cast<double>(kEndMs - kStartMs);
  double gap = options_.runs == 0 ? 0 : span / static_cast<double>(options_.runs);
  int64_t at = kStartMs;
  uint64_t id = 10000 + rng_.below(5000);
  for (uint64_t r = 0; r < options_.runs; ++r) {
    at += static_cast<int64_t>(gap * 2 * rng_.uniform());
    id += 1 + rng_.below(4);
    run_one(at, id);
  }
  for (auto& [index, b] : benchmarks_) {
    if (b.workload_emitted) continue;
    ensure_workload(b);
    ++stats_.late_workloads;
  }
  return stats_;
}

}  // namespace

SolCatalogStats generate_sol_catalog(const SolCatalogOptions& options,
                                     const std::function<void(const Json&)>& emit) {
  return Generator(options, emit).run();
}

}  // namespace evl::gen
