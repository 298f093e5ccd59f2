// evledger bench serve — `evledger serve` under load on loopback, next to the machine's limits
// measured in the same run: nginx serving the same export for static reads (with the same load
// generator, wrk, and the same settings), and the local sustained append for POST /add-event.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "events/jcs.h"
#include "ledger/http_client.h"
#include "ledger/http_fetch.h"
#include "ledger/limits.h"
#include "ledger/tile_path.h"
#include "ledger/tiles.h"
#include "projections/ledger_hook.h"
#include "tools/bench_support.h"
#include "tools/gen/sol_catalog.h"
#include "tools/json_text.h"

extern char** environ;

namespace evl::cli::bench {

namespace {

namespace fs = std::filesystem;

// VmHWM and VmRSS of a process, in MB, and its open descriptors.
struct ProcessFigures {
  double peak_rss_mb = 0, rss_mb = 0;
  size_t fds = 0;
};

ProcessFigures process_figures(pid_t pid) {
  ProcessFigures f;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) f.peak_rss_mb = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmRSS:", 0) == 0) f.rss_mb = std::stod(line.substr(6)) / 1024;
  }
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); ++it) {
    ++f.fds;
  }
  return f;
}

struct WrkFigures {
  double requests_per_second = 0;
  double p50_ms = 0, p99_ms = 0;
  uint64_t requests = 0;
};

double wrk_ms(const std::string& text) {
  double v = std::stod(text);
  if (text.find("us") != std::string::npos) return v / 1000;
  if (text.find("ms") != std::string::npos) return v;
  return v * 1000;  // "s"
}

// wrk with one thread and 32 connections (DESIGN.md's setting for nginx's limit).
Result<WrkFigures> run_wrk(const std::string& url, int seconds) {
  std::string cmd = "wrk -t1 -c32 -d" + std::to_string(seconds) + "s --latency '" + url + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return io_error("cannot run wrk");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  if (rc != 0 || out.find("Requests/sec:") == std::string::npos) {
    return io_error("wrk failed (install it: apt-get install wrk; tools/scripts/install-deps.sh "
                    "does): " + out.substr(0, 300));
  }
  WrkFigures f;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first, second;
    words >> first >> second;
    if (first == "Requests/sec:") f.requests_per_second = std::stod(second);
    if (first == "50%") f.p50_ms = wrk_ms(second);
    if (first == "99%") f.p99_ms = wrk_ms(second);
    if (line.find("requests in") != std::string::npos) f.requests = std::stoull(first);
    if (line.find("Non-2xx") != std::string::npos) {
      return io_error("wrk saw errors from " + url + ": " + line);
    }
  }
  return f;
}

// The start of a loopback nginx's configuration, its files under `dir`, up to the http block's
// own settings; the caller adds those and closes the block.
std::string nginx_conf_head(const std::string& dir, const char* workers) {
  fs::create_directories(dir + "/tmp");
  std::ostringstream out;
  out << "daemon off;\nworker_processes " << workers << ";\npid " << dir << "/nginx.pid;\n"
      << "error_log " << dir << "/error.log;\nevents { worker_connections 1024; }\nhttp {\n"
      << "  access_log off;\n  keepalive_requests 1000000;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    out << "  " << temp << "_temp_path " << dir << "/tmp;\n";
  }
  return out.str();
}

Status write_nginx_conf(const std::string& dir, const std::string& root, int port) {
  const std::string head = nginx_conf_head(dir, "auto");
  std::ofstream out(dir + "/nginx.conf");
  out << head << "  default_type application/octet-stream;\n"
      << "  sendfile on;\n  tcp_nopush on;\n"
      << "  server {\n    listen 127.0.0.1:" << port << ";\n    root " << root << ";\n"
      << "    location / { }\n  }\n}\n";
  return out ? Status::ok() : io_error("cannot write " + dir + "/nginx.conf");
}

int free_port() {
  // Bind to port 0 and close: the port is free for a moment, long enough for nginx.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct PostFigures {
  double per_second = 0;
  double p50_ms = 0, p99_ms = 0;
  uint64_t entries = 0, requests = 0;
};

// `clients` connections post `entries` in requests of `batch`, each the next when the last
// was answered; every entry must come back stored.
Result<PostFigures> post_load(const std::string& url, std::span<const Bytes> entries,
                              size_t batch, unsigned clients) {
  const size_t requests = (entries.size() + batch - 1) / batch;
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status failure;
  std::vector<double> latencies;
  latencies.reserve(requests);
  auto client = [&] {
    auto http = HttpClient::open(url);
    if (!http) {
      std::lock_guard lock(mu);
      failure = http.error();
      return;
    }
    std::vector<double> mine;
    std::string body;
    for (size_t r; (r = next.fetch_add(1)) < requests;) {
      body.clear();
      const size_t first = r * batch, n = std::min(batch, entries.size() - first);
      for (size_t i = 0; i < n; ++i) append_entry_frame(body, entries[first + i]);
      auto t0 = Clock::now();
      auto answer = (*http)->post("add-event", "application/vnd.evledger.entries", body);
      mine.push_back(seconds_since(t0) * 1000);
      const std::string want = "\"added\":" + std::to_string(n) + ",";
      if (!answer || answer->status != 200 || answer->body.find(want) == std::string::npos) {
        std::lock_guard lock(mu);
        if (failure.is_ok()) {
          failure = !answer ? answer.error()
                            : io_error("POST /add-event answered " + std::to_string(answer->status) +
                                       ": " + answer->body.substr(0, 300));
        }
        next = requests;
        return;
      }
    }
    std::lock_guard lock(mu);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
  };
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned c = 0; c < clients; ++c) threads.emplace_back(client);
  for (auto& t : threads) t.join();
  const double seconds = seconds_since(start);
  if (!failure.is_ok()) return failure;
  return PostFigures{entries.size() / seconds, percentile(latencies, 0.5),
                     percentile(latencies, 0.99), entries.size(), requests};
}

// One request at a time: its latency percentiles, in ms.
struct Latency {
  double p50 = 0, p95 = 0, p99 = 0;
};

// GETs of each of `targets` in turn, `requests` in all, one after another on one connection.
Result<Latency> sequential_latency(const std::string& url, const std::vector<std::string>& targets,
                                   size_t requests) {
  auto http = HttpClient::open(url);
  if (!http) return http.error();
  std::vector<double> ms;
  for (size_t i = 0; i < requests; ++i) {
    const std::string& target = targets[i % targets.size()];
    const auto t0 = Clock::now();
    auto r = (*http)->get(target);
    ms.push_back(seconds_since(t0) * 1000);
    if (!r || r->status != 200) return io_error("GET " + target + " failed during the latency run");
  }
  return Latency{percentile(ms, 0.5), percentile(ms, 0.95), percentile(ms, 0.99)};
}

struct PublishFigures {
  uint64_t documents = 0;
  // One per round, in the order they ran: `evledger import --ledger`, `import --to` as it runs
  // without --receipts (no receipts asked for), and with --receipts DIR.
  std::vector<double> local_s, remote_s, receipts_s;
  // GET /api/v1/runs/{digest} on the ledger the last import --to filled.
  Latency run_view;          // one at a time over the catalog's runs
  WrkFigures run_view_load;  // wrk -t1 -c32 on one run
  uint64_t run_view_runs = 0;
};

// A fresh ledger in `dir` that an `evledger` child can open (its log key in dir/keys), with
// the importer of `seed` granted.
Status fresh_ledger(const std::string& dir, const Bytes& seed) {
  auto bench = make_ledger(dir, true, seed);
  if (!bench) return bench.error();
  fs::create_directories(dir + "/keys");
  return bench->log_key->save(dir + "/keys/log.key");
}

// Runs `evledger import ARGS --key KEY CATALOG` in a child process, as a publisher would, and
// returns its seconds; every document must be added.
Result<double> timed_import(std::vector<std::string> args, const std::string& key,
                            const std::string& catalog, uint64_t documents,
                            const std::string& scratch) {
  args.insert(args.begin(), "import");
  for (const std::string& a : {std::string("--key"), key, catalog}) args.push_back(a);
  const auto start = Clock::now();
  auto lines = run_child(args, scratch);
  const double seconds = seconds_since(start);
  if (!lines) return lines.error();
  const std::string n = std::to_string(documents);
  const std::string want = n + " documents: " + n + " new";
  if (lines->empty() || lines->back().find(want) == std::string::npos) {
    return io_error("evledger import " + args.at(1) + " did not add every document: " +
                    (lines->empty() ? std::string("no summary") : lines->back()));
  }
  return seconds;
}

// The import --to of a round: a fresh ledger served by `evledger serve`; `served`, when given,
// runs against the server (its URL) after the import.
Result<double> remote_import(const std::string& dir, const Bytes& seed, const std::string& key,
                             const std::string& catalog, uint64_t documents,
                             const std::vector<std::string>& extra,
                             const std::function<Status(const std::string&)>& served = {}) {
  EVL_RETURN_IF_ERROR(fresh_ledger(dir, seed));
  Child server;
  auto url = start_server(server, dir, dir + ".out", false);
  if (!url) return url.error();
  std::vector<std::string> args{"--to", *url};
  args.insert(args.end(), extra.begin(), extra.end());
  auto seconds = timed_import(args, key, catalog, documents, dir);
  if (seconds && served) EVL_RETURN_IF_ERROR(served(*url));
  server.stop();
  fs::remove_all(dir);
  return seconds;
}

// The run views of the catalog a server holds: one at a time over up to 1,000 of its runs,
// then wrk on one of them.
Status measure_run_views(const std::string& url, PublishFigures& f) {
  auto http = HttpClient::open(url);
  if (!http) return http.error();
  auto listing = (*http)->get("api/v1/runs?limit=1000");
  if (!listing || listing->status != 200) return io_error("GET /api/v1/runs failed");
  auto parsed = parse_json(listing->body);
  if (!parsed) return parsed.error();
  std::vector<std::string> targets;
  for (const Json& run : parsed->find("items")->as_array()) {
    targets.push_back("api/v1/runs/" + cli::text_of(run.find("run")).substr(7));
  }
  if (targets.empty()) return io_error("the imported catalog has no runs");
  f.run_view_runs = targets.size();
  auto one_at_a_time = sequential_latency(url, targets, 3 * targets.size());
  if (!one_at_a_time) return one_at_a_time.error();
  f.run_view = *one_at_a_time;
  auto load = run_wrk(url + targets[targets.size() / 2], 4);
  if (!load) return load.error();
  f.run_view_load = *load;
  return Status::ok();
}

// `rounds` times, in child processes as a publisher runs them: the catalog imported into a
// fresh local ledger, then into fresh ledgers that `evledger serve` holds, without and with
// --receipts; all with projections.
Result<PublishFigures> publish_rounds(const std::string& scratch, uint64_t runs,
                                      unsigned rounds, const std::function<void(const char*)>& note) {
  note("generating the catalog");
  PublishFigures f;
  const std::string catalog = scratch + "/catalog.jsonl";
  {
    const std::string text = catalog_jsonl(runs);
    f.documents = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
    EVL_RETURN_IF_ERROR(write_output(catalog, text));
  }
  const Bytes seed(32, 9);
  auto importer = SecretKey::from_seed("bench/importer", seed);
  if (!importer) return importer.error();
  const std::string key = scratch + "/importer.key";
  EVL_RETURN_IF_ERROR(importer->save(key));
  for (unsigned round = 0; round < rounds; ++round) {
    note("evledger import of the catalog into a local ledger");
    const std::string local_dir = scratch + "/publish-local";
    EVL_RETURN_IF_ERROR(fresh_ledger(local_dir, seed));
    auto local = timed_import({"--ledger", local_dir}, key, catalog, f.documents, local_dir);
    if (!local) return local.error();
    f.local_s.push_back(*local);
    fs::remove_all(local_dir);
    note("evledger import --to the same catalog into evledger serve");
    std::function<Status(const std::string&)> run_views;
    if (round + 1 == rounds) {
      run_views = [&](const std::string& url) {
        note("GET /api/v1/runs/{digest} on the imported catalog");
        return measure_run_views(url, f);
      };
    }
    auto plain = remote_import(scratch + "/publish-remote", seed, key, catalog, f.documents, {},
                               run_views);
    if (!plain) return plain.error();
    f.remote_s.push_back(*plain);
    note("evledger import --to --receipts");
    const std::string receipts = scratch + "/receipts";
    auto kept = remote_import(scratch + "/publish-receipts", seed, key, catalog, f.documents,
                              {"--receipts", receipts});
    if (!kept) return kept.error();
    f.receipts_s.push_back(*kept);
    fs::remove_all(receipts);
  }
  return f;
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

nlohmann::ordered_json publish_json(const PublishFigures& f) {
  const double local = median(f.local_s), remote = median(f.remote_s);
  const double receipts = median(f.receipts_s);
  return {{"manifests", f.documents},
          {"rounds", f.local_s.size()},
          {"localSeconds", f.local_s},
          {"remoteSeconds", f.remote_s},
          {"remoteWithReceiptsSeconds", f.receipts_s},
          {"localPerSecond", std::round(f.documents / local)},
          {"remotePerSecond", std::round(f.documents / remote)},
          {"remoteWithReceiptsPerSecond", std::round(f.documents / receipts)},
          {"ratioToLocalImport", local / remote},
          {"withReceiptsRatioToLocalImport", local / receipts},
          {"target", "ratioToLocalImport >= 0.7"},
          {"runView", {{"runs", f.run_view_runs},
                       {"p50Ms", f.run_view.p50},
                       {"p99Ms", f.run_view.p99},
                       {"underLoadPerSecond", std::round(f.run_view_load.requests_per_second)},
                       {"underLoadP99Ms", f.run_view_load.p99_ms},
                       {"target", "p99Ms <= 5"}}}};
}

void print_publish(const nlohmann::ordered_json& p) {
  std::printf("import --to of %llu manifests into evledger serve, against the same import into a "
              "local ledger (median of %llu rounds each, alternating): %.0f /s vs %.0f /s = %.2f x "
              "local (target >= 0.7); with --receipts %.0f /s = %.2f x local\n",
              static_cast<unsigned long long>(p["manifests"].get<uint64_t>()),
              static_cast<unsigned long long>(p["rounds"].get<uint64_t>()),
              p["remotePerSecond"].get<double>(), p["localPerSecond"].get<double>(),
              p["ratioToLocalImport"].get<double>(), p["remoteWithReceiptsPerSecond"].get<double>(),
              p["withReceiptsRatioToLocalImport"].get<double>());
  const auto& v = p["runView"];
  std::printf("GET /api/v1/runs/{digest} on that catalog, one at a time over %llu runs: p50 %.2f ms, "
              "p99 %.2f ms (target <= 5); wrk -t1 -c32 on one run %.0f /s, p99 %.2f ms\n",
              static_cast<unsigned long long>(v["runs"].get<uint64_t>()), v["p50Ms"].get<double>(),
              v["p99Ms"].get<double>(), v["underLoadPerSecond"].get<double>(),
              v["underLoadP99Ms"].get<double>());
}

// The catalog of the pages' figures: `runs` generated runs, and the first run's comparison
// group grown to `group_size` by copies of it that differ in name, external id and latency.
std::string pages_catalog(uint64_t runs, uint64_t group_size) {
  std::string out;
  std::optional<Json> first;
  gen::generate_sol_catalog({runs, 11}, [&](const Json& manifest) {
    jcs_append(out, manifest);
    out += '\n';
    if (!first && cli::text_of(manifest.find("kind")) == "BenchmarkRun" &&
        cli::text_of(json_path(manifest, "spec.status")) == "passed") {
      first = manifest;
    }
  });
  if (!first) return out;
  const Json* mean = json_path(*first, "spec.timing.latencyNs.mean");
  const double base = mean && mean->is_number() ? mean->as_number() : 100000;
  for (uint64_t k = 1; k < group_size; ++k) {
    Json copy = *first;
    const std::string tag = "-copy-" + std::to_string(k);
    Json* metadata = copy.find("metadata");
    if (metadata) metadata->set("name", cli::text_of(metadata->find("name")) + tag);
    Json* spec = copy.find("spec");
    Json* native = spec ? spec->find("sourceNative") : nullptr;
    if (native) native->set("externalId", cli::text_of(native->find("externalId")) + tag);
    Json* timing = spec ? spec->find("timing") : nullptr;
    Json* latency = timing ? timing->find("latencyNs") : nullptr;
    if (latency) latency->set("mean", std::round(base * (0.8 + 0.4 * ((k * 7919) % 1000) / 1000.0)));
    jcs_append(out, copy);
    out += '\n';
  }
  return out;
}

// nginx with the project's proxy and cache rules (tools/nginx/evledger-locations.conf, found
// next to the source tree this binary was built from) in front of `upstream` ("127.0.0.1:P").
Status write_nginx_proxy_conf(const std::string& dir, const std::string& locations,
                              const std::string& upstream, int port) {
  const std::string head = nginx_conf_head(dir, "1");
  fs::create_directories(dir + "/cache");
  std::ofstream out(dir + "/nginx.conf");
  out << head << "  proxy_cache_path " << dir << "/cache keys_zone=evledger:10m;\n"
      << "  upstream evledger { server " << upstream << "; keepalive 64; }\n"
      << "  server {\n    listen 127.0.0.1:" << port << ";\n    include " << locations
      << ";\n  }\n}\n";
  return out ? Status::ok() : io_error("cannot write " + dir + "/nginx.conf");
}

std::string nginx_locations_conf() {
  // build/tools/evledger -> the source tree's tools/nginx/.
  const fs::path source = fs::path(self_path()).parent_path().parent_path().parent_path();
  const fs::path conf = source / "tools" / "nginx" / "evledger-locations.conf";
  return fs::exists(conf) ? conf.string() : "";
}

// The pages: each page type under wrk -t1 -c32, the latency of a run page and of a page of a
// group of 260 runs one request at a time, and the run page through nginx's cache.
Result<nlohmann::ordered_json> page_figures(const std::string& scratch, int wrk_seconds,
                                            const std::function<void(const char*)>& note) {
  constexpr uint64_t kGroupRuns = 260;
  note("a catalog of 2,000 runs and a comparison group of 260, imported with projections");
  const std::string dir = scratch + "/pages";
  const Bytes seed(32, 5);
  EVL_RETURN_IF_ERROR(fresh_ledger(dir, seed));
  auto importer = SecretKey::from_seed("bench/importer", seed);
  if (!importer) return importer.error();
  const std::string key = scratch + "/pages-importer.key", catalog = scratch + "/pages.jsonl";
  EVL_RETURN_IF_ERROR(importer->save(key));
  const std::string text = pages_catalog(2000, kGroupRuns);
  EVL_RETURN_IF_ERROR(write_output(catalog, text));
  const auto documents = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  auto imported = timed_import({"--ledger", dir}, key, catalog, documents, scratch);
  if (!imported) return imported.error();
  Child server;
  auto url = start_server(server, dir, dir + ".out", true);
  if (!url) return url.error();
  auto http = HttpClient::open(*url);
  if (!http) return http.error();
  auto get_json = [&](const std::string& target) -> Result<Json> {
    auto r = (*http)->get(target);
    if (!r || r->status != 200) return io_error("GET " + target + " failed");
    return parse_json(r->body);
  };
  auto groups = get_json("api/v1/groups?limit=1000");
  if (!groups) return groups.error();
  std::string group, run, leader, index, benchmark;
  for (const Json& g : groups->find("items")->as_array()) {
    if (json_path(g, "members")->as_number() >= kGroupRuns) group = cli::text_of(g.find("group")).substr(7);
  }
  if (group.empty()) return io_error("the pages' catalog has no group of " + std::to_string(kGroupRuns) + " runs");
  auto members = get_json("api/v1/runs?group=" + group + "&limit=2");
  if (!members) return members.error();
  const auto& items = members->find("items")->as_array();
  const Json& second = items.at(1);
  run = cli::text_of(second.find("run")).substr(7);
  leader = cli::text_of(items.at(0).find("run")).substr(7);
  index = cli::text_of(second.find("index"));
  benchmark = cli::text_of(second.find("benchmark"));
  const std::vector<std::pair<std::string, std::string>> pages = {
      {"home", ""}, {"run", "runs/" + run}, {"group of 260", "groups/" + group},
      {"compare", "compare?run=" + leader + "&run=" + run}, {"event", "events/" + index},
      {"benchmarks", "benchmarks"}, {"benchmark", "benchmarks/" + benchmark},
      {"records", "records"}, {"feed", "records/feed.xml"}, {"keys", "keys"},
      {"search", "search?q=" + benchmark.substr(0, 8)}};
  nlohmann::ordered_json out;
  out["runs"] = 2000 + kGroupRuns - 1;
  note("each page type, wrk -t1 -c32");
  nlohmann::ordered_json per_type = nlohmann::ordered_json::array();
  for (const auto& [name, target] : pages) {
    auto f = run_wrk(*url + target, wrk_seconds);
    if (!f) return f.error();
    per_type.push_back({{"page", name}, {"path", "/" + target},
                        {"perSecond", std::round(f->requests_per_second)}, {"p99Ms", f->p99_ms}});
  }
  out["pages"] = per_type;
  note("the run page and the 260-run group page, one request at a time, and their JSON");
  // Each page next to the API's answer of the same reads (the run's view; the group's runs),
  // measured alternately, so that the ratio is the page's own rendering.
  const std::pair<std::string, std::string> api_of[] = {
      {pages[1].second, "api/v1/runs/" + run}, {pages[2].second, "api/v1/runs?group=" + group + "&limit=1000"}};
  for (size_t i = 0; i < 2; ++i) {
    std::vector<double> page_p50, page_p95, api_p50;
    for (int round = 0; round < 3; ++round) {
      auto page = sequential_latency(*url, {api_of[i].first}, 100);
      if (!page) return page.error();
      auto json = sequential_latency(*url, {api_of[i].second}, 100);
      if (!json) return json.error();
      page_p50.push_back(page->p50);
      page_p95.push_back(page->p95);
      api_p50.push_back(json->p50);
    }
    out["latency"].push_back({{"page", pages[i + 1].first},
                              {"p50Ms", median(page_p50)},
                              {"p95Ms", median(page_p95)},
                              {"apiP50Ms", median(api_p50)},
                              {"ratioToApi", median(page_p50) / median(api_p50)},
                              {"target", "p95Ms < 20"}});
  }
  const std::string locations = nginx_locations_conf();
  if (locations.empty()) {
    out["throughNginx"] = "skipped: tools/nginx/evledger-locations.conf is not next to this binary";
    return out;
  }
  note("the run page through nginx's cache, wrk -t1 -c32");
  Child nginx;
  const int port = free_port();
  const std::string upstream = url->substr(7, url->size() - 8);  // "http://H:P/" -> "H:P"
  EVL_RETURN_IF_ERROR(write_nginx_proxy_conf(scratch + "/nginx-pages", locations, upstream, port));
  EVL_RETURN_IF_ERROR(nginx.start("nginx", {"-e", scratch + "/nginx-pages/error.log", "-p",
                                            scratch + "/nginx-pages", "-c",
                                            scratch + "/nginx-pages/nginx.conf"},
                                  scratch + "/nginx-pages.out"));
  const std::string nginx_url = "http://127.0.0.1:" + std::to_string(port) + "/";
  for (int i = 0; i < 300 && !http_get(nginx_url + "checkpoint"); ++i) usleep(10000);
  auto cached = run_wrk(nginx_url + pages[1].second, wrk_seconds);
  if (!cached) return cached.error();
  const double direct = per_type[1]["perSecond"].get<double>();
  out["throughNginx"] = {{"page", "run"}, {"perSecond", std::round(cached->requests_per_second)},
                         {"p99Ms", cached->p99_ms},
                         {"ratioToDirect", cached->requests_per_second / direct}};
  return out;
}

void print_pages(const nlohmann::ordered_json& p) {
  std::printf("pages of a catalog of %llu runs, wrk -t1 -c32 each:\n",
              static_cast<unsigned long long>(p["runs"].get<uint64_t>()));
  for (const auto& r : p["pages"]) {
    std::printf("  %-13s %8.0f /s, p99 %.2f ms\n", r["page"].get<std::string>().c_str(),
                r["perSecond"].get<double>(), r["p99Ms"].get<double>());
  }
  for (const auto& r : p["latency"]) {
    std::printf("  %-13s one at a time: p50 %.2f ms, p95 %.2f ms (target < 20 ms); %.2f x the "
                "API's JSON of the same reads (p50 %.2f ms)\n",
                r["page"].get<std::string>().c_str(), r["p50Ms"].get<double>(),
                r["p95Ms"].get<double>(), r["ratioToApi"].get<double>(),
                r["apiP50Ms"].get<double>());
  }
  if (p["throughNginx"].is_object()) {
    std::printf("  run page through nginx's cache %8.0f /s = %.2f x evledger serve directly\n",
                p["throughNginx"]["perSecond"].get<double>(),
                p["throughNginx"]["ratioToDirect"].get<double>());
  } else {
    std::printf("  through nginx: %s\n", p["throughNginx"].get<std::string>().c_str());
  }
}

// Static reads: a ledger of 20,000 entries and its export, served by evledger and by nginx
// with the same load generator and settings; the server's memory after 10^4 and 10^6 requests
// and its descriptors before and after.
Result<nlohmann::ordered_json> static_read_figures(const std::string& scratch, ThreadPool& pool,
                                                   int wrk_seconds,
                                                   const std::function<void(const char*)>& note) {
  nlohmann::ordered_json static_reads = nlohmann::ordered_json::array();
  note("a ledger of 20,000 entries and its export");
  const std::string reads_dir = scratch + "/reads";
  auto reads = make_ledger(reads_dir);
  if (!reads) return reads.error();
  if (Status s = fill(*reads, 0, 20000, pool); !s) return s;
  if (auto r = export_tiles(*reads->ledger, scratch + "/export"); !r) return r.error();
  fs::create_directories(reads_dir + "/keys");
  if (Status s = reads->log_key->save(reads_dir + "/keys/log.key"); !s) return s;
  reads->ledger.reset();

  const std::vector<std::pair<std::string, std::string>> resources = {
      {"checkpoint", "checkpoint"}, {"full tile", "tile/0/050"},
      {"entry bundle", "tile/entries/050"}};
  note("static reads: evledger serve and nginx, wrk -t1 -c32");
  Child server, nginx;
  auto url = start_server(server, reads_dir, scratch + "/serve-reads.out", true);
  if (!url) return url.error();
  const int port = free_port();
  if (Status s = write_nginx_conf(scratch + "/nginx", scratch + "/export", port); !s) return s;
  if (Status s = nginx.start("nginx", {"-e", scratch + "/nginx/error.log", "-p", scratch + "/nginx",
                                       "-c", scratch + "/nginx/nginx.conf"},
                             scratch + "/nginx.out");
      !s) {
    return s;
  }
  const std::string nginx_url = "http://127.0.0.1:" + std::to_string(port) + "/";
  for (int i = 0; i < 300 && !http_get(nginx_url + "checkpoint"); ++i) usleep(10000);
  // 10^4 requests first, for the memory figure at that point.
  auto warm = HttpClient::open(*url);
  if (!warm) return warm.error();
  const ProcessFigures server_before_reads = process_figures(server.pid());
  for (int i = 0; i < 10000; ++i) {
    auto r = (*warm)->get(resources[i % 3].second);
    if (!r || r->status != 200) return io_error("GET failed during the warm-up");
  }
  warm->reset();
  ProcessFigures after_1e4 = process_figures(server.pid());
  uint64_t served = 10000;
  for (const auto& [name, path] : resources) {
    auto ours = run_wrk(*url + path, wrk_seconds);
    if (!ours) return ours.error();
    auto theirs = run_wrk(nginx_url + path, wrk_seconds);
    if (!theirs) return theirs.error();
    served += ours->requests;
    static_reads.push_back({{"resource", name},
                            {"path", path},
                            {"evledgerPerSecond", std::round(ours->requests_per_second)},
                            {"nginxPerSecond", std::round(theirs->requests_per_second)},
                            {"ratioToNginx", ours->requests_per_second / theirs->requests_per_second},
                            {"evledgerP99Ms", ours->p99_ms},
                            {"nginxP99Ms", theirs->p99_ms}});
  }
  // Up to 10^6 requests in all, for the memory figure there.
  while (served < 1000000) {
    auto more = run_wrk(*url + resources[(served / 100000) % 3].second, wrk_seconds);
    if (!more) return more.error();
    served += more->requests;
  }
  usleep(200000);  // the load generator's connections close
  const ProcessFigures server_after_reads = process_figures(server.pid());
  static_reads.push_back({{"memory",
                           {{"requests", 10000}, {"peakRssMB", after_1e4.peak_rss_mb}}},
                          {"memoryAfter", {{"requests", served},
                                           {"peakRssMB", server_after_reads.peak_rss_mb},
                                           {"rssMB", server_after_reads.rss_mb}}},
                          {"fds", {{"before", server_before_reads.fds},
                                   {"after", server_after_reads.fds}}}});
  return static_reads;
}

void print_static_reads(const nlohmann::ordered_json& static_reads, int wrk_seconds) {
  std::printf("static reads, wrk -t1 -c32 %ds each, evledger serve vs nginx on the same export\n",
              wrk_seconds);
  for (const auto& r : static_reads) {
    if (!r.contains("resource")) continue;
    std::printf("  %-13s %8.0f /s vs %8.0f /s = %.2f x nginx (targets >= 20,000/s, >= 0.7); "
                "p99 %.2f ms vs %.2f ms\n",
                r["resource"].get<std::string>().c_str(), r["evledgerPerSecond"].get<double>(),
                r["nginxPerSecond"].get<double>(), r["ratioToNginx"].get<double>(),
                r["evledgerP99Ms"].get<double>(), r["nginxP99Ms"].get<double>());
  }
  const auto& mem = static_reads.back();
  std::printf("  server memory: peak RSS %.1f MB after 10^4 requests, %.1f MB after %llu; "
              "descriptors %zu before the load, %zu after\n",
              mem["memory"]["peakRssMB"].get<double>(), mem["memoryAfter"]["peakRssMB"].get<double>(),
              static_cast<unsigned long long>(mem["memoryAfter"]["requests"].get<uint64_t>()),
              mem["fds"]["before"].get<size_t>(), mem["fds"]["after"].get<size_t>());
}

// The value of an unlabelled metric in a Prometheus text exposition, or 0 when it is absent.
double metric_value(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
        line[name.size()] == ' ') {
      return std::strtod(line.c_str() + name.size() + 1, nullptr);
    }
  }
  return 0;
}

struct AppendFigures {
  double local_rate = 0;  // the local sustained append, entries/s
  nlohmann::ordered_json posts = nlohmann::ordered_json::array();
};

// Appends: the local sustained rate, then POST /add-event from 64 clients, 1 and 100 entries
// per request, each into a fresh ledger that `evledger serve` holds.
Result<AppendFigures> append_figures(const std::string& scratch, uint64_t n_entries,
                                     ThreadPool& pool,
                                     const std::function<void(const char*)>& note) {
  AppendFigures f;
  note("signing entries");
  const std::string local_dir = scratch + "/local";
  Bytes seed(32, 7);
  // With the projections, as `evledger append` and `evledger serve` keep them.
  auto local = make_ledger(local_dir, true, seed, make_projection_hook());
  if (!local) return local.error();
  auto signed_entries = sign_many(local->importer, 0, n_entries, pool);
  note("local sustained append with projections (batches of 1,000 from 8 threads)");
  uint64_t local_added = 0;
  auto local_s = append_from_clients(*local->ledger, signed_entries, kBatch, kClients, local_added);
  if (!local_s) return local_s.error();
  f.local_rate = local_added / *local_s;
  local->ledger.reset();
  fs::remove_all(local_dir);

  for (size_t batch : {size_t{1}, size_t{100}}) {
    note(batch == 1 ? "POST /add-event, 64 clients, 1 entry each"
                    : "POST /add-event, 64 clients, 100 entries each");
    const std::string dir = scratch + "/post-" + std::to_string(batch);
    auto ledger = make_ledger(dir, true, seed);
    if (!ledger) return ledger.error();
    fs::create_directories(dir + "/keys");
    if (Status s = ledger->log_key->save(dir + "/keys/log.key"); !s) return s;
    ledger->ledger.reset();
    Child server;
    auto url = start_server(server, dir, dir + ".out", false);
    if (!url) return url.error();
    const size_t count = batch == 1 ? std::min<size_t>(n_entries, 20000) : n_entries;
    auto figures = post_load(*url, std::span(signed_entries).first(count), batch, 64);
    if (!figures) return figures.error();
    // How many requests shared each durable commit, from the server's own counter.
    auto metrics = http_get(*url + "metrics");
    if (!metrics) return metrics.error().with_context("the server's /metrics");
    const double commits = metric_value(*metrics, "evledger_commits_total");
    const double commit_seconds = metric_value(*metrics, "evledger_commit_duration_seconds_sum");
    f.posts.push_back({{"entriesPerRequest", batch},
                       {"clients", 64},
                       {"entries", figures->entries},
                       {"perSecond", std::round(figures->per_second)},
                       {"ratioToLocalAppend", figures->per_second / f.local_rate},
                       {"p50Ms", figures->p50_ms},
                       {"p99Ms", figures->p99_ms},
                       {"commits", commits},
                       {"entriesPerCommit", commits > 0 ? figures->entries / commits : 0.0},
                       {"commitMs", commits > 0 ? commit_seconds * 1000 / commits : 0.0},
                       {"target", "ratioToLocalAppend >= 0.7"}});
    server.stop();
    fs::remove_all(dir);
  }
  return f;
}

void print_appends(const AppendFigures& f, double verify_all) {
  std::printf("local sustained append %.0f /s (%.2f x verify)\n", f.local_rate,
              f.local_rate / verify_all);
  std::printf("POST /add-event from 64 clients, signed 2 KiB entries, answered after the durable "
              "commit with receipts\n");
  for (const auto& p : f.posts) {
    std::printf("  %3llu per request %8.0f /s = %.2f x local append (target >= 0.7); request "
                "p50 %.2f ms, p99 %.2f ms; %.0f entries per commit of %.2f ms\n",
                static_cast<unsigned long long>(p["entriesPerRequest"].get<uint64_t>()),
                p["perSecond"].get<double>(), p["ratioToLocalAppend"].get<double>(),
                p["p50Ms"].get<double>(), p["p99Ms"].get<double>(),
                p["entriesPerCommit"].get<double>(), p["commitMs"].get<double>());
  }
}

}  // namespace

int bench_pages(const Args& args) {
  const bool json = args.has("json");
  const Scratch scratch(scratch_dir(args, "pages"));
  auto figures = page_figures(scratch.dir, 4, [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  });
  if (!figures) return fail(figures.error());
  if (json) {
    nlohmann::ordered_json out;
    out["pages"] = *figures;
    std::printf("%s\n", out.dump().c_str());
  } else {
    print_pages(*figures);
  }
  return kExitOk;
}

int bench_publish(const Args& args) {
  auto runs = args.get_u64("entries", 10000, kBenchEntries);
  if (!runs) return fail(runs.error());
  auto rounds = args.get_u64("rounds", 3, {1, 100});
  if (!rounds) return fail(rounds.error());
  const bool json = args.has("json");
  const Scratch scratch(scratch_dir(args, "publish"));
  auto figures = publish_rounds(scratch.dir, *runs, static_cast<unsigned>(*rounds), [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  });
  if (!figures) return fail(figures.error());
  nlohmann::ordered_json out;
  out["publish"] = publish_json(*figures);
  if (json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    print_publish(out["publish"]);
  }
  return kExitOk;
}

int bench_serve(const Args& args) {
  auto entries_opt = args.get_u64("entries", 50000, {2000, 10000000});
  if (!entries_opt) return fail(entries_opt.error());
  const uint64_t n_entries = *entries_opt;
  const bool json = args.has("json");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int kWrkSeconds = 4;
  auto parts = bench_parts(args, {"reads", "appends", "publish", "pages"});
  if (!parts) return fail(parts.error());
  auto want = [&](const char* part) { return parts->count(part) > 0; };
  auto note = [&](const char* what) {
    if (!json) std::fprintf(stderr, "bench: %s...\n", what);
  };
  const Scratch scratch_files(scratch_dir(args, "serve"));
  const std::string& scratch = scratch_files.dir;

  note("Ed25519 verify rate");
  const double verify_before = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  ThreadPool pool;
  std::optional<nlohmann::ordered_json> reads, publish, pages;
  std::optional<AppendFigures> appends;
  if (want("reads")) {
    auto r = static_read_figures(scratch, pool, kWrkSeconds, note);
    if (!r) return fail(r.error());
    reads = std::move(*r);
  }
  if (want("appends")) {
    auto a = append_figures(scratch, n_entries, pool, note);
    if (!a) return fail(a.error());
    appends = std::move(*a);
  }
  if (want("publish")) {
    auto p = publish_rounds(scratch, 10000, 3, note);
    if (!p) return fail(p.error());
    publish = publish_json(*p);
  }
  if (want("pages")) {
    auto p = page_figures(scratch, kWrkSeconds, note);
    if (!p) return fail(p.error());
    pages = std::move(*p);
  }
  const double verify_after = ed25519_verify_rate(cores, kEntryBytes, 1.5);
  const double verify_all = (verify_before + verify_after) / 2;

  nlohmann::ordered_json out;
  out["machine"] = {{"cores", cores}, {"ed25519VerifyPerSecondAllCores", std::round(verify_all)}};
  if (appends) {
    out["machine"]["localSustainedAppendPerSecond"] = std::round(appends->local_rate);
    out["machine"]["localAppendRatioToVerify"] = appends->local_rate / verify_all;
  }
  if (reads) out["staticReads"] = *reads;
  if (appends) out["appends"] = appends->posts;
  if (publish) out["publish"] = *publish;
  if (pages) out["pages"] = *pages;
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("machine (%u cores): Ed25519 verify %.0f /s on all cores\n", cores, verify_all);
  if (reads) print_static_reads(*reads, kWrkSeconds);
  if (appends) print_appends(*appends, verify_all);
  if (publish) print_publish(*publish);
  if (pages) print_pages(*pages);
  return kExitOk;
}

}  // namespace evl::cli::bench
