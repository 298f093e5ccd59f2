// HTTP requests through the router of `evledger serve`, with every route it serves (the log's,
// the API's and the pages') and a real context: a ledger on a temporary directory holding the
// fixtures' prologue and a few observations with their projections, an append queue in front
// of its writer. No socket: the input is the request as the connection would hand it over,
//
//   <method> <target>\n<name>: <value>\n...\n\n<body>
//
// and every request must be answered exactly once, with a status from 100 to 599.
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "ledger/append_queue.h"
#include "ledger/ledger.h"
#include "projections/ledger_hook.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/support/fixtures.h"
#include "tests/support/served_routes.h"

namespace {

using namespace evl;

struct ServedLog {
  ServedLog() {
    char path[] = "/tmp/evl-fuzz-router-XXXXXX";
    if (::mkdtemp(path) == nullptr) std::abort();
    dir = path;
    OpenOptions options;
    options.dir = dir;
    options.create = true;
    options.log_key = test::test_log_key();
    options.hook = make_projection_hook();
    auto opened = Ledger::open(options);
    if (!opened) fuzz::property_failed(opened.error().message().c_str(), __FILE__, __LINE__);
    ledger = std::move(*opened);
    std::vector<Bytes> entries = cast.prologue_entries();
    for (int i = 0; i < 20; ++i) {
      entries.push_back(test::signed_entry(
          cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
    }
    for (const auto& outcome : ledger->append(entries)) {
      if (!outcome.status.is_ok()) std::abort();
    }
    queue = std::make_unique<AppendQueue>(*ledger);
    routes = std::make_unique<test::Served>(*ledger, queue.get());
    routes->context->log_vkey = cast.log.verifier().to_string();
    std::atexit([] { std::filesystem::remove_all(served().dir); });
  }

  static ServedLog& served() {
    // Reachable to the end (the fuzzer exits with it alive), so not a leak.
    static ServedLog* log = new ServedLog;
    return *log;
  }

  std::string dir;
  test::Cast cast;
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<AppendQueue> queue;
  std::unique_ptr<test::Served> routes;
};

// Splits the input into a request; false when it has no request line.
bool parse_request(std::string_view in, server::Request& request) {
  size_t end = in.find('\n');
  std::string_view line = in.substr(0, end);
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  request.method = std::string(line.substr(0, space));
  request.target = std::string(line.substr(space + 1));
  if (end == std::string_view::npos) return true;
  in.remove_prefix(end + 1);
  while (!in.empty()) {
    end = in.find('\n');
    line = in.substr(0, end);
    in.remove_prefix(end == std::string_view::npos ? in.size() : end + 1);
    if (line.empty()) break;
    size_t colon = line.find(": ");
    if (colon == std::string_view::npos) continue;
    request.headers.push_back({std::string(line.substr(0, colon)),
                               std::string(line.substr(colon + 2))});
  }
  request.body = std::string(in);
  return true;
}

}  // namespace

EVL_FUZZ_TARGET(router) {
  ServedLog& served = ServedLog::served();
  server::Request request;
  if (!parse_request(fuzz::as_text(data, size), request)) return;
  auto match = served.routes->router.match(request.method, request.target);
  // The connection reads no more body than the route allows (413 beyond it).
  if (match.route != nullptr && request.body.size() > match.route->body_limit) return;
  auto answer = std::make_shared<std::promise<server::Response>>();
  auto answered = std::make_shared<std::atomic<int>>(0);
  auto respond = [answer, answered](server::Response r) {
    if (answered->fetch_add(1) == 0) answer->set_value(std::move(r));
    else fuzz::property_failed("a request answered twice", __FILE__, __LINE__);
  };
  served.routes->router.dispatch(match, request, *served.routes->context, respond);
  auto future = answer->get_future();
  if (future.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    fuzz::property_failed("a request not answered within 60 s", __FILE__, __LINE__);
  }
  server::Response response = future.get();
  EVL_FUZZ_CHECK(response.status >= 100 && response.status <= 599);
}
