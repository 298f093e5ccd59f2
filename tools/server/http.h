// tools/server/http.h — the server's requests and responses as plain values: what the router
// hands a handler and what a handler returns. No Beast here, so that handlers are plain
// functions tested without a socket (the connection in server.cpp converts to and from Beast).
//
// Errors go out as RFC 9457 problem details (application/problem+json) carrying the message
// the CLI prints for the same Status; http_status() is the one mapping of codes to statuses.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"

namespace evl::server {

struct Header {
  std::string name;
  std::string value;
};

struct Request {
  std::string method;  // as received: "GET", "HEAD", "POST", ...
  std::string target;  // as received: the path (under the server's prefix) and the query
  std::vector<Header> headers;
  std::string body;
  // Set by the router: the path with the prefix removed ("/tile/0/000"), and what follows the
  // matched route's pattern for routes that match a prefix ("0/000" under "/tile/").
  std::string path;
  std::string rest;

  // The first header of that name (compared without case), or nullopt.
  std::optional<std::string_view> header(std::string_view name) const;
  // The query's values of `name`, percent-decoded, in order ("run=a&run=b" gives both).
  std::vector<std::string> query_all(std::string_view name) const;
  // The first of them, or nullopt.
  std::optional<std::string> query(std::string_view name) const;
  // The names of the query's parameters, percent-decoded, in order (repeats included).
  std::vector<std::string> query_names() const;
};

struct Response {
  int status = 200;
  std::string content_type;
  std::vector<Header> headers;              // besides Content-Type and Content-Length
  std::shared_ptr<const std::string> body;  // null: no body

  static Response bytes(int status, std::string content_type, std::string body);
  static Response shared(int status, std::string content_type,
                         std::shared_ptr<const std::string> body);
  // Adds a header and returns *this, for chaining.
  Response& with(std::string name, std::string value) &;
  Response&& with(std::string name, std::string value) &&;
  std::optional<std::string_view> header(std::string_view name) const;
  size_t body_size() const { return body ? body->size() : 0; }
};

// kRejected and kUsage 400, kDenied 403, kNotFound 404, kCorrupt and kIo 500.
int http_status(Code code);
// The reason phrase of a status ("Not Found"), for problem titles.
std::string_view status_reason(int status);

// An RFC 9457 problem: {"type":"about:blank","title":<reason>,"status":N,"detail":<detail>}.
Response problem(int status, std::string_view detail);
// The problem for a Status, with its http_status() and its message.
Response problem(const Status& status);

// JSON text of a string (quoted and escaped; invalid UTF-8 replaced), for handlers that write
// small JSON documents by hand.
std::string json_string(std::string_view text);

bool iequals(std::string_view a, std::string_view b);

}  // namespace evl::server
