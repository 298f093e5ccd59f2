// evledger gen — write a synthetic SOL-ExecBench-style KernelIndex catalog as JSON lines.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "events/jcs.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/gen/activity.h"
#include "tools/gen/sol_catalog.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger gen --runs N [--seed S] [--out FILE]\n"
    "       evledger gen --activity N --ledger DIR --runner-key FILE... --attestor-key FILE...\n"
    "                    --curator-key FILE [--seed S] [--log-key FILE]\n"
    "\n"
    "Writes a synthetic KernelIndex catalog shaped like SOL-ExecBench's leaderboard as JSON\n"
    "lines (one manifest per line, RFC 8785 canonical JSON) to FILE or standard output: N\n"
    "BenchmarkRuns with their protocols (stack v1.0, v1.1), environments (NVIDIA B200,\n"
    "H100), operation specs, workloads, team projects and one implementation per submission.\n"
    "Every digest reference resolves inside the catalog; some workloads come after their\n"
    "first runs, some runs tie exactly, some did not pass. The same --seed (default 1) gives\n"
    "the same bytes. Feed it to 'evledger import'. Statistics go to standard error.\n"
    "\n"
    "--activity N appends N synthetic events about the observed runs already in --ledger:\n"
    "controlled reruns by the runner keys (confirming: latency within 3%; contradicting:\n"
    "+15..30%; refuting: status incorrect_numerical; some on another GPU: inconclusive),\n"
    "attestations of all four types by the attestor keys, and a few retractions and\n"
    "supersessions by the curator key. Rerun manifests reuse the observation's protocol,\n"
    "workload, implementation and environment digests; reruns on another GPU name a lab\n"
    "ExecutionEnvironment (H100, or B200 for runs observed on an H100) that the first runner\n"
    "key registers. Repeat --runner-key and --attestor-key for several keys.\n"
    "Each runner key must hold the runner role and be granted with scope entries owner:<id>\n"
    "and host:<id>: the projections read a runner's owner and host from them, and two\n"
    "confirmations replicate a run only when both differ ('evledger key grant --role runner\n"
    "--scope owner:ID --scope host:ID'). Attestor keys need any grant, the curator key the\n"
    "curator role. Claimed times follow the runs, never the clock, so the same --seed, keys\n"
    "and ledger give the same events (a second run finds them present). Signs in parallel,\n"
    "appends 1000 per commit, signs checkpoints with --log-key (default DIR/keys/log.key).\n"
    "Exit status: 0 ok, 1 a key lacks its role or an event was rejected, 2 usage, 3 a key\n"
    "file or the ledger cannot be read.\n";

int run(const Args& args) {
  if (args.has("activity")) return gen_activity(args);
  if (!args.positional().empty()) return fail(usage_error("gen takes no positional arguments"));
  auto runs = args.require("runs");
  if (!runs) return fail(runs.error());
  // About 1.7 KB of JSON lines per run: 10^8 runs is some 170 GB, hours of output.
  auto n = args.get_u64("runs", 0, {0, 100000000, "10^8 runs are about 170 GB of JSON lines"});
  if (!n) return fail(n.error());
  auto seed = args.get_u64("seed", 1, kAnyU64);
  if (!seed) return fail(seed.error());
  std::string out_path = args.get("out").value_or("-");

  std::FILE* out = stdout;
  if (out_path != "-") {
    out = std::fopen(out_path.c_str(), "wb");
    if (out == nullptr) {
      return fail(io_error("cannot write " + out_path + ": " + std::strerror(errno)));
    }
  }
  gen::SolCatalogOptions options;
  options.runs = *n;
  options.seed = *seed;
  std::string line;
  auto stats = gen::generate_sol_catalog(options, [&](const Json& manifest) {
    line.clear();
    jcs_append(line, manifest);
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), out);
  });
  bool write_failed = std::fflush(out) != 0 || std::ferror(out) != 0;
  if (out != stdout) write_failed = std::fclose(out) != 0 || write_failed;
  if (write_failed) {
    return fail(io_error("cannot write " + (out_path == "-" ? "standard output" : out_path)));
  }
  std::fprintf(stderr,
               "%llu manifests: %llu runs (%llu not passed, %llu exact ties), %llu benchmarks "
               "(%llu workloads after their first runs), %llu teams, %llu implementations with "
               "source\n",
               static_cast<unsigned long long>(stats.manifests),
               static_cast<unsigned long long>(stats.runs),
               static_cast<unsigned long long>(stats.non_passed),
               static_cast<unsigned long long>(stats.ties),
               static_cast<unsigned long long>(stats.benchmarks),
               static_cast<unsigned long long>(stats.late_workloads),
               static_cast<unsigned long long>(stats.teams),
               static_cast<unsigned long long>(stats.source_available));
  return kExitOk;
}

}  // namespace

int cmd_gen(const std::vector<std::string>& argv) {
  return run_command(argv,
                     {{"runs"}, {"seed"}, {"out"}, {"activity"}, {"ledger"},
                      {"runner-key", true, true}, {"attestor-key", true, true}, {"curator-key"},
                      {"log-key"}},
                     kUsage, run);
}

}  // namespace evl::cli
