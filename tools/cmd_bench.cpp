// evledger bench — evledger's throughput as ratios to this machine's limits, in one run.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include <sodium.h>

#include <nlohmann/json.hpp>

#include "ledger/audit.h"
#include "ledger/limits.h"
#include "tools/bench_support.h"
#include "tools/commands.h"

namespace evl::cli {

namespace bench {
int bench_verify(const Args& args);
int bench_audit_memory(const Args& args);
int bench_export(const Args& args);
int bench_import(const Args& args);
int bench_rebuild(const Args& args);
int bench_serve(const Args& args);
int bench_witness(const Args& args);
int bench_publish(const Args& args);
int bench_pages(const Args& args);
int bench_mirror(const Args& args);
int bench_mirror_pull(const Args& args);
}  // namespace bench

namespace {

using namespace bench;

constexpr const char* kUsage =
    "usage: evledger bench append [--json] [--entries N] [--memory-entries M] [--dir DIR]\n"
    "       evledger bench verify [--json] [--entries N] [--memory-entries M] [--dir DIR]\n"
    "       evledger bench export [--json] [--entries N] [--dir DIR]\n"
    "       evledger bench import [--json] [--entries RUNS] [--memory-events M] [--dir DIR]\n"
    "       evledger bench memory --entries M [--keep DIR] [--dir DIR]\n"
    "       evledger bench audit-memory --ledger DIR\n"
    "       evledger bench rebuild --ledger DIR\n"
    "       evledger bench serve [--json] [--entries N] [--parts reads,appends,publish,pages]\n"
    "                            [--dir DIR]\n"
    "       evledger bench witness [--json] [--requests N] [--logs K] [--publish-entries N]\n"
    "                              [--dir DIR]\n"
    "       evledger bench publish [--json] [--entries RUNS] [--rounds N] [--dir DIR]\n"
    "       evledger bench pages [--json] [--dir DIR]\n"
    "       evledger bench mirror [--json] [--entries N] [--memory-entries M] [--keep DIR]\n"
    "                             [--dir DIR]\n"
    "\n"
    "Every figure is reported next to this machine's limits measured in the same run, as a\n"
    "ratio: shared machines are noisy, ratios much less so.\n"
    "append  the machine's Ed25519 verify rate (2 KiB messages) on one and on all cores\n"
    "        (measured before and after evledger's phases, averaged), its raw LMDB batched\n"
    "        durable append rate (2 KiB values, 1,000 per transaction) and single-commit time;\n"
    "        evledger's sustained durable append of N signed 2 KiB entries (default 50,000) in\n"
    "        batches of 1,000 from 8 publisher threads at once, each sending its next batch\n"
    "        when the last is durable (group commits), with and without the Merkle tree and\n"
    "        checkpoints, and the single-entry append latency; and, in a child process, peak\n"
    "        memory at 10^5 and M entries (default 10^6; 0 skips it).\n"
    "verify  a full audit of a ledger of N entries (default 50,000) against the all-core\n"
    "        verify rate, inclusion proofs generated per second on one core, and, in child\n"
    "        processes, the peak memory of auditing a ledger of M entries (default 10^6).\n"
    "export  a full C2SP tile export of a ledger of N entries (default 200,000), then an\n"
    "        incremental one after 1% more.\n"
    "import  imports a generated catalog of RUNS runs (default 10,000: about 20,500\n"
    "        manifests) end to end with projections, then rebuilds the projections; appends\n"
    "        RUNS activity events (reruns, attestations, corrections) and rebuilds again;\n"
    "        and, in child processes, the peak memory of a rebuild of ledgers of 10^5 and M\n"
    "        events (a catalog's manifests; default 10^6; 0 skips it). Rates are also given\n"
    "        as ratios to the all-core verify rate, the rebuild's target too.\n"
    "memory  appends M entries to a fresh ledger and prints memory at 10^5, 10^6, ... entries;\n"
    "        --keep DIR leaves the ledger in DIR.\n"
    "audit-memory  audits the ledger in DIR and prints the audit's peak memory.\n"
    "rebuild  rebuilds the projections of the ledger in DIR (its log key in DIR/keys/log.key)\n"
    "        and prints the time and the peak memory.\n"
    "serve   evledger serve on loopback: static reads (checkpoint, a full tile, a full bundle of a\n"
    "        20,000-entry log) with wrk -t1 -c32 against nginx serving the same export, the\n"
    "        server's memory after 10^4 and 10^6 requests and its descriptors before and after;\n"
    "        POST /add-event of N signed 2 KiB entries (default 50,000) from 64 clients, 1 and\n"
    "        100 per request, against the local sustained append measured in the same run.\n"
    "        Needs wrk and nginx (tools/scripts/install-deps.sh installs them). Then publish\n"
    "        (with GET /api/v1/runs/{digest} on its catalog) and pages. --parts runs only\n"
    "        the parts it names.\n"
    "publish  a publisher's import --to of a generated catalog of RUNS runs (default 10,000:\n"
    "        about 20,500 manifests) into evledger serve on loopback, against the same import\n"
    "        into a local ledger, both with projections, N rounds of each (default 3),\n"
    "        alternating; the ratio of the medians (target >= 0.7).\n"
    "pages   the pages of evledger serve over a catalog of 2,000 runs and a comparison group of\n"
    "        260: requests/s of each page type (wrk -t1 -c32), the run page's and the group\n"
    "        page's p50 and p95 one request at a time (target p95 < 20 ms), and the run page\n"
    "        through nginx's cache (tools/nginx/evledger-locations.conf) against it directly.\n"
    "witness  evledger's witness (POST /add-checkpoint over loopback HTTP, each answered\n"
    "        after its compare-and-store is durable) driven by foreign logs: one log alone\n"
    "        (one fsync per request), then K logs at once (default 64, sharing group commits),\n"
    "        N requests in all (default 20,000), against this machine's single durable LMDB\n"
    "        commit; target >= 1,000/s. Then the log's publication delay (p50, p99: from a\n"
    "        commit to the witnessed checkpoint covering it) with 3 local witnesses and quorum\n"
    "        2 while 8 publishers append N signed 2 KiB entries (default 20,000), 10 a batch.\n"
    "mirror  evledger mirror's catch-up of N signed 2 KiB entries (default 10^6) from a local\n"
    "        evledger serve --read-only, in a child process, against the local audit of the\n"
    "        same ledger (verify --ledger); target >= 0.8 x. Peak RSS of the mirror at M\n"
    "        (default 10^5) and N entries. --keep DIR keeps the upstream in DIR (its keys in\n"
    "        DIR/keys/) for the next run with --keep DIR, which loads only the entries it\n"
    "        lacks: generating 10^6 takes minutes.\n"
    "Scratch data goes under --dir (default: the system temp dir) and is removed afterwards.\n";

int bench_memory(const Args& args) {
  auto entries = args.get_u64("entries", 1000000, kBenchEntries);
  if (!entries) return fail(entries.error());
  std::string dir = args.get("keep").value_or(scratch_dir(args, "memory"));
  auto bench = make_ledger(dir);
  if (!bench) return fail(bench.error());
  ThreadPool pool;
  uint64_t next_report = 100000;
  Status filled = fill(*bench, 0, *entries, pool, [&](uint64_t done) {
    if (done < next_report && done != *entries) return;
    print_memory_line(done);
    while (next_report <= done) next_report *= 10;
  });
  if (!filled) return fail(filled);
  bench->ledger.reset();
  if (!args.has("keep")) std::filesystem::remove_all(dir);
  return kExitOk;
}

int bench_append(const Args& args) {
  auto entries = args.get_u64("entries", 50000, kBenchEntries);
  auto memory_entries = args.get_u64("memory-entries", 1000000, kBenchMemoryEntries);
  if (!entries) return fail(entries.error());
  if (!memory_entries) return fail(memory_entries.error());
  bool json = args.has("json");
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  auto note = [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  };

  note("Ed25519 verify rate");
  double verify_1 = ed25519_verify_rate(1, kEntryBytes, 1.5);
  // The all-core rate is measured before and after evledger's own phases and averaged, so
  // that noise from other tenants of a shared machine weighs on both sides of the ratio.
  double verify_all_before = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  double sign_1 = ed25519_sign_rate(kEntryBytes, 1.0);

  note("raw LMDB append rate");
  std::string lmdb_dir = scratch_dir(args, "lmdb");
  auto lmdb = lmdb_append_limits(lmdb_dir, 50000, kBatch, kEntryBytes, 200);
  std::filesystem::remove_all(lmdb_dir);
  if (!lmdb) return fail(lmdb.error());

  note("signing entries");
  Bytes seed(32);
  randombytes_buf(seed.data(), seed.size());
  std::string dir = scratch_dir(args, "append");
  std::string bare_dir = scratch_dir(args, "append-no-tree");
  auto bench = make_ledger(dir, true, seed);
  if (!bench) return fail(bench.error());
  // The same entries into a ledger without the Merkle tree and checkpoints: what they cost.
  auto bare = make_ledger(bare_dir, false, seed);
  if (!bare) return fail(bare.error());
  ThreadPool pool;
  auto batch = sign_many(bench->importer, 0, *entries, pool);

  note("evledger stateless checks alone");
  auto check_start = Clock::now();
  std::atomic<uint64_t> check_failures{0};
  pool.parallel_for(batch.size(), [&](size_t i) { check_failures += !check_entry(batch[i]); });
  double check_rate = static_cast<double>(batch.size()) / seconds_since(check_start);
  if (check_failures != 0) return fail(rejected("a benchmark entry failed its checks"));

  note("evledger sustained append, with and without the tree, interleaved");
  // Publishers' batches of kBatch entries from kClients threads at once, as a server's sessions
  // append them: the ledger always has checked entries waiting while it commits. Halves alternate
  // between the two ledgers so that drift in a shared machine's load falls on both alike.
  double append_s = 0, bare_s = 0;
  uint64_t added = 0, bare_added = 0;
  constexpr size_t kRounds = 2;
  for (size_t r = 0; r < kRounds; ++r) {
    size_t from = batch.size() * r / kRounds, to = batch.size() * (r + 1) / kRounds;
    std::span<const Bytes> part(batch.data() + from, to - from);
    auto seconds = append_from_clients(*bench->ledger, part, kBatch, kClients, added);
    if (!seconds) return fail(seconds.error());
    append_s += *seconds;
    seconds = append_from_clients(*bare->ledger, part, kBatch, kClients, bare_added);
    if (!seconds) return fail(seconds.error());
    bare_s += *seconds;
  }
  double append_rate = static_cast<double>(added) / append_s;
  double bare_rate = static_cast<double>(bare_added) / bare_s;
  bare->ledger.reset();
  std::filesystem::remove_all(bare_dir);

  note("evledger single-entry latency");
  constexpr unsigned kSingles = 1000;
  auto singles = sign_many(bench->importer, *entries, kSingles, pool);
  std::vector<double> latencies;
  for (auto& e : singles) {
    auto t0 = Clock::now();
    std::span<const Bytes> one(&e, 1);
    auto o = bench->ledger->append(one);
    if (!o[0].status) return fail(o[0].status);
    latencies.push_back(seconds_since(t0) * 1000);
  }
  bench->ledger.reset();
  std::filesystem::remove_all(dir);

  batch.clear();
  batch.shrink_to_fit();
  double verify_all_after = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  double verify_all = (verify_all_before + verify_all_after) / 2;
  nlohmann::json memory = nlohmann::json::array();
  if (*memory_entries > 0) {
    note("peak memory in a child process");
    auto lines = run_child({"bench", "memory", "--entries", std::to_string(*memory_entries),
                            "--dir", std::filesystem::path(dir).parent_path().string()},
                           dir);
    if (!lines) return fail(lines.error());
    for (const auto& line : *lines) memory.push_back(nlohmann::json::parse(line));
  }

  nlohmann::ordered_json out;
  out["machine"] = {{"cores", cores},
                    {"ed25519VerifyPerSecond1Core", std::round(verify_1)},
                    {"ed25519VerifyPerSecondAllCores", std::round(verify_all)},
                    {"ed25519VerifyPerSecondAllCoresBeforeAfter",
                     {std::round(verify_all_before), std::round(verify_all_after)}},
                    {"ed25519SignPerSecond1Core", std::round(sign_1)},
                    {"lmdbAppendPerSecond", std::round(lmdb->entries_per_second)},
                    {"lmdbSingleCommitMs", lmdb->single_commit_ms}};
  out["append"] = {{"entries", added},
                   {"checksAlonePerSecond", std::round(check_rate)},
                   {"entryBytes", kEntryBytes},
                   {"mode", "batches of " + std::to_string(kBatch) + " from " +
                                std::to_string(kClients) +
                                " publisher threads; entries staged as checked, group commits "
                                "of up to 16384"},
                   {"perSecond", std::round(append_rate)},
                   {"ratioToVerifyAllCores", append_rate / verify_all},
                   {"ratioToLmdbAppend", append_rate / lmdb->entries_per_second},
                   {"perSecondWithoutTree", std::round(bare_rate)},
                   {"treeCost", 1 - append_rate / bare_rate},
                   {"target", "ratioToVerifyAllCores >= 0.75"}};
  out["latency"] = {{"appends", kSingles},
                    {"p50Ms", percentile(latencies, 0.50)},
                    {"p99Ms", percentile(latencies, 0.99)},
                    {"maxMs", percentile(latencies, 1.0)},
                    {"p99OverLmdbSingleCommit", percentile(latencies, 0.99) / lmdb->single_commit_ms},
                    {"target", "p99Ms <= 2"}};
  out["memory"] = memory;
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("machine (%u cores)\n", cores);
  std::printf("  Ed25519 verify, 2 KiB     %10.0f /s on 1 core, %.0f /s on all cores\n", verify_1,
              verify_all);
  std::printf("  Ed25519 sign, 2 KiB       %10.0f /s on 1 core\n", sign_1);
  std::printf("  LMDB append, 2 KiB x1000  %10.0f /s; single durable commit %.3f ms\n",
              lmdb->entries_per_second, lmdb->single_commit_ms);
  std::printf("evledger append (%llu signed 2 KiB entries in batches of %llu from %u publisher\n"
              "  threads: each entry staged as soon as it is checked, committed durably in groups\n"
              "  of up to 16,384)\n",
              static_cast<unsigned long long>(added), static_cast<unsigned long long>(kBatch),
              kClients);
  std::printf("  sustained                 %10.0f /s = %.2f x all-core verify (target >= 0.75), "
              "%.2f x raw LMDB\n", append_rate, append_rate / verify_all,
              append_rate / lmdb->entries_per_second);
  std::printf("  without the tree           %10.0f /s: the tree and checkpoints cost %.1f%% "
              "(target <= 10%%)\n", bare_rate, 100 * (1 - append_rate / bare_rate));
  std::printf("  checks alone (decode, canonical form, signatures) %.0f /s = %.2f x all-core verify\n",
              check_rate, check_rate / verify_all);
  std::printf("  single-entry latency      p50 %.3f ms, p99 %.3f ms (target <= 2), max %.3f ms\n",
              percentile(latencies, 0.5), percentile(latencies, 0.99),
              percentile(latencies, 1.0));
  for (const auto& m : memory) {
    std::printf("  memory at %8llu entries  peak RSS %.1f MB (heap %.1f MB, mapped file %.1f MB)\n",
                static_cast<unsigned long long>(m["entries"].get<uint64_t>()),
                m["peakRssMB"].get<double>(), m["rssAnonMB"].get<double>(),
                m["rssFileMB"].get<double>());
  }
  return kExitOk;
}

int run(const Args& args) {
  if (args.positional().size() != 1) return fail(usage_error("bench needs a benchmark name"));
  const std::string& which = args.positional()[0];
  if (which == "append") return bench_append(args);
  if (which == "verify") return bench_verify(args);
  if (which == "memory") return bench_memory(args);
  if (which == "export") return bench_export(args);
  if (which == "import") return bench_import(args);
  if (which == "audit-memory") return bench_audit_memory(args);
  if (which == "rebuild") return bench_rebuild(args);
  if (which == "serve") return bench_serve(args);
  if (which == "witness") return bench_witness(args);
  if (which == "publish") return bench_publish(args);
  if (which == "pages") return bench_pages(args);
  if (which == "mirror") return bench_mirror(args);
  if (which == "mirror-pull") return bench_mirror_pull(args);
  return fail(usage_error("unknown bench '" + which + "'; see --help"));
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  return run_command(argv,
                     {{"json", false}, {"entries"}, {"memory-entries"}, {"memory-events"}, {"dir"}, {"keep"},
                      {"ledger"}, {"requests"}, {"logs"}, {"publish-entries"}, {"rounds"},
                      {"from"}, {"vkey"}, {"parts"}},
                     kUsage, run);
}

}  // namespace evl::cli
