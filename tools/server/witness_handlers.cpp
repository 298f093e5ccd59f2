#include "tools/server/witness_handlers.h"

#include "events/bytes.h"
#include "keys/witness_format.h"

namespace evl::server {

namespace {

constexpr std::string_view kCheckpointSuffix = "/checkpoint";
constexpr size_t kOriginHashHex = 64;

}  // namespace

void add_witness_routes(WitnessRouter& router) {
  router.post("/add-checkpoint", "add-checkpoint", handle_add_checkpoint, kMaxAddCheckpointBody);
  router.get("/healthz", "healthz", handle_witness_healthz);
  router.get("/metrics", "metrics", handle_witness_metrics);
  // Last: every other GET path is a log's, "/<hex>/checkpoint" or nothing (404).
  router.get("/", "witnessed-checkpoint", handle_witnessed_checkpoint, true);
}

Result<std::unique_ptr<WitnessServer>> serve_witness(const Witness& witness,
                                                     const ServerOptions& options,
                                                     const std::string& prefix) {
  auto served = std::make_unique<WitnessServer>();
  served->router = WitnessRouter(prefix);
  add_witness_routes(served->router);
  std::vector<std::string> names;
  for (const auto& r : served->router.routes()) names.push_back(r.name);
  served->metrics = std::make_unique<Metrics>(names);
  served->context = std::make_unique<WitnessContext>(witness, *served->metrics);
  auto http = HttpServer::start(options, served->router, *served->context);
  if (!http) return http.error();
  served->http = std::move(*http);
  std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  served->url = "http://" + host + ":" + std::to_string(served->http->port()) + prefix + "/";
  return served;
}

int witness_status(WitnessVerdict verdict) {
  switch (verdict) {
    case WitnessVerdict::kCosigned: return 200;
    case WitnessVerdict::kMalformed: return 400;
    case WitnessVerdict::kForbidden: return 403;
    case WitnessVerdict::kUnknownLog: return 404;
    case WitnessVerdict::kConflict: return 409;
    case WitnessVerdict::kInconsistent: return 422;
    case WitnessVerdict::kBusy: return 503;
    case WitnessVerdict::kFailed: return 500;
  }
  return 500;
}

Response witness_response(const WitnessAnswer& answer, int retry_after_seconds) {
  const int status = witness_status(answer.verdict);
  switch (answer.verdict) {
    case WitnessVerdict::kCosigned:
      return Response::bytes(200, "text/plain; charset=utf-8", answer.body);
    case WitnessVerdict::kConflict:
      return Response::bytes(409, std::string(kTlogSizeContentType), answer.body);
    case WitnessVerdict::kBusy:
      return problem(status, answer.message)
          .with("Retry-After", std::to_string(retry_after_seconds));
    default:
      return problem(status, answer.message);
  }
}

void handle_add_checkpoint(const Request& request, WitnessContext& context, Respond respond) {
  const int retry_after = context.retry_after_seconds;
  Metrics* metrics = &context.metrics;
  context.witness.add_checkpoint(
      request.body, [respond = std::move(respond), retry_after, metrics](WitnessAnswer a) {
        if (a.verdict == WitnessVerdict::kBusy) metrics->record_overload();
        respond(witness_response(a, retry_after));
      });
}

Response handle_witnessed_checkpoint(const Request& request, WitnessContext& context) {
  std::string_view rest = request.rest;  // after "/"
  if (rest == "add-checkpoint") {
    return problem(405, "add-checkpoint takes POST (the C2SP tlog-witness request)")
        .with("Allow", "POST");
  }
  Digest origin_hash{};
  if (rest.size() != kOriginHashHex + kCheckpointSuffix.size() ||
      rest.substr(kOriginHashHex) != kCheckpointSuffix ||
      !hex_decode_into(rest.substr(0, kOriginHashHex), origin_hash, true)) {
    return problem(404, request.path.substr(0, 200) +
                            " is not a resource of this witness: it serves POST "
                            "/add-checkpoint and GET /<lowercase hex SHA-256 of a log's "
                            "origin>/checkpoint");
  }
  auto note = context.witness.checkpoint_note(origin_hash);
  if (!note) return problem(note.error());
  return Response::bytes(200, "text/plain; charset=utf-8", std::move(*note))
      .with("Cache-Control", "no-cache");
}

Response handle_witness_healthz(const Request&, WitnessContext& context) {
  std::string body = "{\"ok\":true,\"cosigner\":" +
                     json_string(context.witness.cosigner().to_string()) +
                     ",\"logs\":" + std::to_string(context.witness.logs().size()) + "}";
  return Response::bytes(200, "application/json", std::move(body))
      .with("Cache-Control", "no-store");
}

Response handle_witness_metrics(const Request&, WitnessContext& context) {
  Gauges gauges;
  gauges.log = false;
  gauges.witness_state = context.witness.state().stats();
  gauges.connections = context.connections.load(std::memory_order_relaxed);
  return Response::bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                         context.metrics.render(gauges))
      .with("Cache-Control", "no-store");
}

}  // namespace evl::server
