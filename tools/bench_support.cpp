#include "tools/bench_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "events/file_read.h"
#include "events/file_write.h"
#include "events/jcs.h"
#include "keys/signer.h"
#include "ledger/limits.h"
#include "tools/gen/sol_catalog.h"

extern char** environ;

namespace evl::cli::bench {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[k];
}

Result<std::set<std::string>> bench_parts(const Args& args, const std::vector<std::string>& known) {
  std::set<std::string> all(known.begin(), known.end());
  const auto named = args.get("parts");
  if (!named) return all;
  std::set<std::string> out;
  std::stringstream list(*named);
  for (std::string part; std::getline(list, part, ',');) {
    if (all.count(part) == 0) {
      std::string names;
      for (const auto& k : known) names += (names.empty() ? "" : ",") + k;
      return usage_error("--parts names '" + part + "', which is not a part of this benchmark; "
                         "give some of " + names);
    }
    out.insert(part);
  }
  if (out.empty()) return usage_error("--parts names no part; give some of them, or leave it out");
  return out;
}

std::string scratch_dir(const Args& args, const std::string& name) {
  std::string base = args.get("dir").value_or(std::filesystem::temp_directory_path().string());
  return base + "/evledger-bench-" + name + "-" + std::to_string(::getpid());
}

Scratch::Scratch(std::string d) : dir(std::move(d)) { std::filesystem::create_directories(dir); }

Scratch::~Scratch() {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

std::string catalog_jsonl(uint64_t runs, uint64_t seed) {
  std::string out;
  gen::generate_sol_catalog({runs, seed}, [&](const Json& manifest) {
    jcs_append(out, manifest);
    out += '\n';
  });
  return out;
}

Result<Bytes> grant_entry(const SecretKey& admin, const SecretKey& key, Role role,
                          std::vector<std::string> scope) {
  EventBody body;
  body.author = admin.public_key();
  body.payload = KeyGrant{{key.public_key(), key.name()}, {role}, std::move(scope)};
  return sign_event(admin, body);
}

Result<BenchLedger> make_ledger(const std::string& dir, bool maintain_tree,
                                const Bytes& importer_seed, std::shared_ptr<AppendHook> hook) {
  auto admin = SecretKey::generate("bench/admin");
  auto log_key = SecretKey::generate("bench.evledger.invalid/log");
  auto importer = importer_seed.empty() ? SecretKey::generate("bench/importer")
                                        : SecretKey::from_seed("bench/importer", importer_seed);
  if (!admin || !log_key || !importer) return io_error("cannot generate keys");
  OpenOptions options;
  options.dir = dir;
  options.create = true;
  options.maintain_tree = maintain_tree;
  options.hook = std::move(hook);
  options.log_key = std::make_shared<const SecretKey>(std::move(log_key.value()));
  auto ledger = Ledger::open(options);
  if (!ledger) return ledger.error();
  EventBody genesis;
  genesis.author = admin->public_key();
  genesis.payload = Genesis{options.log_key->name(), options.log_key->public_key(),
                            {{admin->public_key(), admin->name()}}, 50};
  std::vector<Bytes> setup{
      sign_event(*admin, genesis).value(),
      grant_entry(*admin, *importer, Role::kImporter, {"sol-execbench"}).value()};
  for (const auto& o : (*ledger)->append(setup)) {
    if (!o.status) return o.status;
  }
  return BenchLedger{std::move(ledger.value()), std::move(admin.value()),
                     std::move(importer.value()), options.log_key};
}

Result<BenchLedger> open_kept_ledger(const std::string& dir) {
  const std::string keys = dir + "/keys/";
  if (!std::filesystem::exists(dir + "/db")) {
    auto made = make_ledger(dir);
    if (!made) return made.error();
    std::filesystem::create_directories(keys);
    EVL_RETURN_IF_ERROR(made->log_key->save(keys + "log.key"));
    EVL_RETURN_IF_ERROR(made->admin.save(keys + "bench-admin.key"));
    EVL_RETURN_IF_ERROR(made->importer.save(keys + "bench-importer.key"));
    EVL_RETURN_IF_ERROR(
        create_file(keys + "log.vkey", made->log_key->verifier().to_string() + "\n", 0644));
    return made;
  }
  auto log_key = SecretKey::load(keys + "log.key");
  auto admin = SecretKey::load(keys + "bench-admin.key");
  auto importer = SecretKey::load(keys + "bench-importer.key");
  for (const auto* key : {&log_key, &admin, &importer}) {
    if (!*key) {
      return key->error().with_context("the benchmark ledger kept in " + dir + " lacks the "
                                       "keys its first run saved in " + keys + "; remove " +
                                       dir + " to make a new one");
    }
  }
  OpenOptions options;
  options.dir = dir;
  options.log_key = std::make_shared<const SecretKey>(std::move(*log_key));
  auto ledger = Ledger::open(options);
  if (!ledger) return ledger.error();
  return BenchLedger{std::move(*ledger), std::move(*admin), std::move(*importer),
                     options.log_key};
}

Bytes manifest_entry(const SecretKey& key, uint64_t n) {
  auto make = [&](size_t pad) {
    std::string canonical =
        R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkRun","spec":{"notes":")" +
        std::string(pad, 'x') + R"(","observedAt":"2026-07-07T02:26:56.362Z","status":"passed",)"
        R"("timing":{"latencyNs":{"mean":)" + std::to_string(100000 + n) +
        R"(},"primaryStatistic":"mean"}}})";
    EventBody body;
    body.author = key.public_key();
    body.claimed_time_ms = 1780000000000 + static_cast<int64_t>(n);
    body.payload = ManifestEvent{{canonical, ""}};
    return sign_event(key, body).value();
  };
  Bytes probe = make(1500);
  size_t pad = 1500 + kEntryBytes - std::min(kEntryBytes, probe.size());
  Bytes entry = make(pad);
  // Text is padded to 8 bytes by Cap'n Proto: trim until the entry is not above the target.
  while (entry.size() > kEntryBytes && pad > 0) entry = make(--pad);
  return entry;
}

std::vector<Bytes> sign_many(const SecretKey& key, uint64_t first, uint64_t count,
                             ThreadPool& pool) {
  std::vector<Bytes> out(count);
  pool.parallel_for(count, [&](size_t i) { out[i] = manifest_entry(key, first + i); });
  return out;
}

Status fill(BenchLedger& bench, uint64_t first, uint64_t count, ThreadPool& pool,
            const std::function<void(uint64_t)>& on_progress) {
  constexpr uint64_t kChunk = 10000;
  for (uint64_t done = 0; done < count;) {
    uint64_t n = std::min(kChunk, count - done);
    auto batch = sign_many(bench.importer, first + done, n, pool);
    for (const auto& o : bench.ledger->append(batch)) EVL_RETURN_IF_ERROR(o.status);
    done += n;
    if (on_progress) on_progress(done);
  }
  return Status::ok();
}

Result<double> append_from_clients(Ledger& ledger, std::span<const Bytes> entries, size_t batch,
                                   unsigned clients, uint64_t& added) {
  const size_t batches = (entries.size() + batch - 1) / batch;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> appended{0};
  std::mutex failure_mu;
  Status failure;
  auto client = [&] {
    for (size_t b; (b = next.fetch_add(1)) < batches;) {
      auto part = entries.subspan(b * batch, std::min(batch, entries.size() - b * batch));
      for (const auto& o : ledger.append(part)) {
        if (!o.status) {
          std::lock_guard lock(failure_mu);
          if (failure.is_ok()) failure = o.status;
          next = batches;  // the others stop after their batch
          return;
        }
        appended += o.added;
      }
    }
  };
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned c = 0; c < clients; ++c) threads.emplace_back(client);
  for (auto& t : threads) t.join();
  const double seconds = seconds_since(start);
  if (!failure.is_ok()) return failure;
  added += appended;
  return seconds;
}

Result<std::vector<std::string>> run_child(const std::vector<std::string>& args,
                                           const std::string& scratch) {
  const std::string out_path = scratch + ".child-" + std::to_string(::getpid()) + ".out";
  Child child;
  EVL_RETURN_IF_ERROR(child.start(self_path(), args, out_path));
  const int status = child.wait();
  auto text = read_file(out_path, ReadLimit{"benchmark child's output", size_t{1} << 20});
  auto errors = read_file(out_path + ".err", ReadLimit{"benchmark child's errors", size_t{1} << 20});
  std::filesystem::remove(out_path);
  std::filesystem::remove(out_path + ".err");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !text) {
    const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                              : std::string("killed");
    const std::string said = errors && !errors->empty() ? ": " + errors->substr(0, 300)
                             : text && !text->empty()   ? ": " + text->substr(0, 300)
                                                        : "";
    return io_error("the benchmark child 'evledger " + args.at(0) + " " + args.at(1) +
                    "' failed (" + how + ")" + said);
  }
  std::vector<std::string> lines;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void print_memory_line(uint64_t entries) {
  MemoryFigures m = process_memory();
  std::printf("{\"entries\":%llu,\"peakRssMB\":%.1f,\"rssAnonMB\":%.1f,\"rssFileMB\":%.1f}\n",
              static_cast<unsigned long long>(entries), m.peak_rss / 1e6, m.rss_anon / 1e6,
              m.rss_file / 1e6);
  std::fflush(stdout);
}

Status Child::start(const std::string& program, std::vector<std::string> args,
                    const std::string& out) {
  out_ = out;
  std::vector<char*> argv;
  args.insert(args.begin(), program);
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (out + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = posix_spawnp(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return io_error("cannot start " + program + ": " + std::strerror(rc));
  return Status::ok();
}

Result<std::string> Child::line_starting(const std::string& prefix) {
  for (int i = 0; i < 3000; ++i) {
    std::ifstream in(out_);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) == 0) return line;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return io_error("the child exited before printing '" + prefix + "'; see " + out_ + ".err");
    }
    usleep(10000);
  }
  return io_error("the child printed no '" + prefix + "' within 30 s");
}

int Child::wait() {
  int status = 0;
  if (pid_ > 0) waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

void Child::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

Result<std::string> start_server(Child& child, const std::string& dir, const std::string& out,
                                 bool read_only) {
  std::vector<std::string> args{"serve", "--ledger", dir, "--listen", "127.0.0.1:0"};
  if (read_only) args.push_back("--read-only");
  EVL_RETURN_IF_ERROR(child.start(self_path(), args, out));
  auto line = child.line_starting("serving ");
  if (!line) return line.error();
  return line->substr(8, line->find(' ', 8) - 8);
}

}  // namespace evl::cli::bench
