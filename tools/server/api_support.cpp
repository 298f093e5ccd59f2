#include "tools/server/api_support.h"

#include <algorithm>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/sha256.h"
#include "projections/digest.h"
#include "projections/ledger_hook.h"
#include "tools/server/api.h"

namespace evl::server::api {
namespace {

std::string joined(std::initializer_list<std::string_view> names) {
  std::string out;
  size_t i = 0;
  for (std::string_view n : names) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string(n);
    ++i;
  }
  return out;
}

// What changes the API's answers for the same log: the document that describes them and the
// projection format that makes them. Part of every ETag, so that a new evledger over the same
// log is not answered 304 with the old one's answers.
const std::string& api_revision() {
  static const std::string revision = [] {
    std::string what(kOpenApiDocument);
    what += kProjectionFormat;
    return hex_encode(sha256(as_bytes(what))).substr(0, 8);
  }();
  return revision;
}

}  // namespace

Status check_parameters(const Request& request, std::string_view route,
                        std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> seen;
  for (const std::string& name : request.query_names()) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return usage_error("'" + name.substr(0, 100) + "' is not a parameter of " +
                         std::string(route) +
                         (allowed.size() == 0 ? ", which takes none" : ", which takes " + joined(allowed)));
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return usage_error(name + " is given twice; give it once");
    }
    seen.push_back(name);
  }
  return Status::ok();
}

Result<std::optional<uint64_t>> u64_parameter(const Request& request, std::string_view name) {
  auto text = request.query(name);
  if (!text) return std::optional<uint64_t>();
  auto value = parse_u64(*text);
  if (!value) {
    return usage_error(std::string(name) + "=" + text->substr(0, 100) +
                       " is not a number: give decimal digits (0 to 2^64 - 1)");
  }
  return std::optional<uint64_t>(*value);
}

Result<PageRequest> page_parameters(const Request& request) {
  PageRequest page;
  page.limit = kDefaultPageLimit;
  if (auto limit = request.query("limit")) {
    auto n = parse_u64(*limit);
    if (!n || *n < 1 || *n > kMaxPageLimit) {
      return usage_error("limit=" + limit->substr(0, 100) + ": a page holds 1 to " +
                         std::to_string(kMaxPageLimit) + " items (default " +
                         std::to_string(kDefaultPageLimit) + ")");
    }
    page.limit = *n;
  }
  page.cursor = request.query("cursor").value_or("");
  page.what = "cursor=";
  return page;
}

Result<PageRequest> listing_parameters(const Request& request, std::string_view route,
                                       std::initializer_list<std::string_view> allowed) {
  EVL_RETURN_IF_ERROR(check_parameters(request, route, allowed));
  return page_parameters(request);
}

Status check_key_cursor(const std::string& cursor) {
  if (cursor.empty() || (cursor.size() == 64 &&
                         cursor.find_first_not_of("0123456789abcdef") == std::string::npos)) {
    return Status::ok();
  }
  return usage_error("cursor=" + cursor.substr(0, 100) +
                     " is not a position in this listing (64 hex digits): pass the 'next' of "
                     "the page before, or nothing for the first page");
}

std::string page_json(const std::vector<std::string>& items, const std::optional<std::string>& next) {
  size_t size = 32;
  for (const auto& item : items) size += item.size() + 1;
  std::string out;
  out.reserve(size);
  out += "{\"items\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += items[i];
  }
  out += "],\"next\":";
  out += next ? json_string(*next) : std::string("null");
  out += '}';
  return out;
}

std::string page_json(const Page& page) {
  std::vector<std::string> items;
  items.reserve(page.items.size());
  for (const Json& item : page.items) items.push_back(jcs_serialize(item));
  return page_json(items, page.next);
}

Response problem_of(const Status& status, const Context& context) {
  Response r = problem(status);
  if (r.status == 503) r.with("Retry-After", std::to_string(context.retry_after_seconds));
  return r;
}

LogAnswer::LogAnswer(const Request& request, Context& context) : context_(context) {
  auto cp = context.checkpoints.current();
  if (!cp) return;  // before the genesis: no ETag
  const std::string& etag = (*cp)->etag;  // "\"<hex>\""
  etag_ = etag.substr(0, etag.size() - 1) + "-" + api_revision() + "\"";
  matched_ = request.header("If-None-Match").value_or("") == etag_;
}

std::optional<Response> LogAnswer::not_modified() const {
  if (!matched_) return std::nullopt;
  Response r;
  r.status = 304;
  return std::move(r).with("ETag", etag_).with("Cache-Control", "public, max-age=2");
}

Response LogAnswer::ok(std::string body, std::string_view content_type) const {
  Response r = Response::bytes(200, std::string(content_type), std::move(body));
  if (!etag_.empty()) r.with("ETag", etag_);
  return std::move(r).with("Cache-Control", "public, max-age=2");
}

Response LogAnswer::from_projections(
    const std::function<Result<std::string>(const ProjectionStore&)>& read,
    std::string_view content_type) const {
  std::string body;
  bool lagging = false;
  Status s = read_projections(
      context_.ledger,
      [&](const ProjectionStore& state, uint64_t) -> Status {
        auto made = read(state);
        if (!made) return made.error();
        body = std::move(*made);
        return Status::ok();
      },
      &lagging);
  if (lagging) {
    return problem(503, s.message() + ": the ledger's writer has not caught them up yet (any "
                                      "append or 'evledger rebuild' does); retry in a moment")
        .with("Retry-After", std::to_string(context_.retry_after_seconds));
  }
  if (!s) return problem_of(s, context_);
  return ok(std::move(body), content_type);
}

Response projection_listing(const Request& request, Context& context, std::string_view route,
                            std::initializer_list<std::string_view> allowed,
                            const ProjectionLister& list) {
  auto page = listing_parameters(request, route, allowed);
  if (!page) return problem(page.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  return answer.from_projections([&](const ProjectionStore& state) -> Result<std::string> {
    auto listed = list(state, *page);
    if (!listed) return listed.error();
    return page_json(*listed);
  });
}

Response immutable(std::string body, std::string_view content_type) {
  return Response::bytes(200, std::string(content_type), std::move(body))
      .with("Cache-Control", std::string(kImmutable));
}

}  // namespace evl::server::api
