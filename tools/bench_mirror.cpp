// evledger bench mirror / mirror-pull — a mirror's catch-up from a local `evledger serve`, as a
// ratio to the local audit rate measured in the same run, and its peak memory (child processes).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "ledger/audit.h"
#include "ledger/mirror.h"
#include "projections/ledger_hook.h"
#include "tools/bench_support.h"

namespace evl::cli::bench {

// One pull into a fresh mirror, in this (child) process: prints a memory line with the
// seconds it took. The same library calls as `evledger mirror`.
int bench_mirror_pull(const Args& args) {
  auto from = args.require("from");
  auto dir = args.require("ledger");
  auto vkey = args.require("vkey");
  if (!from || !dir || !vkey) return fail(usage_error("mirror-pull needs --from, --ledger, --vkey"));
  auto key = load_verifier_key(*vkey);
  if (!key) return fail(key.error());
  OpenOptions open;
  open.dir = *dir;
  open.create = true;
  open.mirror_of = *key;
  open.hook = make_projection_hook();
  auto mirror = Ledger::open(open);
  if (!mirror) return fail(mirror.error());
  auto upstream = Upstream::open(*from, 4);
  if (!upstream) return fail(upstream.error());
  MirrorOptions options;
  options.log_key = *key;
  auto start = Clock::now();
  MirrorReport report = pull_upstream(**mirror, **upstream, options);
  const double seconds = seconds_since(start);
  if (!report.status) return fail(report.status);
  std::printf("{\"seconds\":%.3f}\n", seconds);
  print_memory_line(report.size);
  return kExitOk;
}

namespace {

struct PullFigures {
  uint64_t entries = 0;
  double seconds = 0, peak_rss_mb = 0;
  double rss_anon_mb = 0, rss_file_mb = 0;  // at the end of the pull
};

Result<PullFigures> pull_in_child(const std::string& url, const std::string& vkey,
                                  const std::string& dir) {
  auto lines = run_child({"bench", "mirror-pull", "--from", url, "--ledger", dir, "--vkey", vkey},
                         dir);
  std::filesystem::remove_all(dir);
  if (!lines) return lines.error();
  if (lines->size() < 2) return io_error("the mirror-pull child printed too little");
  auto timing = nlohmann::json::parse(lines->at(0), nullptr, false);
  auto memory = nlohmann::json::parse(lines->at(1), nullptr, false);
  if (timing.is_discarded() || memory.is_discarded()) {
    return io_error("the mirror-pull child printed no JSON");
  }
  return PullFigures{memory["entries"].get<uint64_t>(), timing["seconds"].get<double>(),
                     memory["peakRssMB"].get<double>(), memory["rssAnonMB"].get<double>(),
                     memory["rssFileMB"].get<double>()};
}

struct AuditFigures {
  uint64_t entries = 0;
  double seconds = 0;
};

// audit_ledger of the upstream, timed.
Result<AuditFigures> timed_audit(const Ledger& ledger) {
  auto start = Clock::now();
  AuditReport audit = audit_ledger(ledger);
  const double seconds = seconds_since(start);
  if (!audit.status) return audit.status;
  return AuditFigures{audit.entries, seconds};
}

}  // namespace

int bench_mirror(const Args& args) {
  auto entries = args.get_u64("entries", 1000000, kBenchEntries);
  auto memory_entries = args.get_u64("memory-entries", 100000, kBenchMemoryEntries);
  if (!entries) return fail(entries.error());
  if (!memory_entries) return fail(memory_entries.error());
  const bool json = args.has("json");
  auto note = [&](const std::string& what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what.c_str());
  };
  const Scratch scratch(scratch_dir(args, "mirror"));
  // --keep DIR: the upstream stays in DIR, and the next run with it loads only what it lacks.
  const auto kept = args.get("keep");
  auto bench = kept ? open_kept_ledger(*kept) : make_ledger(scratch.dir + "/upstream");
  if (!bench) return fail(bench.error());
  const std::string up = bench->ledger->dir();
  const std::string vkey = bench->log_key->verifier().to_string();
  Child server;
  auto url = start_server(server, up, scratch.dir + "/serve.out", true);
  if (!url) return fail(url.error());
  ThreadPool pool;
  std::vector<PullFigures> pulls;
  std::vector<AuditFigures> audits;
  uint64_t filled = bench->ledger->size(), pulled = 0;
  for (uint64_t size : {*memory_entries, *entries}) {
    if (size == 0 || size == pulled || (size <= filled && !kept)) continue;
    if (size < filled) {
      return fail(usage_error("the upstream kept in " + *kept + " holds " +
                              std::to_string(filled) + " entries, more than the " +
                              std::to_string(size) + " to mirror; pass --entries and "
                              "--memory-entries of at least " + std::to_string(filled) +
                              " (--memory-entries 0 skips that run), or keep another DIR"));
    }
    if (size > filled) {
      note("loading the upstream to " + std::to_string(size) + " entries");
      if (Status s = fill(*bench, filled, size - filled, pool); !s) return fail(s);
      filled = bench->ledger->size();
    }
    if (size == *entries) {
      // The audit before the pull it is compared with, and again after it: the machine's load
      // may change over minutes, and the mean of the two is what the pull is set against.
      note("the local audit of the upstream, before the pull");
      auto audit = timed_audit(*bench->ledger);
      if (!audit) return fail(audit.error());
      audits.push_back(*audit);
    }
    note("a mirror's catch-up of " + std::to_string(filled) + " entries, in a child process");
    auto pull = pull_in_child(*url, vkey, scratch.dir + "/mirror");
    if (!pull) return fail(pull.error());
    pulls.push_back(*pull);
    pulled = size;
  }
  note("the local audit of the upstream, after the pull");
  auto after = timed_audit(*bench->ledger);
  if (!after) return fail(after.error());
  audits.push_back(*after);
  server.stop();
  if (pulls.empty()) return fail(usage_error("nothing to mirror: --entries is 0"));
  double audit_s = 0;
  for (const AuditFigures& a : audits) audit_s += a.seconds / audits.size();
  const uint64_t audited = audits.back().entries;
  const double audit_rate = audited / audit_s;
  const PullFigures& main = pulls.back();
  const double mirror_rate = main.entries / main.seconds;

  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const auto& p : pulls) {
    memory.push_back({{"entries", p.entries},
                      {"peakRssMB", p.peak_rss_mb},
                      {"endRssAnonMB", p.rss_anon_mb},
                      {"endRssFileMB", p.rss_file_mb}});
  }
  nlohmann::ordered_json out;
  nlohmann::ordered_json audit_seconds = nlohmann::ordered_json::array();
  for (const AuditFigures& a : audits) audit_seconds.push_back(a.seconds);
  out["audit"] = {{"entries", audited},
                  {"perSecond", std::round(audit_rate)},
                  {"secondsBeforeAndAfter", audit_seconds}};
  out["mirror"] = {{"entries", main.entries},
                   {"seconds", main.seconds},
                   {"perSecond", std::round(mirror_rate)},
                   {"ratioToAudit", mirror_rate / audit_rate},
                   {"target", "ratioToAudit >= 0.8"}};
  out["mirrorMemory"] = memory;
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("mirror catch-up of %llu entries from a local evledger serve: %.0f entries/s = "
              "%.2f x the local audit (%.0f entries/s, the mean of its runs before and after "
              "the pull:",
              static_cast<unsigned long long>(main.entries), mirror_rate,
              mirror_rate / audit_rate, audit_rate);
  for (const AuditFigures& a : audits) std::printf(" %.0f/s", a.entries / a.seconds);
  std::printf("; target >= 0.8)\n");
  for (const auto& p : pulls) {
    std::printf("  mirror memory at %llu entries: peak RSS %.1f MB (at the end: %.1f MB anonymous, "
                "%.1f MB of mapped files)\n",
                static_cast<unsigned long long>(p.entries), p.peak_rss_mb, p.rss_anon_mb,
                p.rss_file_mb);
  }
  return kExitOk;
}

}  // namespace evl::cli::bench
