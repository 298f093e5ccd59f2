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
// Thread safety: a Router is built before the server starts and only read afterwards.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/server/http.h"

namespace evl::server {

struct Context;

using Respond = std::function<void(Response)>;
using Handler = Response (*)(const Request&, Context&);
using AsyncHandler = void (*)(const Request&, Context&, Respond);

struct Route {
  std::string method;   // "GET" (and HEAD) or "POST"
  std::string pattern;  // "/checkpoint", or "/tile/" with `prefix`
  bool prefix = false;  // match paths that start with the pattern; the rest goes in Request::rest
  std::string name;     // for metrics: "checkpoint", "tile", "add-event", ...
  Handler handler = nullptr;
  AsyncHandler async = nullptr;
  size_t body_limit = 0;  // bytes of body this route reads
  bool writes = false;    // refused (405) on a read-only server
};

// What the router decided for a request: the route, or the response that ends it.
struct RouteMatch {
  const Route* route = nullptr;  // null: `refusal` is the answer
  Response refusal;
  size_t index = 0;              // the route's position, for per-route metrics
};

class Router {
 public:
  explicit Router(std::string prefix = "", bool read_only = false);

  void get(std::string pattern, std::string name, Handler handler, bool prefix = false);
  void post(std::string pattern, std::string name, AsyncHandler handler, size_t body_limit);

  // Decides from the request line alone (method and target), before the body is read.
  RouteMatch match(std::string_view method, std::string_view target) const;

  // Fills request.path and request.rest for the matched route (match.route must be set).
  void prepare(const RouteMatch& match, Request& request) const;

  // prepare(), then runs the handler; `respond` gets the response (at once for plain handlers,
  // and for a refusal).
  void dispatch(const RouteMatch& match, Request& request, Context& context,
                const Respond& respond) const;

  // match() then dispatch(): for tests, which have the whole request at hand.
  void handle(Request& request, Context& context, const Respond& respond) const;

  const std::vector<Route>& routes() const { return routes_; }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  bool read_only_;
  std::vector<Route> routes_;
};

// The path of a target, without its query; empty when the target is not an origin-form path.
std::string_view target_path(std::string_view target);

}  // namespace evl::server
