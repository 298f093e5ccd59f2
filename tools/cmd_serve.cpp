// evledger serve — the ledger on the network: C2SP tlog-tiles reads, POST /add-event, the
// JSON API, /healthz and /metrics (tools/server/). Thin: options, wiring, the signal.
#include <atomic>
#include <cstdio>
#include <memory>

#include "events/utf8.h"
#include "ledger/append_queue.h"
#include "ledger/witnessing.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/serve_options.h"
#include "tools/server/api.h"
#include "tools/server/handlers.h"
#include "tools/server/pages.h"
#include "tools/server/server.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger serve --ledger DIR [--listen HOST:PORT] [--read-only] [--threads N]\n"
    "                      [--prefix /PATH] [--log-key FILE] [--policy FILE\n"
    "                      [--witness-timeout MS] [--wait-timeout MS]] [limits...]\n"
    "\n"
    "Serves the ledger over HTTP until SIGINT or SIGTERM (Ctrl-C), then stops accepting,\n"
    "answers every append in flight, and exits 0. Prints the URL and the log's verifier key.\n"
    "  /checkpoint, /tile/<L>/<N>[.p/<W>], /tile/entries/<N>[.p/<W>]   C2SP tlog-tiles, served\n"
    "        straight from the ledger, byte for byte what export-tiles writes\n"
    "  POST /add-event   one entry (application/octet-stream) or up to 1,000 uint16-framed\n"
    "        entries (application/vnd.evledger.entries); answered after the durable commit,\n"
    "        with a C2SP tlog-proof receipt per entry; 503 with Retry-After when the queue is full\n"
    "  /api/v1/...   the JSON API: events, proofs, checkpoints, runs, groups, leaders,\n"
    "        benchmarks, keys, statement; described by /api/v1/openapi.json\n"
    "  /runs/<run>, /groups/<key>, /compare?run=..&run=..   the pages people read, rendered\n"
    "        from the projections (HTML)\n"
    "  /healthz, /metrics (Prometheus)\n"
    "\n"
    "  --listen HOST:PORT   address to listen on (default 127.0.0.1:8080; port 0: any free one)\n"
    "  --read-only          serve reads only (POST is 405); the ledger may be a mirror that\n"
    "                       another process writes\n"
    "  --threads N          I/O threads (default: one per core)\n"
    "  --prefix /PATH       serve everything under /PATH (default: the root)\n"
    "  --log-key FILE       the log key that signs each commit's checkpoint (default\n"
    "                       DIR/keys/log.key)\n"
    "  --policy FILE        a C2SP tlog-policy (c2sp.org/tlog-policy) whose witness lines carry\n"
    "                       submission URLs: after each commit the newest checkpoint goes to\n"
    "                       every witness, and /checkpoint serves only checkpoints with the\n"
    "                       policy's quorum of cosignatures (kept in DIR/witnessing/checkpoint;\n"
    "                       503 until the first). Appends are still answered at the commit;\n"
    "                       POST /add-event?wait=witnessed waits for the quorum\n"
    "  --witness-timeout MS [5000]  deadline of each step of a submission to a witness\n"
    "  --wait-timeout MS [30000]    how long ?wait=witnessed waits before it answers 504\n"
    "limits on clients (defaults in brackets):\n"
    "  --max-connections N [4096]  --header-limit BYTES [16384]  --header-timeout MS [10000]\n"
    "  --idle-timeout MS [30000]   --body-timeout MS [60000]     --write-timeout MS [60000]\n"
    "  --queue-entries N [65536]   entries queued for the writer before appends get 503\n"
    "  --cache-mb N [256]          memory for tiles and bundles already served\n";

// --queue-entries and --cache-mb: the log server's own limits.
Status parse_log_limits(const Args& args, uint64_t& queue_entries, uint64_t& cache_mb) {
  auto q = args.get_u64("queue-entries", 65536, {1, 1u << 24});
  if (!q) return q.error();
  auto c = args.get_u64("cache-mb", 256, {0, 1u << 20});
  if (!c) return c.error();
  queue_entries = *q;
  cache_mb = *c;
  return Status::ok();
}

// --policy and its timeouts: the witnessing options, or nullopt without --policy.
// The state's directory is set once the ledger is open.
Result<std::optional<WitnessingOptions>> parse_witnessing(const Args& args) {
  auto step = args.get_u64("witness-timeout", 5000, {1, 600000});
  if (!step) return step.error();
  auto policy_path = args.get("policy");
  if (!policy_path) {
    if (args.has("witness-timeout") || args.has("wait-timeout")) {
      return usage_error("--witness-timeout and --wait-timeout need --policy");
    }
    return std::optional<WitnessingOptions>();
  }
  std::optional<TlogPolicy> policy;
  EVL_RETURN_IF_ERROR(load_policy_option(args, policy));
  WitnessingOptions options;
  options.policy = std::move(*policy);
  options.http.timeout = std::chrono::milliseconds(*step);
  options.notice = [](const std::string& text) {
    std::fprintf(stderr, "evledger: %s\n", text.c_str());
  };
  return std::optional<WitnessingOptions>(std::move(options));
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("serve takes no arguments"));
  server::ServerOptions options;
  if (Status s = parse_server_options(args, "127.0.0.1:8080", options); !s) return fail(s);
  uint64_t queue_entries = 0, cache_mb = 0;
  if (Status s = parse_log_limits(args, queue_entries, cache_mb); !s) return fail(s);
  std::string prefix = args.get("prefix").value_or("");
  if (!prefix.empty() && (prefix[0] != '/' || prefix.find("//") != std::string::npos)) {
    return fail(usage_error("--prefix " + prefix + " is a URL path such as /log"));
  }
  const bool read_only = args.has("read-only");
  auto wait = args.get_u64("wait-timeout", 30000, {1, 3600000});
  if (!wait) return fail(wait.error());
  auto witnessing_options = parse_witnessing(args);
  if (!witnessing_options) return fail(witnessing_options.error());
  if (*witnessing_options && read_only) {
    return fail(usage_error("--policy submits the log's own checkpoints to witnesses: a "
                            "read-only server has none to submit"));
  }

  // The writer's commits are counted from the first one on; the metrics exist before it.
  server::Router router(prefix, read_only);
  server::add_log_routes(router);
  server::add_api_routes(router);
  server::add_page_routes(router);
  std::vector<std::string> names;
  for (const auto& r : router.routes()) names.push_back(r.name);
  std::vector<std::string> witnesses;
  if (*witnessing_options) {
    for (const auto& w : (*witnessing_options)->policy.witnesses()) witnesses.push_back(w.name);
  }
  server::Metrics metrics(names, witnesses);

  // Commits reach the witnessing component once it runs; it reads the log's size when it
  // starts, so a commit before that is not missed.
  std::atomic<Witnessing*> witnessing_target{nullptr};
  auto on_commit = [&metrics, &witnessing_target](const CommitInfo& c) {
    metrics.record_commit(c);
    if (Witnessing* w = witnessing_target.load()) w->committed(c);
  };
  auto ledger = read_only ? open_ledger(args, false) : open_ledger_to_append(args, on_commit);
  if (!ledger) return fail(ledger.error());
  auto vkey = (*ledger)->log_verifier();
  if (!vkey) return fail(vkey.error().with_context("the ledger has no genesis to serve"));
  std::unique_ptr<Witnessing> witnessing;
  if (*witnessing_options) {
    WitnessingOptions& w = **witnessing_options;
    w.dir = witnessing_dir((*ledger)->dir());
    w.on_submission = [&metrics](size_t i, SubmissionOutcome o) { metrics.record_submission(i, o); };
    w.on_publication_delay = [&metrics](std::chrono::nanoseconds d) {
      metrics.record_publication_delay(d);
    };
    auto started = Witnessing::start(**ledger, std::move(w));
    if (!started) return fail(started.error().with_context("--policy"));
    witnessing = std::move(*started);
    witnessing_target.store(witnessing.get());
  }

  std::unique_ptr<AppendQueue> appends;
  if (!read_only) {
    AppendQueueOptions q;
    q.max_entries = queue_entries;
    appends = std::make_unique<AppendQueue>(**ledger, q);
  }
  server::ResourceCache resources(cache_mb << 20);
  server::CheckpointCache checkpoints(**ledger);
  server::Context context(**ledger, appends.get(), resources, checkpoints, metrics);
  context.log_vkey = vkey->to_string();
  context.witnessing = witnessing.get();
  context.witnessed_wait = std::chrono::milliseconds(*wait);

  auto http = server::HttpServer::start(options, router, context);
  if (!http) return fail(http.error());
  std::printf("serving %s%s/ (ledger %s, %llu entries, %s)\n",
              server_url(options, (*http)->port()).c_str(), prefix.c_str(), (*ledger)->dir().c_str(),
              static_cast<unsigned long long>((*ledger)->size()),
              read_only ? "read-only" : "appends at POST /add-event");
  std::printf("log key: %s\n", visible_text(context.log_vkey).c_str());
  if (witnessing) {
    std::printf("witnesses: %zu, quorum %s; /checkpoint serves witnessed checkpoints only\n",
                witnessing->policy().witnesses().size(),
                visible_text(witnessing->policy().quorum()).c_str());
  }
  std::fflush(stdout);
  std::fprintf(stderr, "evledger: press Ctrl-C to stop\n");

  const int signal = (*http)->wait_for_signal();
  std::fprintf(stderr, "evledger: signal %d: stopping; answering the requests in flight\n", signal);
  (*http)->shutdown(std::chrono::seconds(30));
  if (appends) appends->close();
  witnessing_target.store(nullptr);
  witnessing.reset();
  std::fprintf(stderr, "evledger: stopped at %llu entries\n",
               static_cast<unsigned long long>((*ledger)->size()));
  return kExitOk;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = server_option_specs();
  specs.insert(specs.end(), {{"ledger"}, {"read-only", false}, {"prefix"}, {"log-key"},
                             {"queue-entries"}, {"cache-mb"}, {"policy"},
                             {"witness-timeout"}, {"wait-timeout"}});
  return run_command(argv, specs, kUsage, run);
}

}  // namespace evl::cli
