// evledger bench witness — `evledger witness serve`'s add-checkpoint rate with durable state,
// next to this machine's single durable LMDB commit measured in the same run.
//
// The witness (ledger/witness.h behind the real HttpServer, on loopback, in this process) is
// driven by foreign logs made here (their own keys, origins and trees): each client sends one
// log's checkpoints in order over a kept-alive connection, each with its consistency proof from
// the last one cosigned, and sends the next only after the answer, which comes after that
// compare-and-store is durable. One log alone is bounded by one fsync per request; many logs
// at once share the state's group commits. Then the log's side: a ledger submitting to three
// such witnesses (ledger/witnessing.h, quorum 2) under an append load, and the delay from each
// commit to the witnessed checkpoint that covers it.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "keys/witness_format.h"
#include "ledger/http_client.h"
#include "ledger/limits.h"
#include "ledger/merkle.h"
#include "ledger/witness.h"
#include "ledger/witnessing.h"
#include "tools/bench_support.h"
#include "tools/server/server.h"
#include "tools/server/witness_handlers.h"

namespace evl::cli::bench {

namespace {

namespace fs = std::filesystem;

constexpr double kTargetPerSecond = 1000;

// One log's add-checkpoint bodies, in the order they must be sent.
struct Stream {
  VerifierKey log;
  std::vector<std::string> bodies;
};

// `steps` requests of a log growing by 1 to 3 leaves each: the first from 0, each next with
// its consistency proof from the one before.
Stream make_stream(size_t n, size_t steps) {
  Bytes seed(32, 0);
  for (size_t i = 0; i < 8; ++i) seed[i] = static_cast<uint8_t>(n >> (8 * i));
  seed[31] = 0xb7;
  auto key = SecretKey::from_seed("bench-log-" + std::to_string(n) + ".example/log", seed);
  EVL_ASSERT(key.has_value());
  Stream stream{key->verifier(), {}};
  MemoryHashStore tree;
  uint64_t old = 0;
  for (size_t step = 0; step < steps; ++step) {
    for (size_t k = 0; k < 1 + (n + step) % 3; ++k) {
      tree.append(leaf_hash(as_bytes("bench leaf " + std::to_string(tree.size()))));
    }
    std::vector<Hash> proof;
    if (old != 0) {
      auto p = prove_tree(tree.size(), old, tree);
      EVL_ASSERT(p.has_value());
      proof = std::move(*p);
    }
    const Checkpoint cp{key->name(), tree.size(), tree.root(), {}};
    stream.bodies.push_back(
        format_add_checkpoint_request({old, std::move(proof), sign_checkpoint(cp, *key)}));
    old = tree.size();
  }
  return stream;
}

struct RunFigures {
  uint64_t requests = 0;
  double seconds = 0;
  std::vector<double> latencies_ms;
  WitnessStateStats state;
};

// A witness with fresh state in `dir`, for `logs`, behind the real HttpServer on loopback.
struct LocalWitness {
  std::unique_ptr<Witness> witness;
  std::unique_ptr<server::WitnessServer> server;  // declared last: stopped first
};

Result<LocalWitness> start_witness(const std::string& dir, const std::string& name,
                                   std::vector<VerifierKey> logs) {
  WitnessOptions options;
  options.dir = dir;
  auto key = SecretKey::generate(name);
  if (!key) return key.error();
  options.key = std::make_shared<const SecretKey>(std::move(*key));
  options.max_queued = logs.size() * 2 + 64;
  options.logs = std::move(logs);
  auto witness = Witness::open(std::move(options));
  if (!witness) return witness.error();
  server::ServerOptions server_options;
  server_options.port = "0";
  auto served = server::serve_witness(**witness, server_options);
  if (!served) return served.error();
  return LocalWitness{std::move(*witness), std::move(*served)};
}

// Starts a witness of `streams`' logs with fresh state in `dir`, sends every stream from its
// own client thread, and stops it.
Result<RunFigures> run_witness(const std::string& dir, const std::vector<Stream>& streams) {
  std::vector<VerifierKey> logs;
  for (const Stream& s : streams) logs.push_back(s.log);
  auto local = start_witness(dir, "bench-witness.example/w1", std::move(logs));
  if (!local) return local.error();
  const std::string url = local->server->url;
  auto& http = local->server->http;
  auto& witness = local->witness;

  std::vector<std::vector<double>> latencies(streams.size());
  std::vector<Status> failures(streams.size());
  std::vector<std::thread> clients;
  const auto start = Clock::now();
  for (size_t i = 0; i < streams.size(); ++i) {
    clients.emplace_back([&, i] {
      auto client = HttpClient::open(url);
      if (!client) return void(failures[i] = client.error());
      for (const std::string& body : streams[i].bodies) {
        const auto t0 = Clock::now();
        auto r = (*client)->post("add-checkpoint", "text/plain", body);
        if (!r) return void(failures[i] = r.error());
        if (r->status != 200) {
          return void(failures[i] = io_error("the witness answered HTTP " +
                                             std::to_string(r->status) + ": " +
                                             r->body.substr(0, 300)));
        }
        latencies[i].push_back(seconds_since(t0) * 1000);
      }
    });
  }
  for (auto& c : clients) c.join();
  RunFigures out;
  out.seconds = seconds_since(start);
  http->shutdown(std::chrono::seconds(5));
  for (const Status& s : failures) {
    if (!s.is_ok()) return s;
  }
  for (auto& l : latencies) {
    out.requests += l.size();
    out.latencies_ms.insert(out.latencies_ms.end(), l.begin(), l.end());
  }
  out.state = witness->state().stats();
  return out;
}

nlohmann::ordered_json figures_json(const RunFigures& f, size_t logs, double serial_commits) {
  const double rate = f.requests / f.seconds;
  return {{"logs", logs},
          {"requests", f.requests},
          {"requestsPerSecond", std::round(rate)},
          {"ratioToSerialLmdbCommits", rate / serial_commits},
          {"p50Ms", percentile(f.latencies_ms, 0.5)},
          {"p99Ms", percentile(f.latencies_ms, 0.99)},
          {"commits", f.state.commits},
          {"updatesPerCommit", f.state.commits ? double(f.state.stored) / f.state.commits : 0.0}};
}

struct PublicationFigures {
  uint64_t entries = 0;
  double append_seconds = 0;
  std::vector<double> delays_ms;  // per commit: to the publication that covered it
  uint64_t publications = 0;      // checkpoints the busiest witness cosigned (rounds)
};

// A ledger served to 3 local witnesses (quorum 2) through ledger/witnessing.h while 8
// publishers append `entries` signed 2 KiB entries in batches of `batch`; every commit's
// delay until a witnessed checkpoint covers it.
Result<PublicationFigures> run_publication(const std::string& dir, uint64_t entries, size_t batch) {
  auto bench = make_ledger(dir + "/ledger");
  if (!bench) return bench.error();
  auto log_vkey = bench->ledger->log_verifier();
  if (!log_vkey) return log_vkey.error();
  std::string policy_text = "log " + log_vkey->to_string() + "\n";
  std::vector<LocalWitness> witnesses;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "bench-witness.example/w" + std::to_string(i);
    auto w = start_witness(dir + "/w" + std::to_string(i), name, {*log_vkey});
    if (!w) return w.error();
    policy_text += "witness w" + std::to_string(i) + " " + w->witness->cosigner().to_string() +
                   " " + w->server->url + "\n";
    witnesses.push_back(std::move(*w));
  }
  auto policy = TlogPolicy::parse(policy_text + "group two 2 w1 w2 w3\nquorum two\n");
  if (!policy) return policy.error();

  // The ledger again, now with the commits observed.
  bench->ledger.reset();
  std::atomic<Witnessing*> target{nullptr};
  OpenOptions open;
  open.dir = dir + "/ledger";
  open.log_key = bench->log_key;
  open.on_commit = [&target](const CommitInfo& c) {
    if (Witnessing* w = target.load()) w->committed(c);
  };
  auto ledger = Ledger::open(open);
  if (!ledger) return ledger.error();
  std::mutex mu;
  PublicationFigures out;
  WitnessingOptions options;
  options.policy = std::move(*policy);
  options.dir = witnessing_dir(dir + "/ledger");
  options.on_publication_delay = [&](std::chrono::nanoseconds d) {
    std::lock_guard lock(mu);
    out.delays_ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  };
  auto witnessing = Witnessing::start(**ledger, std::move(options));
  if (!witnessing) return witnessing.error();
  target.store(witnessing->get());

  ThreadPool pool;
  std::vector<Bytes> signed_entries = sign_many(bench->importer, 0, entries, pool);
  auto seconds = append_from_clients(**ledger, signed_entries, batch, kClients, out.entries);
  if (!seconds) return seconds.error();
  out.append_seconds = *seconds;
  // Every commit counted: wait for the publication that covers the last.
  std::promise<Status> done;
  (*witnessing)->when_published((*ledger)->size(), std::chrono::seconds(60),
                                [&](Result<std::shared_ptr<const Publication>> p) {
                                  done.set_value(p ? Status::ok() : p.error());
                                });
  if (Status s = done.get_future().get(); !s) return s;
  for (const auto& w : witnesses) {
    out.publications = std::max(out.publications, w.witness->state().stats().stored);
  }
  target.store(nullptr);
  witnessing->reset();
  for (auto& w : witnesses) w.server->http->shutdown(std::chrono::seconds(5));
  return out;
}

}  // namespace

int bench_witness(const Args& args) {
  auto requests = args.get_u64("requests", 20000, {100, 100000000});
  if (!requests) return fail(requests.error());
  auto logs_opt = args.get_u64("logs", 64, {1, 1024});
  if (!logs_opt) return fail(logs_opt.error());
  const size_t logs = *logs_opt;
  const size_t steps = std::max<uint64_t>(*requests / logs, 1);
  auto publish_entries = args.get_u64("publish-entries", 20000, {100, 10000000});
  if (!publish_entries) return fail(publish_entries.error());
  const bool json = args.has("json");
  auto note = [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  };
  const std::string scratch = scratch_dir(args, "witness");
  const Scratch cleanup(scratch);

  note("LMDB single durable commits");
  auto lmdb = lmdb_append_limits(scratch + "/lmdb", 1000, 1000, 512, 300);
  if (!lmdb) return fail(lmdb.error());
  const double serial_commits = 1000 / lmdb->single_commit_ms;

  note("signing the foreign logs' checkpoints");
  std::vector<Stream> one{make_stream(1000000, std::min<size_t>(1000, steps * logs / 4 + 1))};
  std::vector<Stream> many;
  for (size_t i = 0; i < logs; ++i) many.push_back(make_stream(i, steps));

  note("one log, one client");
  auto single = run_witness(scratch + "/one", one);
  if (!single) return fail(single.error().with_context("bench witness, one log"));
  note("many logs at once");
  auto spread = run_witness(scratch + "/many", many);
  if (!spread) return fail(spread.error().with_context("bench witness, many logs"));

  note("publication delay: a log, 3 local witnesses, quorum 2, 8 publishers appending");
  auto published = run_publication(scratch + "/publish", *publish_entries, 10);
  if (!published) return fail(published.error().with_context("bench witness, publication"));

  nlohmann::ordered_json out;
  out["machine"] = {{"cores", std::max(1u, std::thread::hardware_concurrency())},
                    {"lmdbSingleCommitMs", lmdb->single_commit_ms},
                    {"lmdbSerialCommitsPerSecond", std::round(serial_commits)}};
  out["oneLog"] = figures_json(*single, 1, serial_commits);
  out["manyLogs"] = figures_json(*spread, logs, serial_commits);
  out["targetPerSecond"] = kTargetPerSecond;
  const PublicationFigures& pf = *published;
  const double p50 = percentile(pf.delays_ms, 0.5), p99 = percentile(pf.delays_ms, 0.99);
  out["publication"] = {{"witnesses", 3},
                        {"quorum", 2},
                        {"entries", pf.entries},
                        {"appendsPerSecond", std::round(pf.entries / pf.append_seconds)},
                        {"commits", pf.delays_ms.size()},
                        {"checkpointsCosignedByAWitness", pf.publications},
                        {"delayP50Ms", p50},
                        {"delayP99Ms", p99},
                        {"delayP50InLmdbCommits", p50 / lmdb->single_commit_ms},
                        {"delayP99InLmdbCommits", p99 / lmdb->single_commit_ms}};
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("machine: LMDB single durable commit %.3f ms (%.0f serial commits/s)\n",
              lmdb->single_commit_ms, serial_commits);
  std::printf("witness POST /add-checkpoint over loopback HTTP, each answered after its "
              "compare-and-store is durable\n");
  for (const auto* f : {&out["oneLog"], &out["manyLogs"]}) {
    std::printf("  %4llu log%s %8.0f /s = %.2f x serial LMDB commits; p50 %.2f ms, p99 %.2f ms; "
                "%.1f updates per commit\n",
                static_cast<unsigned long long>((*f)["logs"].get<uint64_t>()),
                (*f)["logs"].get<uint64_t>() == 1 ? " " : "s",
                (*f)["requestsPerSecond"].get<double>(),
                (*f)["ratioToSerialLmdbCommits"].get<double>(), (*f)["p50Ms"].get<double>(),
                (*f)["p99Ms"].get<double>(), (*f)["updatesPerCommit"].get<double>());
  }
  std::printf("  target: >= %.0f /s with durable state\n", kTargetPerSecond);
  std::printf("publication delay, commit to a witnessed checkpoint covering it (3 local "
              "witnesses, quorum 2; %llu entries appended at %.0f/s by 8 publishers, 10 per "
              "batch):\n  p50 %.2f ms = %.1f x LMDB single commit, p99 %.2f ms = %.1f x; "
              "%zu commits, %llu checkpoints cosigned by a witness\n",
              static_cast<unsigned long long>(pf.entries), pf.entries / pf.append_seconds, p50,
              p50 / lmdb->single_commit_ms, p99, p99 / lmdb->single_commit_ms, pf.delays_ms.size(),
              static_cast<unsigned long long>(pf.publications));
  return kExitOk;
}

}  // namespace evl::cli::bench
