// evledger gen — write a synthetic SOL-ExecBench-style KernelIndex catalog as JSON lines.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "events/jcs.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/gen/sol_catalog.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger gen --runs N [--seed S] [--out FILE]\n"
    "\n"
    "Writes a synthetic KernelIndex catalog shaped like SOL-ExecBench's leaderboard as JSON\n"
    "lines (one manifest per line, RFC 8785 canonical JSON) to FILE or standard output: N\n"
    "BenchmarkRuns with their protocols (stack v1.0, v1.1), environments (NVIDIA B200,\n"
    "H100), operation specs, workloads, team projects and one implementation per submission.\n"
    "Every digest reference resolves inside the catalog; some workloads come after their\n"
    "first runs, some runs tie exactly, some did not pass. The same --seed (default 1) gives\n"
    "the same bytes. Feed it to 'evledger import'. Statistics go to standard error.\n";

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("gen takes no positional arguments"));
  auto runs = args.require("runs");
  if (!runs) return fail(runs.error());
  auto n = args.get_u64("runs", 0);
  if (!n) return fail(n.error());
  auto seed = args.get_u64("seed", 1);
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
  return run_command(argv, {{"runs"}, {"seed"}, {"out"}}, kUsage, run);
}

}  // namespace evl::cli
