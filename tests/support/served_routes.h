// tests/support/served_routes.h — every route of `evledger serve` (the log's, the API's and the
// pages') over a ledger, with the context its handlers need, called without a socket: for the
// tests of the handlers (served_catalog.h) and the fuzz target `router` (tests/fuzz/). No
// Catch2 here, so that the fuzz build can use it.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "ledger/append_queue.h"
#include "ledger/ledger.h"
#include "tools/server/api.h"
#include "tools/server/handlers.h"
#include "tools/server/pages.h"

namespace evl::test {

// Read-only without `appends`; with it, POST /add-event appends through it.
struct Served {
  explicit Served(Ledger& ledger, AppendQueue* appends = nullptr)
      : checkpoints(ledger), router("", appends == nullptr) {
    server::add_log_routes(router);
    server::add_api_routes(router);
    server::add_page_routes(router);
    std::vector<std::string> names;
    for (const auto& r : router.routes()) names.push_back(r.name);
    metrics = std::make_unique<server::Metrics>(names);
    context = std::make_unique<server::Context>(ledger, appends, resources, checkpoints, *metrics);
  }

  server::Response get(std::string target, std::vector<server::Header> headers = {}) {
    server::Request request;
    request.method = "GET";
    request.target = std::move(target);
    request.headers = std::move(headers);
    std::promise<server::Response> answer;
    router.handle(request, *context, [&](server::Response r) { answer.set_value(std::move(r)); });
    return answer.get_future().get();
  }

  server::ResourceCache resources{size_t{16} << 20};
  server::CheckpointCache checkpoints;
  server::Router router;
  std::unique_ptr<server::Metrics> metrics;
  std::unique_ptr<server::Context> context;
};

}  // namespace evl::test
