// tools/bench_support.h — what the `evledger bench` subcommands share: a ledger to load,
// signed 2 KiB entries, child processes for clean peak-memory figures.
//
// Thread safety: used from one thread; sign_many uses the given pool.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "keys/key.h"
#include "ledger/ledger.h"
#include "ledger/thread_pool.h"
#include "tools/cli.h"

namespace evl::cli::bench {

// The sizes a benchmark takes: 10^8 entries of 2 KiB are some 200 GB of ledger.
inline constexpr U64Range kBenchEntries{1, 100'000'000, "10^8 entries are some 200 GB"};
inline constexpr U64Range kBenchMemoryEntries{0, 100'000'000, "0: no memory run"};

inline constexpr size_t kEntryBytes = 2048;
inline constexpr size_t kBatch = 1000;
// Publishers appending at once in the sustained-append figures.
inline constexpr unsigned kClients = 8;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t);
double percentile(std::vector<double> values, double p);

// The parts of a benchmark that --parts a,b,... names (each one of `known`), or all of them.
Result<std::set<std::string>> bench_parts(const Args& args, const std::vector<std::string>& known);

// <--dir or the system temp dir>/evledger-bench-<name>-<pid>.
std::string scratch_dir(const Args& args, const std::string& name);

// A benchmark's scratch directory: made at once, removed with all it holds when this dies.
struct Scratch {
  explicit Scratch(std::string d);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string dir;
};

// A generated SOL-ExecBench catalog of `runs` runs, one canonical manifest per line (JSONL).
std::string catalog_jsonl(uint64_t runs, uint64_t seed = 11);

// A grant of `role` (within `scope`) to `key`, signed by `admin`.
Result<Bytes> grant_entry(const SecretKey& admin, const SecretKey& key, Role role,
                          std::vector<std::string> scope);

struct BenchLedger {
  std::unique_ptr<Ledger> ledger;
  SecretKey admin;  // may grant more keys
  SecretKey importer;
  std::shared_ptr<const SecretKey> log_key;  // to open the ledger again for appending
};

// A fresh ledger in `dir` with a genesis and one importer key, as a publisher would have. The
// importer's key comes from `importer_seed` (32 bytes) when given, so two ledgers can take the
// same entries.
// The importer's scope is {"sol-execbench"} (the generated catalogs' source); `hook` keeps
// state (the projections) in the append transactions when given.
Result<BenchLedger> make_ledger(const std::string& dir, bool maintain_tree = true,
                                const Bytes& importer_seed = {},
                                std::shared_ptr<AppendHook> hook = nullptr);

// A benchmark ledger kept in `dir` across runs: opened with the keys saved in <dir>/keys/ by
// the run that made it (log.key, bench-admin.key, bench-importer.key; log.vkey for a mirror),
// or, when `dir` holds no ledger yet, made by make_ledger (with the tree, without a hook) and
// its keys saved there.
Result<BenchLedger> open_kept_ledger(const std::string& dir);

// A signed manifest event of exactly kEntryBytes bytes (a BenchmarkRun manifest with padding),
// distinct for every n.
Bytes manifest_entry(const SecretKey& key, uint64_t n);
std::vector<Bytes> sign_many(const SecretKey& key, uint64_t first, uint64_t count,
                             ThreadPool& pool);

// Signs and appends entries [first, first + count) in chunks of 10,000 (bounded memory);
// calls on_progress(done) after each chunk.
Status fill(BenchLedger& bench, uint64_t first, uint64_t count, ThreadPool& pool,
            const std::function<void(uint64_t)>& on_progress = {});

// Appends `entries` in batches of `batch` from `clients` threads at once, each taking the next
// batch when its last one is durable, as a server's sessions would; returns the seconds from
// the first append to the last acknowledgement and adds the entries appended to `added`. The
// first failed entry is the error.
Result<double> append_from_clients(Ledger& ledger, std::span<const Bytes> entries, size_t batch,
                                   unsigned clients, uint64_t& added);

// Runs this evledger binary with `args` in a child process (so that its peak memory is its
// own) and returns the lines it printed on standard output.
Result<std::vector<std::string>> run_child(const std::vector<std::string>& args,
                                           const std::string& scratch);

// Prints one JSON line of the process's memory figures, tagged with `entries`.
void print_memory_line(uint64_t entries);

// A process started in the background (a server, nginx), its standard output in a file and
// its standard error beside it (<out>.err); stopped with SIGTERM when it goes.
class Child {
 public:
  ~Child() { stop(); }
  Status start(const std::string& program, std::vector<std::string> args, const std::string& out);
  // The first line of its output that starts with `prefix`, within 30 s.
  Result<std::string> line_starting(const std::string& prefix);
  pid_t pid() const { return pid_; }
  // Waits for it to exit on its own and returns its wait status (waitpid's).
  int wait();
  void stop();

 private:
  pid_t pid_ = -1;
  std::string out_;
};

// This evledger binary.
std::string self_path();

// Starts `evledger serve` on `dir` (whose keys/log.key signs, unless `read_only`) and returns
// its URL.
Result<std::string> start_server(Child& child, const std::string& dir, const std::string& out,
                                 bool read_only);

}  // namespace evl::cli::bench
