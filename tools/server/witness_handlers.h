// tools/server/witness_handlers.h — the routes of `evledger witness serve`: a C2SP tlog
// witness (c2sp.org/tlog-witness) over the same HttpServer and router as the log's server.
//
//   POST /add-checkpoint          the spec's request body (keys/witness_format.h), at most
//                                 kMaxAddCheckpointBody bytes (413 beyond); answers 200 with
//                                 the cosignature line (text/plain), 409 with "<size>\n"
//                                 (text/x.tlog.size), 400, 403, 404, 422 as problem+json, and
//                                 503 with Retry-After when the state's queue is full; each
//                                 answered after the durable commit when it changes state
//   GET  /<hex sha256(origin)>/checkpoint   the latest cosigned checkpoint of that log, with
//                                 the log's signature and the witness's cosignature; 404 when
//                                 it cosigned none (lowercase hex, as the spec writes it)
//   GET  /healthz                 {"ok":true,"cosigner":"<vkey>","logs":N}
//   GET  /metrics                 Prometheus text: requests by route and status, latency,
//                                 connections, checkpoints cosigned and the state's commits
// The verdicts and their rules are ledger/witness.h's; the handlers only map them to statuses.
//
// Thread safety: handlers are plain functions of their request and context.
#pragma once

#include "ledger/witness.h"
#include "tools/server/http.h"
#include "tools/server/router.h"
#include "tools/server/server.h"
#include "tools/server/server_context.h"

namespace evl::server {

struct WitnessContext : ServerContext {
  WitnessContext(const Witness& w, Metrics& m) : ServerContext(m), witness(w) {}
  const Witness& witness;
  int retry_after_seconds = 1;  // what a 503 asks the log to wait
};

using WitnessRouter = BasicRouter<WitnessContext>;

// A witness behind the HttpServer with its routes, metrics and context: what `evledger
// witness serve`, `bench witness` and the tests run. Destroying it stops the server first.
struct WitnessServer {
  WitnessRouter router;
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<WitnessContext> context;
  std::unique_ptr<HttpServer> http;
  std::string url;  // "http://HOST:PORT<prefix>/"
  ~WitnessServer() { http.reset(); }
};

// Starts serving `witness` (which must outlive the server); HttpServer::start's errors.
Result<std::unique_ptr<WitnessServer>> serve_witness(const Witness& witness,
                                                     const ServerOptions& options,
                                                     const std::string& prefix = "");

// Adds the routes above to `router`.
void add_witness_routes(WitnessRouter& router);

// The HTTP status of a witness verdict (the spec's: 200, 400, 403, 404, 409, 422; 503, 500).
int witness_status(WitnessVerdict verdict);
// The response for an answer of Witness::add_checkpoint.
Response witness_response(const WitnessAnswer& answer, int retry_after_seconds);

void handle_add_checkpoint(const Request& request, WitnessContext& context, Respond respond);
Response handle_witnessed_checkpoint(const Request& request, WitnessContext& context);
Response handle_witness_healthz(const Request& request, WitnessContext& context);
Response handle_witness_metrics(const Request& request, WitnessContext& context);

}  // namespace evl::server
