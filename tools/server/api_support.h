// tools/server/api_support.h — what the API's handlers share (api_*.cpp only): their query
// parameters, listings, cache headers (the rule in api.h) and answers.
//
// Thread safety: pure functions of their arguments; a LogAnswer belongs to one request.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"
#include "projections/query.h"
#include "projections/store.h"
#include "tools/server/context.h"
#include "tools/server/http.h"

namespace evl::server::api {

inline constexpr std::string_view kJsonType = "application/json";
inline constexpr std::string_view kImmutable = "public, max-age=31536000, immutable";

// kUsage naming the first parameter of the request's query that is not one of `allowed`, or
// that is given twice. `route` names the route in the message ("runs").
Status check_parameters(const Request& request, std::string_view route,
                        std::initializer_list<std::string_view> allowed);
// A decimal parameter (0 to 2^64 - 1), or nullopt when absent; kUsage naming it otherwise.
Result<std::optional<uint64_t>> u64_parameter(const Request& request, std::string_view name);
// limit= (1 to kMaxPageLimit, default kDefaultPageLimit) and cursor=, for the projections'
// listings (whose cursors they check themselves).
Result<PageRequest> page_parameters(const Request& request);
// check_parameters(), then page_parameters(): what every listing starts with.
Result<PageRequest> listing_parameters(const Request& request, std::string_view route,
                                       std::initializer_list<std::string_view> allowed);

// kUsage unless `cursor` is a position in the key registry's listing (64 hex digits, or empty
// for the first page).
Status check_key_cursor(const std::string& cursor);

// {"items":[<item>...],"next":<cursor or null>}; each item is a JSON text.
std::string page_json(const std::vector<std::string>& items, const std::optional<std::string>& next);
std::string page_json(const Page& page);

// The problem for a Status (http.h), with Retry-After for a 503.
Response problem_of(const Status& status, const Context& context);

// An answer that follows the log (api.h): its ETag is read at construction, before anything
// else, from the newest checkpoint (none before the genesis).
class LogAnswer {
 public:
  LogAnswer(const Request& request, Context& context);
  // The 304 when the request's If-None-Match names the current ETag.
  std::optional<Response> not_modified() const;
  // 200 with `body`, Cache-Control and the ETag.
  Response ok(std::string body, std::string_view content_type = kJsonType) const;
  // The body that `read` makes of one snapshot of the projections, answered with ok(); 503
  // with Retry-After when they do not cover the log yet, the problem of any other error.
  Response from_projections(
      const std::function<Result<std::string>(const ProjectionStore& state)>& read,
      std::string_view content_type = kJsonType) const;

 private:
  Context& context_;
  std::string etag_;
  bool matched_ = false;
};

// A listing of the projections (api.h): its parameters checked, then the page that `list`
// makes of one snapshot, following the log.
using ProjectionLister =
    std::function<Result<Page>(const ProjectionStore& state, const PageRequest& page)>;
Response projection_listing(const Request& request, Context& context, std::string_view route,
                            std::initializer_list<std::string_view> allowed,
                            const ProjectionLister& list);

// 200 with `body` and the immutable Cache-Control.
Response immutable(std::string body, std::string_view content_type = kJsonType);

}  // namespace evl::server::api
