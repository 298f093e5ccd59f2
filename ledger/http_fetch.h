// ledger/http_fetch.h — a minimal HTTP/1.1 GET client for reading tiles and checkpoints that a
// web server, a mirror or a CDN serves (c2sp.org/tlog-tiles over plain http://).
//
// One GET per call, one connection per GET ("Connection: close"), no redirects, no cookies, no
// proxies, no TLS: https:// URLs are refused with a message that says so (serve the tiles over
// http://, or fetch them with another tool and verify the directory). Every step (resolve,
// connect, send, receive) has a deadline, so a silent server cannot hang an auditor.
//
// Errors: kNotFound for HTTP 404 (and 410); kUsage for a URL this client cannot fetch (not
// http://, no host, a bad port); kIo for everything else: DNS, refused or reset connections,
// timeouts, a malformed response, a body over the limit, any status other than 200 (3xx
// redirects included; the message names the Location).
//
// Thread safety: http_get is reentrant; each call has its own I/O context and connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "events/status.h"

namespace evl {

struct HttpOptions {
  // Deadline of each step: resolving the host, connecting, sending, receiving the response.
  std::chrono::milliseconds timeout{30000};
  // Security limit: a response body longer than this is kIo. The largest tlog-tiles resource
  // is a full entry bundle, 256 entries of at most 65,535 bytes plus their prefixes (16 MiB).
  size_t max_body = size_t{17} << 20;
};

// The parts of an http:// URL this client uses.
struct HttpUrl {
  std::string host;
  std::string port;    // "80" when the URL names none
  std::string target;  // the path and query, "/" when empty
};

// Parses "http://host[:port][/path]". kUsage for https:// (not supported, see above) and for
// anything that is not an http:// URL with a host.
Result<HttpUrl> parse_http_url(const std::string& url);

// GETs `url` and returns the body of a 200 response.
Result<std::string> http_get(const std::string& url, const HttpOptions& options = {});

}  // namespace evl
