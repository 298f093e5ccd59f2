// evledger bench verify / audit-memory — the auditor's speed and memory, and proof generation.
#include <filesystem>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "ledger/audit.h"
#include "ledger/limits.h"
#include "ledger/tiles.h"
#include "tools/bench_support.h"

namespace evl::cli::bench {

int bench_audit_memory(const Args& args) {
  auto dir = args.require("ledger");
  if (!dir) return fail(dir.error());
  OpenOptions options;
  options.dir = *dir;
  options.read_only = true;
  auto ledger = Ledger::open(options);
  if (!ledger) return fail(ledger.error());
  AuditReport report = audit_ledger(**ledger);
  if (!report.status) return fail(report.status);
  print_memory_line(report.entries);
  return kExitOk;
}

namespace {

struct ProofFigures {
  double per_second = 0;
  size_t hashes = 0;
};

// Inclusion proofs for random indices in the newest tree, on this thread only.
Result<ProofFigures> proof_rate(const Ledger& ledger, unsigned count) {
  std::mt19937_64 rng(7);
  uint64_t size = ledger.size();
  ProofFigures figures;
  auto start = Clock::now();
  for (unsigned i = 0; i < count; ++i) {
    auto proof = ledger.inclusion_proof(rng() % size, size);
    if (!proof) return proof.error();
    figures.hashes += proof->size();
  }
  figures.per_second = count / seconds_since(start);
  return figures;
}

}  // namespace

int bench_verify(const Args& args) {
  auto entries = args.get_u64("entries", 50000, kBenchEntries);
  auto memory_entries = args.get_u64("memory-entries", 1000000, kBenchMemoryEntries);
  if (!entries) return fail(entries.error());
  if (!memory_entries) return fail(memory_entries.error());
  bool json = args.has("json");
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  auto note = [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  };

  note("loading a ledger");
  std::string dir = scratch_dir(args, "verify");
  auto bench = make_ledger(dir);
  if (!bench) return fail(bench.error());
  ThreadPool pool;
  if (Status s = fill(*bench, 0, *entries, pool); !s) return fail(s);

  note("Ed25519 verify rate");
  double verify_before = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  note("full audit");
  auto start = Clock::now();
  AuditReport report = audit_ledger(*bench->ledger);
  double audit_s = seconds_since(start);
  if (!report.status) return fail(report.status);
  double verify_after = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  double verify_all = (verify_before + verify_after) / 2;
  double audit_rate = report.entries / audit_s;

  note("inclusion proofs on one core");
  auto proofs = proof_rate(*bench->ledger, 50000);
  if (!proofs) return fail(proofs.error());
  bench->ledger.reset();
  std::filesystem::remove_all(dir);

  nlohmann::json memory = nlohmann::json::array();
  if (*memory_entries > 0) {
    note("peak memory of an audit, in child processes");
    std::string kept = scratch_dir(args, "audit-memory");
    std::string base = std::filesystem::path(kept).parent_path().string();
    auto built = run_child({"bench", "memory", "--entries", std::to_string(*memory_entries),
                            "--keep", kept},
                           kept);
    auto audited = built ? run_child({"bench", "audit-memory", "--ledger", kept}, kept)
                         : built;
    std::filesystem::remove_all(kept);
    if (!audited) return fail(audited.error());
    for (const auto& line : *audited) memory.push_back(nlohmann::json::parse(line));
  }

  nlohmann::ordered_json out;
  out["machine"] = {{"cores", cores},
                    {"ed25519VerifyPerSecondAllCores", std::round(verify_all)},
                    {"ed25519VerifyPerSecondAllCoresBeforeAfter",
                     {std::round(verify_before), std::round(verify_after)}}};
  out["audit"] = {{"entries", report.entries},
                  {"checkpoints", report.checkpoints},
                  {"treeNodes", report.tree_nodes},
                  {"perSecond", std::round(audit_rate)},
                  {"ratioToVerifyAllCores", audit_rate / verify_all},
                  {"target", "ratioToVerifyAllCores >= 0.85"}};
  out["proofs"] = {{"inclusionPerSecond1Core", std::round(proofs->per_second)},
                   {"averageHashes", static_cast<double>(proofs->hashes) / 50000},
                   {"target", "inclusionPerSecond1Core >= 50000"}};
  out["auditMemory"] = memory;
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("machine (%u cores): Ed25519 verify, 2 KiB, all cores %.0f /s\n", cores, verify_all);
  std::printf("audit of %llu entries, %llu checkpoints, %llu tree hashes\n",
              static_cast<unsigned long long>(report.entries),
              static_cast<unsigned long long>(report.checkpoints),
              static_cast<unsigned long long>(report.tree_nodes));
  std::printf("  %.0f entries/s = %.2f x all-core verify (target >= 0.85)\n", audit_rate,
              audit_rate / verify_all);
  std::printf("inclusion proofs: %.0f /s on one core (target >= 50,000)\n", proofs->per_second);
  for (const auto& m : memory) {
    std::printf("audit memory at %llu entries: peak RSS %.1f MB (heap %.1f MB, mapped file %.1f MB)"
                " (target <= 300 MB)\n",
                static_cast<unsigned long long>(m["entries"].get<uint64_t>()),
                m["peakRssMB"].get<double>(), m["rssAnonMB"].get<double>(),
                m["rssFileMB"].get<double>());
  }
  return kExitOk;
}

}  // namespace evl::cli::bench

namespace evl::cli::bench {

int bench_export(const Args& args) {
  auto entries = args.get_u64("entries", 200000, kBenchEntries);
  if (!entries) return fail(entries.error());
  bool json = args.has("json");
  std::string dir = scratch_dir(args, "export");
  std::string out_dir = dir + "-tiles";
  auto bench = make_ledger(dir);
  if (!bench) return fail(bench.error());
  ThreadPool pool;
  if (!json) std::fprintf(stderr, "bench: loading a ledger of %llu entries...\n",
                          static_cast<unsigned long long>(*entries));
  if (Status s = fill(*bench, 0, *entries, pool); !s) return fail(s);
  if (!json) std::fprintf(stderr, "bench: exporting tiles...\n");
  auto start = Clock::now();
  auto first = export_tiles(*bench->ledger, out_dir);
  double first_s = seconds_since(start);
  if (!first) return fail(first.error());
  // An incremental export after 1% more entries: only the new tiles are written.
  uint64_t more = std::max<uint64_t>(1, *entries / 100);
  if (Status s = fill(*bench, *entries, more, pool); !s) return fail(s);
  start = Clock::now();
  auto second = export_tiles(*bench->ledger, out_dir);
  double second_s = seconds_since(start);
  if (!second) return fail(second.error());
  bench->ledger.reset();
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(out_dir);
  double rate = first->size / first_s;
  nlohmann::ordered_json out;
  out["export"] = {{"entries", first->size},
                   {"seconds", first_s},
                   {"entriesPerSecond", std::round(rate)},
                   {"bytesWritten", first->bytes_written},
                   {"tiles", first->tiles_written},
                   {"bundles", first->bundles_written},
                   {"target", "entriesPerSecond >= 200000"}};
  out["incremental"] = {{"newEntries", second->size - second->previous_size},
                        {"seconds", second_s},
                        {"tiles", second->tiles_written},
                        {"bundles", second->bundles_written},
                        {"filesKept", second->files_kept}};
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("export of %llu entries (%.1f MB, %llu tiles, %llu bundles): %.0f entries/s "
              "(target >= 200,000)\n",
              static_cast<unsigned long long>(first->size), first->bytes_written / 1e6,
              static_cast<unsigned long long>(first->tiles_written),
              static_cast<unsigned long long>(first->bundles_written), rate);
  std::printf("incremental export of %llu new entries: %.3f s, %llu tiles and %llu bundles "
              "written\n",
              static_cast<unsigned long long>(second->size - second->previous_size), second_s,
              static_cast<unsigned long long>(second->tiles_written),
              static_cast<unsigned long long>(second->bundles_written));
  return kExitOk;
}

}  // namespace evl::cli::bench
