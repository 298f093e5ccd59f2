// tools/server/server_context.h — what the connection itself keeps in every handler context,
// whatever the server serves (a log, a witness): the metrics it records each request in and
// the count of open connections it checks against its limit. Each server's own context
// (tools/server/context.h for the log, witness_handlers.h for the witness) derives from it.
//
// Thread safety: both members may be used from every I/O thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "tools/server/metrics.h"

namespace evl::server {

struct ServerContext {
  explicit ServerContext(Metrics& m) : metrics(m) {}
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  Metrics& metrics;
  std::atomic<uint64_t> connections{0};  // open connections, kept by the server
};

}  // namespace evl::server
