// evledger witness serve — a C2SP tlog witness on the network (ledger/witness.h over
// tools/server/): POST /add-checkpoint and the monitoring GET. Thin: options, wiring, the
// signal.
#include <cstdio>
#include <memory>
#include <string>

#include "events/utf8.h"
#include "keys/checkpoint.h"
#include "keys/tlog_policy.h"
#include "ledger/witness.h"
#include "tools/commands.h"
#include "tools/serve_options.h"
#include "tools/server/server.h"
#include "tools/server/witness_handlers.h"

namespace evl::cli {

namespace {

const std::string kUsage = std::string(
    "usage: evledger witness serve --key FILE --dir STATE --log VKEY [--log VKEY]...\n"
    "                              [--listen HOST:PORT] [--prefix /PATH] [--queue N] [limits...]\n"
    "\n"
    "Runs a C2SP tlog witness (c2sp.org/tlog-witness) for the logs given, until SIGINT or\n"
    "SIGTERM (Ctrl-C): it cosigns each checkpoint it can prove consistent with the last one it\n"
    "cosigned for that log, after storing it durably. Any C2SP log with an Ed25519 checkpoint\n"
    "key can use it, not only evledger's. Prints the URL and the witness's cosigner key.\n"
    "  POST /add-checkpoint   'old N', up to 63 consistency-proof lines, an empty line, the\n"
    "        signed checkpoint; answers 200 with the cosignature line, 409 with the size it\n"
    "        holds (text/x.tlog.size), 400 malformed or old > size, 403 no valid signature by\n"
    "        the log, 404 unknown log, 422 a proof that fails (or another root at its size)\n"
    "  GET /<hex SHA-256 of the origin>/checkpoint   the latest checkpoint it cosigned, with\n"
    "        the log's signature and its own cosignature (404 if none)\n"
    "  GET /healthz\n"
    "\n"
    "  --key FILE           the witness's secret key, from 'evledger key new NAME --cosigner'\n"
    "  --dir STATE          the witness's state (LMDB), created when missing: per log, the\n"
    "                       latest cosigned checkpoint\n"
    "  --log VKEY           a log to witness: its verifier key (the key's name is the log's\n"
    "                       origin), a file holding one, or a tlog-policy file (c2sp.org/\n"
    "                       tlog-policy), of which every 'log' line is taken; repeatable, and\n"
    "                       several keys of one origin are all trusted\n"
    "  --listen HOST:PORT   address to listen on (default 127.0.0.1:8081; port 0: any free one)\n"
    "  --prefix /PATH       the submission and monitoring prefix (default: the root)\n"
    "  --queue N [4096]     checkpoints waiting to be stored before requests get 503\n") +
    kServerLimitsUsage;

int run_serve(const Args& args) {
  server::ServerOptions options;
  if (Status s = parse_server_options(args, "127.0.0.1:8081", options); !s) return fail(s);
  auto queue = args.get_u64("queue", 4096, {1, 1u << 20});
  if (!queue) return fail(queue.error());
  std::string prefix = args.get("prefix").value_or("");
  if (!prefix.empty() && (prefix[0] != '/' || prefix.find("//") != std::string::npos)) {
    return fail(usage_error("--prefix " + prefix + " is a URL path such as /witness"));
  }
  auto key_file = args.require("key");
  if (!key_file) return fail(key_file.error());
  auto dir = args.require("dir");
  if (!dir) return fail(dir.error());
  auto key = SecretKey::load(*key_file);
  if (!key) return fail(key.error().with_context("--key"));

  WitnessOptions witness_options;
  witness_options.dir = *dir;
  witness_options.key = std::make_shared<const SecretKey>(std::move(*key));
  witness_options.max_queued = *queue;
  witness_options.on_split_view = [](const std::string& origin, const std::string& path) {
    std::fprintf(stderr, "evledger: the log %s signed two trees of one size (a split view); "
                 "evidence: %s\n", visible_text(origin).c_str(), path.c_str());
  };
  for (const std::string& log : args.all("log")) {
    auto keys = load_log_keys(log);
    if (!keys) return fail(usage_error("--log: " + keys.error().message()));
    for (VerifierKey& k : *keys) witness_options.logs.push_back(std::move(k));
  }
  auto witness = Witness::open(std::move(witness_options));
  if (!witness) return fail(witness.error());

  auto served = server::serve_witness(**witness, options, prefix);
  if (!served) return fail(served.error());
  auto& http = (*served)->http;
  std::printf("witnessing %s%s/ (%zu logs, state %s)\n",
              server_url(options, http->port()).c_str(), prefix.c_str(),
              (*witness)->logs().size(), dir->c_str());
  std::printf("cosigner key: %s\n", (*witness)->cosigner().to_string().c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "evledger: press Ctrl-C to stop\n");

  const int signal = http->wait_for_signal();
  std::fprintf(stderr, "evledger: signal %d: stopping; answering the requests in flight\n", signal);
  http->shutdown(std::chrono::seconds(30));
  const WitnessStateStats stats = (*witness)->state().stats();
  std::fprintf(stderr, "evledger: stopped after %llu cosigned checkpoints in %llu commits\n",
               static_cast<unsigned long long>(stats.stored),
               static_cast<unsigned long long>(stats.commits));
  return kExitOk;
}

int run(const Args& args) {
  if (args.positional().size() != 1 || args.positional()[0] != "serve") {
    return fail(usage_error("witness takes one subcommand: serve"));
  }
  return run_serve(args);
}

}  // namespace

int cmd_witness(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = server_option_specs();
  specs.insert(specs.end(), {{"key"}, {"dir"}, {"log", true, true}, {"prefix"}, {"queue"}});
  return run_command(argv, specs, kUsage.c_str(), run);
}

}  // namespace evl::cli
