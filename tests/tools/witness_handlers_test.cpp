// The witness's routes and handlers, called as plain functions: no socket, a real state.
#include <catch2/catch.hpp>

#include <future>

#include "keys/witness_format.h"
#include "tests/support/foreign_log.h"
#include "tests/support/test_support.h"
#include "tools/server/witness_handlers.h"

namespace evl {
namespace {

using server::Request;
using server::Response;
using test::ForeignLog;

struct Served {
  explicit Served(std::string prefix = "") : log("foreign.example/log"), router(prefix) {
    WitnessOptions options;
    options.dir = dir.str();
    options.key = std::make_shared<const SecretKey>(test::witness_key("witness.example/w1"));
    options.logs = {log.vkey()};
    auto opened = Witness::open(options);
    REQUIRE_OK(opened);
    witness = std::move(*opened);
    server::add_witness_routes(router);
    std::vector<std::string> names;
    for (const auto& r : router.routes()) names.push_back(r.name);
    metrics = std::make_unique<server::Metrics>(names);
    context = std::make_unique<server::WitnessContext>(*witness, *metrics);
  }

  Response call(std::string method, std::string target, std::string body = {}) {
    Request request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = std::move(body);
    std::promise<Response> answer;
    router.handle(request, *context, [&](Response r) { answer.set_value(std::move(r)); });
    return answer.get_future().get();
  }
  Response post(const std::string& body) { return call("POST", "/add-checkpoint", body); }

  test::TempDir dir;
  ForeignLog log;
  std::unique_ptr<Witness> witness;
  server::WitnessRouter router;
  std::unique_ptr<server::Metrics> metrics;
  std::unique_ptr<server::WitnessContext> context;
};

std::string body_of(const Response& r) { return r.body ? *r.body : std::string(); }

std::string origin_path(const std::string& origin) {
  return "/" + hex_encode(sha256(as_bytes(origin))) + "/checkpoint";
}

TEST_CASE("add-checkpoint answers with the spec's statuses and bodies", "[server][witness]") {
  Served s;
  s.log.grow(9);
  Response malformed = s.post("old x\n\n");
  CHECK(malformed.status == 400);
  CHECK(malformed.content_type == "application/problem+json");
  ForeignLog stranger("stranger.example/log", 3);
  stranger.grow(1);
  CHECK(s.post(stranger.request(0)).status == 404);
  ForeignLog impostor("foreign.example/log", 99);
  impostor.grow(9);
  CHECK(s.post(impostor.request(0)).status == 403);
  CHECK(s.post(format_add_checkpoint_request({10, {}, s.log.signed_checkpoint()})).status == 400);

  Response cosigned = s.post(s.log.request(0));
  REQUIRE(cosigned.status == 200);
  CHECK(cosigned.content_type == "text/plain; charset=utf-8");
  auto lines = parse_cosignature_lines(body_of(cosigned));
  REQUIRE_OK(lines);
  REQUIRE(lines->size() == 1);
  CHECK(verify_cosignature(s.log.checkpoint(), (*lines)[0], s.witness->cosigner()).has_value());

  Response conflict = s.post(s.log.request(0));
  CHECK(conflict.status == 409);
  CHECK(conflict.content_type == "text/x.tlog.size");
  CHECK(body_of(conflict) == "9\n");
  s.log.grow(3);
  CHECK(s.post(format_add_checkpoint_request({9, {}, s.log.signed_checkpoint()})).status == 422);
  CHECK(s.post(s.log.request(9)).status == 200);
}

TEST_CASE("the monitoring endpoint serves the latest cosigned checkpoint by origin hash",
          "[server][witness]") {
  Served s;
  s.log.grow(4);
  const std::string path = origin_path(s.log.key().name());
  CHECK(s.call("GET", path).status == 404);
  Response cosigned = s.post(s.log.request(0));
  REQUIRE(cosigned.status == 200);
  Response latest = s.call("GET", path);
  REQUIRE(latest.status == 200);
  CHECK(body_of(latest) == s.log.signed_checkpoint() + body_of(cosigned));
  CHECK(s.call("HEAD", path).status == 200);
  std::string upper = path;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  upper.replace(upper.size() - 11, 11, "/checkpoint");
  CHECK(s.call("GET", upper).status == 404);
  CHECK(s.call("GET", path.substr(0, path.size() - 1)).status == 404);
  CHECK(s.call("GET", "/" + std::string(64, 'a') + "/checkpoint").status == 404);
  CHECK(s.call("GET", "/checkpoint").status == 404);
}

TEST_CASE("the witness's routes refuse other methods and bound the body", "[server][witness]") {
  Served s;
  Response get = s.call("GET", "/add-checkpoint");
  CHECK(get.status == 405);
  CHECK(get.header("Allow").value_or("") == "POST");
  CHECK(s.call("DELETE", "/add-checkpoint").status == 405);
  CHECK(s.call("POST", "/add-event").status == 405);  // a GET-only path
  auto match = s.router.match("POST", "/add-checkpoint");
  REQUIRE(match.route != nullptr);
  CHECK(match.route->body_limit == kMaxAddCheckpointBody);
  Response health = s.call("GET", "/healthz");
  CHECK(health.status == 200);
  CHECK_THAT(body_of(health), Catch::Contains(s.witness->cosigner().to_string()));
}

TEST_CASE("a prefix mounts the witness's routes under it", "[server][witness]") {
  Served s("/witness");
  s.log.grow(2);
  CHECK(s.call("POST", "/witness/add-checkpoint", s.log.request(0)).status == 200);
  CHECK(s.call("GET", "/witness" + origin_path(s.log.key().name())).status == 200);
  CHECK(s.call("POST", "/add-checkpoint", s.log.request(0)).status == 404);
}

TEST_CASE("every witness verdict has its status, and a busy witness asks to retry",
          "[server][witness]") {
  using V = WitnessVerdict;
  CHECK(server::witness_status(V::kCosigned) == 200);
  CHECK(server::witness_status(V::kMalformed) == 400);
  CHECK(server::witness_status(V::kForbidden) == 403);
  CHECK(server::witness_status(V::kUnknownLog) == 404);
  CHECK(server::witness_status(V::kConflict) == 409);
  CHECK(server::witness_status(V::kInconsistent) == 422);
  CHECK(server::witness_status(V::kBusy) == 503);
  CHECK(server::witness_status(V::kFailed) == 500);
  WitnessAnswer busy;
  busy.verdict = V::kBusy;
  busy.message = "queue full";
  Response r = server::witness_response(busy, 2);
  CHECK(r.status == 503);
  CHECK(r.header("Retry-After").value_or("") == "2");
}

}  // namespace
}  // namespace evl
