// evledger bench import / rebuild — the evidence domain's throughput: importing a KernelIndex
// catalog end to end (parse, canonicalize, sign, verify, append, project) and rebuilding the
// projections from the log, against the machine's Ed25519 verify rate.
#include <filesystem>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "events/jcs.h"
#include "ledger/limits.h"
#include "projections/ledger_hook.h"
#include "tools/bench_support.h"
#include "tools/gen/sol_catalog.h"
#include "tools/importer.h"

namespace evl::cli::bench {

namespace {

std::string catalog_jsonl(uint64_t runs, uint64_t seed) {
  std::string out;
  gen::generate_sol_catalog({runs, seed}, [&](const Json& manifest) {
    jcs_append(out, manifest);
    out += '\n';
  });
  return out;
}

struct Loaded {
  BenchLedger bench;
  ImportTotals totals;
  double seconds = 0;
};

// A fresh ledger with projections, and the catalog of `runs` runs imported into it.
Result<Loaded> load_catalog(const std::string& dir, uint64_t runs) {
  std::string catalog = catalog_jsonl(runs, 11);
  auto bench = make_ledger(dir, true, {}, make_projection_hook());
  if (!bench) return bench.error();
  std::istringstream in(std::move(catalog));
  auto reader = ManifestReader::from_stream(in, "generated catalog");
  Importer importer(*bench->ledger, bench->importer);
  auto start = Clock::now();
  Status imported = importer.import(*reader);
  double seconds = seconds_since(start);
  if (!imported) return imported;
  if (importer.totals().rejected != 0) {
    return rejected("the generated catalog had " + std::to_string(importer.totals().rejected) +
                    " rejected documents");
  }
  return Loaded{std::move(bench.value()), importer.totals(), seconds};
}

}  // namespace

int bench_import(const Args& args) {
  auto runs = args.get_u64("entries", 10000);
  if (!runs) return fail(runs.error());
  bool json = args.has("json");
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (!json) std::fprintf(stderr, "bench: Ed25519 verify rate...\n");
  double verify_before = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  if (!json) std::fprintf(stderr, "bench: importing a catalog of %llu runs...\n",
                          static_cast<unsigned long long>(*runs));
  std::string dir = scratch_dir(args, "import");
  auto loaded = load_catalog(dir, *runs);
  if (!loaded) return fail(loaded.error());
  double import_rate = loaded->totals.documents / loaded->seconds;
  if (!json) std::fprintf(stderr, "bench: rebuilding the projections...\n");
  uint64_t events = loaded->bench.ledger->size();
  auto start = Clock::now();
  if (Status s = loaded->bench.ledger->rebuild_state(); !s) return fail(s);
  double rebuild_s = seconds_since(start);
  loaded->bench.ledger.reset();
  std::filesystem::remove_all(dir);
  double verify_after = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  double verify_all = (verify_before + verify_after) / 2;
  double rebuild_rate = events / rebuild_s;

  nlohmann::ordered_json out;
  out["machine"] = {{"cores", cores}, {"ed25519VerifyPerSecondAllCores", std::round(verify_all)}};
  out["import"] = {{"manifests", loaded->totals.documents},
                   {"observations", loaded->totals.observations},
                   {"seconds", loaded->seconds},
                   {"manifestsPerSecond", std::round(import_rate)},
                   {"ratioToVerifyAllCores", import_rate / verify_all},
                   {"target", "manifestsPerSecond >= 10000"}};
  out["rebuild"] = {{"events", events},
                    {"seconds", rebuild_s},
                    {"eventsPerSecond", std::round(rebuild_rate)},
                    {"target", "eventsPerSecond >= 100000"}};
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("machine (%u cores): Ed25519 verify, 2 KiB, all cores %.0f /s\n", cores, verify_all);
  std::printf("import of %llu manifests (%llu observations), projections included: %.0f /s = "
              "%.2f x all-core verify (target >= 10,000 /s)\n",
              static_cast<unsigned long long>(loaded->totals.documents),
              static_cast<unsigned long long>(loaded->totals.observations), import_rate,
              import_rate / verify_all);
  std::printf("projection rebuild of %llu events: %.0f events/s (target >= 100,000)\n",
              static_cast<unsigned long long>(events), rebuild_rate);
  return kExitOk;
}

}  // namespace evl::cli::bench
