// ledger/http_client.h — one kept-alive HTTP/1.1 connection to a server, for clients that
// send many requests to it: publishers posting to /add-event, mirrors pulling tiles, a log
// submitting checkpoints to witnesses.
//
// Every step (resolve, connect, send, receive) has a deadline, so a silent server cannot hang
// the caller. The connection is opened on first use and opened again when the server closed
// it; a request that fails on a reused connection before any byte of its answer arrived is
// sent once more on a fresh one (the server may have closed an idle connection just then).
// Any HTTP status is an answer, not an error: the caller decides what a 404 or a 503 means.
// No TLS (http:// only, as ledger/http_fetch.h), no redirects, no proxies, no cookies.
//
// Errors: kUsage for a URL this client cannot use (see parse_http_url); kIo for DNS, refused
// or reset connections, timeouts, a malformed response, a body over the limit.
//
// Thread safety: an HttpClient is used by one thread at a time; use one per thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "events/status.h"
#include "ledger/http_fetch.h"

namespace evl {

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first header of that name (compared without case).
  std::optional<std::string_view> header(std::string_view name) const;
};

class HttpClient {
 public:
  // `base_url` is "http://host[:port][/path]"; targets of requests are relative to its path
  // ("checkpoint", "add-event?wait=witnessed").
  static Result<std::unique_ptr<HttpClient>> open(const std::string& base_url,
                                                  const HttpOptions& options = {});
  virtual ~HttpClient() = default;

  virtual Result<HttpResponse> get(std::string_view target,
                                   const std::vector<std::pair<std::string, std::string>>&
                                       headers = {}) = 0;
  virtual Result<HttpResponse> post(std::string_view target, std::string_view content_type,
                                    std::string_view body) = 0;

  // The URL of `target` under the base ("http://host:8080/log/checkpoint"), for messages.
  virtual std::string url(std::string_view target) const = 0;
};

}  // namespace evl
