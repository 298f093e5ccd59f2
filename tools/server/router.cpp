#include "tools/server/router.h"

namespace evl::server {
namespace {

bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '/';
}

// Empty when the path is clean, else why it is refused.
std::string path_problem(std::string_view path) {
  if (path.empty() || path[0] != '/') return "a request target must be a path starting with '/'";
  for (char c : path) {
    if (!path_char(c)) {
      return "the path holds a character this server has in none of its paths (only letters, "
             "digits and - . _ ~ : /, nothing percent-encoded)";
    }
  }
  // Segments between slashes; a trailing slash (an empty last segment) is allowed for "/".
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment == "." || segment == "..") return "the path has a '.' or '..' segment";
    if (segment.empty() && end != path.size()) return "the path has an empty segment ('//')";
    start = end + 1;
  }
  return {};
}

}  // namespace

std::string_view target_path(std::string_view target) {
  return target.substr(0, target.find('?'));
}

RouteTable::RouteTable(std::string prefix, bool read_only)
    : prefix_(std::move(prefix)), read_only_(read_only) {
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
}

RouteMatch RouteTable::match(std::string_view method, std::string_view target) const {
  RouteMatch m;
  std::string_view path = target_path(target);
  if (std::string why = path_problem(path); !why.empty()) {
    m.refusal = problem(400, std::string(path.substr(0, 200)) + ": " + why);
    return m;
  }
  if (!prefix_.empty()) {
    if (path.substr(0, prefix_.size()) != prefix_ ||
        (path.size() > prefix_.size() && path[prefix_.size()] != '/')) {
      m.refusal = problem(404, "this server serves its log under " + prefix_ + "/");
      return m;
    }
    path.remove_prefix(prefix_.size());
    if (path.empty()) path = "/";
  }
  std::string allowed;
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Route& r = routes_[i];
    bool hit = r.prefix ? path.size() > r.pattern.size() && path.substr(0, r.pattern.size()) == r.pattern
                        : path == r.pattern;
    if (!hit) continue;
    bool method_ok = method == r.method || (r.method == "GET" && method == "HEAD");
    if (method_ok && r.writes && read_only_) {
      m.refusal = problem(405, "this server is read-only (evledger serve --read-only): it "
                               "serves the log but appends nothing; send " + r.method + " " +
                               r.pattern + " to the log's own server")
                      .with("Allow", "");
      return m;
    }
    if (method_ok) {
      m.route = &r;
      m.index = i;
      return m;
    }
    allowed += (allowed.empty() ? "" : ", ") + (r.method == "GET" ? std::string("GET, HEAD")
                                                                  : r.method);
  }
  if (!allowed.empty()) {
    m.refusal = problem(405, std::string(method.substr(0, 20)) + " is not a method of " +
                                 std::string(path) + " (allowed: " + allowed + ")")
                    .with("Allow", allowed);
    return m;
  }
  m.refusal = problem(404, std::string(path.substr(0, 200)) + " is not a resource of this "
                           "server; see " + prefix_ + "/api/v1/openapi.json");
  return m;
}

void RouteTable::prepare(const RouteMatch& match, Request& request) const {
  std::string_view path = target_path(request.target);
  if (!prefix_.empty()) {
    path.remove_prefix(prefix_.size());
    if (path.empty()) path = "/";
  }
  request.path = std::string(path);
  request.rest = match.route->prefix ? std::string(path.substr(match.route->pattern.size()))
                                     : std::string();
}

}  // namespace evl::server
