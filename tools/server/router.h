// tools/server/router.h — maps (method, path) to a plain handler function.
//
// A handler is `Response handle(const Request&, Context&)`: it parses the request, calls the
// libraries and serializes their answer; it holds no domain rule. The one kind of handler that
// cannot answer at once (POST /add-event answers after the durable commit) is an AsyncHandler,
// which hands its Response to `respond` later, from any thread, exactly once.
//
// The router owns what every route shares:
//   - the prefix (`--prefix /log`): paths outside it are 404;
//   - path hygiene: a path is only the characters of the resources this server has
//     (A-Z a-z 0-9 - . _ ~ : / and nothing percent-encoded), with no empty, "." or ".."
//     segment; anything else is 400 before any handler sees it, so no handler can be led outside
//     what it serves;
//   - methods: GET routes answer HEAD too (the connection drops the body); a known path asked
//     with another method is 405 with Allow; a read-only server's POST routes are 405;
//   - each route's body limit, which the connection applies while it reads (413 beyond it).
//
// One router type per kind of server (BasicRouter<Ctx>), each handing its handlers its own
// context; the connection sees them all as a RouteTable.
//
// Thread safety: a Router is built before the server starts and only read afterwards.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/server/http.h"

namespace evl::server {

struct ServerContext;
struct Context;

using Respond = std::function<void(Response)>;

struct Route {
  std::string method;   // "GET" (and HEAD) or "POST"
  std::string pattern;  // "/checkpoint", or "/tile/" with `prefix`
  bool prefix = false;  // match paths that start with the pattern; the rest goes in Request::rest
  std::string name;     // for metrics: "checkpoint", "tile", "add-event", ...
  size_t body_limit = 0;  // bytes of body this route reads
  bool writes = false;    // refused (405) on a read-only server
};

// What the router decided for a request: the route, or the response that ends it.
struct RouteMatch {
  const Route* route = nullptr;  // null: `refusal` is the answer
  Response refusal;
  size_t index = 0;              // the route's position, for per-route metrics
};

// The routes and everything about them that does not depend on the handlers' context: what
// the connection (server.cpp) needs, whichever server it serves.
class RouteTable {
 public:
  RouteTable(std::string prefix, bool read_only);
  virtual ~RouteTable() = default;

  // Decides from the request line alone (method and target), before the body is read.
  RouteMatch match(std::string_view method, std::string_view target) const;

  // Fills request.path and request.rest for the matched route (match.route must be set).
  void prepare(const RouteMatch& match, Request& request) const;

  // Runs the matched route's handler (match.route must be set; prepare() done) with
  // `context`, which must be the context of this table's BasicRouter (HttpServer::start takes
  // the two as a typed pair). Returns a plain handler's response; an async handler's goes to
  // `respond` later, and nullopt is returned.
  virtual std::optional<Response> run(const RouteMatch& match, const Request& request,
                                      ServerContext& context, Respond respond) const = 0;

  const std::vector<Route>& routes() const { return routes_; }
  const std::string& prefix() const { return prefix_; }

 protected:
  void add(Route route) { routes_.push_back(std::move(route)); }

 private:
  std::string prefix_;
  bool read_only_;
  std::vector<Route> routes_;
};

// The routes of one kind of server, whose handlers take its context `Ctx` (derived from
// ServerContext): `Router` for the log (tools/server/context.h), `WitnessRouter` for the
// witness (tools/server/witness_handlers.h).
template <class Ctx>
class BasicRouter final : public RouteTable {
 public:
  using Handler = Response (*)(const Request&, Ctx&);
  using AsyncHandler = void (*)(const Request&, Ctx&, Respond);

  explicit BasicRouter(std::string prefix = "", bool read_only = false)
      : RouteTable(std::move(prefix), read_only) {}

  void get(std::string pattern, std::string name, Handler handler, bool prefix = false) {
    add({"GET", std::move(pattern), prefix, std::move(name), 0, false});
    handlers_.push_back({handler, nullptr});
  }
  void post(std::string pattern, std::string name, AsyncHandler handler, size_t body_limit) {
    add({"POST", std::move(pattern), false, std::move(name), body_limit, true});
    handlers_.push_back({nullptr, handler});
  }

  std::optional<Response> run(const RouteMatch& match, const Request& request,
                              ServerContext& context, Respond respond) const override {
    const Handlers& h = handlers_[match.index];
    Ctx& ctx = static_cast<Ctx&>(context);
    if (h.async == nullptr) return h.plain(request, ctx);
    h.async(request, ctx, std::move(respond));
    return std::nullopt;
  }

  // prepare(), then runs the handler; `respond` gets the response (at once for plain handlers,
  // and for a refusal).
  void dispatch(const RouteMatch& match, Request& request, Ctx& context,
                const Respond& respond) const {
    if (match.route == nullptr) return respond(match.refusal);
    prepare(match, request);
    if (auto response = run(match, request, context, respond)) respond(std::move(*response));
  }

  // match() then dispatch(): for tests, which have the whole request at hand.
  void handle(Request& request, Ctx& context, const Respond& respond) const {
    dispatch(match(request.method, request.target), request, context, respond);
  }

 private:
  struct Handlers {
    Handler plain;
    AsyncHandler async;
  };
  std::vector<Handlers> handlers_;  // one per route, in routes()' order
};

using Router = BasicRouter<Context>;

// The path of a target, without its query; empty when the target is not an origin-form path.
std::string_view target_path(std::string_view target);

}  // namespace evl::server
