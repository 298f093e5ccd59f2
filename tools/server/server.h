// tools/server/server.h — the HTTP/1.1 server of `evledger serve` (Boost.Beast on Asio, in
// server.cpp only): an acceptor, a strand per connection, and a connection that reads each
// request within its limits, hands it to the Router, and writes back what the handler returns.
//
// Limits on untrusted clients (each configurable; ServerLimits' defaults are the CLI's):
//   - request line and headers at most header_limit bytes (431), within header_timeout of the
//     first read on a new connection, or idle_timeout on a kept-alive one;
//   - a body at most the route's limit (413, checked from Content-Length before reading, and
//     while reading a chunked body), within body_timeout;
//   - each response written within write_timeout;
//   - at most max_connections open connections: one more is answered 503 and closed.
// Malformed HTTP is 400 and closes that connection; everyone else is served on. A client that
// sends nothing in time is disconnected, so no client holds a thread: the I/O threads never
// block (handlers read LMDB briefly; appends are queued, never waited for).
//
// Thread safety: start() and the other members are called from one thread (the command's);
// the server runs on its own I/O threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "events/status.h"
#include "tools/server/router.h"
#include "tools/server/server_context.h"

namespace evl::server {

struct ServerLimits {
  size_t header_limit = 16 * 1024;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds body_timeout{60000};
  std::chrono::milliseconds write_timeout{60000};
  size_t max_connections = 4096;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::string port = "8080";  // "0": any free port (port() tells which)
  unsigned threads = 0;       // I/O threads; 0: one per hardware thread
  ServerLimits limits;
};

class HttpServer {
 public:
  // Binds and starts serving. kIo when the address cannot be bound (in use, not local, no
  // permission), kUsage for an address that does not parse. `router` and `context` must
  // outlive the server; the router's handlers get `context`.
  template <class Ctx>
  static Result<std::unique_ptr<HttpServer>> start(const ServerOptions& options,
                                                   const BasicRouter<Ctx>& router, Ctx& context) {
    return start_table(options, router, context);
  }
  virtual ~HttpServer() = default;

  virtual std::string host() const = 0;
  virtual uint16_t port() const = 0;

  // Blocks until SIGINT or SIGTERM arrives (or stop_waiting() is called) and returns the
  // signal's number (0 for stop_waiting()). Call it once.
  virtual int wait_for_signal() = 0;
  virtual void stop_waiting() = 0;

  // Stops accepting, closes idle connections, lets every request in flight be answered (for
  // at most `grace`), then closes the rest and stops the I/O threads. Requests that arrive
  // meanwhile on open connections are still answered; their responses say Connection: close.
  virtual void shutdown(std::chrono::milliseconds grace) = 0;

 private:
  static Result<std::unique_ptr<HttpServer>> start_table(const ServerOptions& options,
                                                         const RouteTable& router,
                                                         ServerContext& context);
};

}  // namespace evl::server
