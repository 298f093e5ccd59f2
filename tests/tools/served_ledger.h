// tests/tools/served_ledger.h — a real ledger with everything the server's handlers need around
// it, called as plain functions or served over loopback by the real HttpServer. Header only:
// the test binaries that link evl_server include it.
#pragma once

#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "ledger/append_queue.h"
#include "ledger/tile_path.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"
#include "tools/server/handlers.h"
#include "tools/server/server.h"

namespace evl::test {

inline Bytes observation(const Cast& cast, const std::string& source, int n) {
  return signed_entry(cast.importer, observation_body(cast.importer, source, std::to_string(n)));
}

// A ledger with the prologue and `observations` observations in commits of 100.
struct ServedLedger {
  explicit ServedLedger(int observations, bool read_only = false) {
    OpenOptions options;
    options.create = true;
    ledger = open_test_ledger(dir, options);
    append_all(*ledger, cast.prologue_entries());
    for (int i = 0; i < observations; i += 100) {
      std::vector<Bytes> batch;
      for (int k = i; k < std::min(observations, i + 100); ++k) {
        batch.push_back(observation(cast, "gpumode", k));
      }
      append_all(*ledger, std::move(batch));
    }
    if (!read_only) queue = std::make_unique<AppendQueue>(*ledger);
    checkpoints = std::make_unique<server::CheckpointCache>(*ledger);
    router = server::Router("", read_only);
    server::add_log_routes(router);
    std::vector<std::string> names;
    for (const auto& r : router.routes()) names.push_back(r.name);
    metrics = std::make_unique<server::Metrics>(names);
    context = std::make_unique<server::Context>(*ledger, queue.get(), resources, *checkpoints,
                                                *metrics);
  }
  ~ServedLedger() {
    if (http) http->shutdown(std::chrono::milliseconds(2000));
  }

  server::Response call(std::string method, std::string target, std::string body = {},
                        std::vector<server::Header> headers = {}) {
    server::Request request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = std::move(body);
    request.headers = std::move(headers);
    std::promise<server::Response> answer;
    router.handle(request, *context,
                  [&](server::Response r) { answer.set_value(std::move(r)); });
    return answer.get_future().get();
  }

  server::Response post_entries(const std::vector<Bytes>& entries) {
    std::string body;
    for (const auto& e : entries) append_entry_frame(body, e);
    return call("POST", "/add-event", body,
                {{"Content-Type", "application/vnd.evledger.entries"}});
  }

  // Serves the routes on 127.0.0.1 (port 0: any free one, or the one given) and returns the
  // URL, "http://127.0.0.1:PORT/".
  std::string listen(const std::string& port = "0") {
    server::ServerOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.threads = 2;
    auto started = server::HttpServer::start(options, router, *context);
    if (!started) FAIL("the server did not start: " << started.error().message());
    http = std::move(started.value());
    return "http://127.0.0.1:" + std::to_string(http->port()) + "/";
  }

  TempDir dir;
  Cast cast;
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<AppendQueue> queue;
  server::ResourceCache resources{size_t{64} << 20};
  std::unique_ptr<server::CheckpointCache> checkpoints;
  server::Router router;
  std::unique_ptr<server::Metrics> metrics;
  std::unique_ptr<server::Context> context;
  std::unique_ptr<server::HttpServer> http;  // after the context: stopped before it goes
};

}  // namespace evl::test
