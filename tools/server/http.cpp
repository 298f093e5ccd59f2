#include "tools/server/http.h"

#include <nlohmann/json.hpp>

namespace evl::server {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte; a malformed escape stays as
// it is (a lookup then finds nothing it should not).
std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
               hex_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::string_view> find_header(const std::vector<Header>& headers,
                                            std::string_view name) {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::optional<std::string_view> Request::header(std::string_view name) const {
  return find_header(headers, name);
}

namespace {

// Calls visit(name, value) for each name=value pair of the target's query, percent-decoded
// (a pair without '=' has an empty value; empty pairs are skipped).
template <typename Visit>
void for_each_parameter(std::string_view target, const Visit& visit) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      visit(percent_decode(pair.substr(0, eq)),
            eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

}  // namespace

std::vector<std::string> Request::query_all(std::string_view name) const {
  std::vector<std::string> values;
  for_each_parameter(target, [&](const std::string& key, std::string_view value) {
    if (key == name) values.push_back(percent_decode(value));
  });
  return values;
}

std::vector<std::string> Request::query_names() const {
  std::vector<std::string> names;
  for_each_parameter(target, [&](std::string key, std::string_view) {
    names.push_back(std::move(key));
  });
  return names;
}

std::optional<std::string> Request::query(std::string_view name) const {
  auto all = query_all(name);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

Response Response::bytes(int status, std::string content_type, std::string body) {
  return shared(status, std::move(content_type),
                std::make_shared<const std::string>(std::move(body)));
}

Response Response::shared(int status, std::string content_type,
                          std::shared_ptr<const std::string> body) {
  Response r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

Response& Response::with(std::string name, std::string value) & {
  headers.push_back({std::move(name), std::move(value)});
  return *this;
}

Response&& Response::with(std::string name, std::string value) && {
  headers.push_back({std::move(name), std::move(value)});
  return std::move(*this);
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  return find_header(headers, name);
}

int http_status(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kRejected:
    case Code::kUsage: return 400;
    case Code::kDenied: return 403;
    case Code::kNotFound: return 404;
    case Code::kCorrupt:
    case Code::kIo: return 500;
  }
  return 500;
}

std::string_view status_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
  }
  return "Error";
}

std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace);
}

Response problem(int status, std::string_view detail) {
  std::string body = "{\"type\":\"about:blank\",\"title\":" + json_string(status_reason(status)) +
                     ",\"status\":" + std::to_string(status) +
                     ",\"detail\":" + json_string(detail) + "}";
  return Response::bytes(status, "application/problem+json", std::move(body))
      .with("Cache-Control", "no-store");
}

Response problem(const Status& status) { return problem(http_status(status.code()), status.message()); }

}  // namespace evl::server
