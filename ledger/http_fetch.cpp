#include "ledger/http_fetch.h"

// Asio needs <utility> before its own headers under C++20 (Boost 1.74).
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "events/bytes.h"

namespace evl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One GET as a chain of asynchronous steps on a private io_context: Beast's stream deadlines
// apply to asynchronous operations only, so this is how every step gets a timeout.
class Fetch {
 public:
  Fetch(std::string url, HttpUrl parts, const HttpOptions& options)
      : url_(std::move(url)), parts_(std::move(parts)), options_(options) {
    request_.method(http::verb::get);
    request_.target(parts_.target);
    request_.version(11);
    request_.set(http::field::host, host_header());
    request_.set(http::field::user_agent, "evledger");
    request_.set(http::field::connection, "close");
    parser_.body_limit(options_.max_body);
  }

  Result<std::string> run() {
    resolver_.async_resolve(parts_.host, parts_.port,
                            [this](beast::error_code ec, tcp::resolver::results_type r) {
                              on_resolve(ec, std::move(r));
                            });
    // The resolver has no deadline of its own: bound it, and everything, from outside. Each
    // later step has its own deadline on the stream, so this only ends a stuck lookup.
    ioc_.run_for(options_.timeout * 4);
    if (!done_) {
      ioc_.stop();
      return io_error("GET " + url_ + ": no answer within " +
                      std::to_string(options_.timeout.count() * 4) + " ms (while " + step_ + ")");
    }
    if (error_) return *error_;
    return std::move(body_);
  }

 private:
  std::string host_header() const {
    return parts_.port == "80" ? parts_.host : parts_.host + ":" + parts_.port;
  }

  void fail(const std::string& what, beast::error_code ec) {
    std::string why = ec == beast::error::timeout
                          ? "timed out after " + std::to_string(options_.timeout.count()) + " ms"
                          : ec.message();
    error_ = io_error("GET " + url_ + ": " + what + ": " + why);
    done_ = true;
  }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (ec) return fail("cannot resolve " + parts_.host, ec);
    step_ = "connecting";
    stream_.expires_after(options_.timeout);
    stream_.async_connect(results, [this](beast::error_code e, const tcp::endpoint&) {
      if (e) return fail("cannot connect to " + parts_.host + ":" + parts_.port, e);
      step_ = "sending the request";
      stream_.expires_after(options_.timeout);
      http::async_write(stream_, request_, [this](beast::error_code e2, size_t) { on_sent(e2); });
    });
  }

  void on_sent(beast::error_code ec) {
    if (ec) return fail("cannot send the request", ec);
    step_ = "reading the response";
    stream_.expires_after(options_.timeout);
    http::async_read(stream_, buffer_, parser_,
                     [this](beast::error_code e, size_t) { on_response(e); });
  }

  void on_response(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return fail("the response body exceeds the limit of " +
                      std::to_string(options_.max_body) + " bytes",
                  ec);
    }
    if (ec) return fail("cannot read the response", ec);
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    auto& response = parser_.get();
    unsigned status = response.result_int();
    done_ = true;
    if (status == 200) {
      body_ = std::move(response.body());
    } else if (status == 404 || status == 410) {
      error_ = not_found("GET " + url_ + ": HTTP " + std::to_string(status) + " (not found)");
    } else if (status >= 300 && status < 400) {
      std::string location(response[http::field::location]);
      error_ = io_error("GET " + url_ + ": HTTP " + std::to_string(status) + " redirect to '" +
                        location + "'; redirects are not followed: give the final URL");
    } else {
      error_ = io_error("GET " + url_ + ": HTTP " + std::to_string(status) + " " +
                        std::string(response.reason()));
    }
  }

  std::string url_;
  HttpUrl parts_;
  HttpOptions options_;
  asio::io_context ioc_;
  tcp::resolver resolver_{ioc_};
  beast::tcp_stream stream_{ioc_};
  beast::flat_buffer buffer_;
  http::request<http::empty_body> request_;
  http::response_parser<http::string_body> parser_;
  std::string step_ = "resolving the host";
  bool done_ = false;
  std::optional<Status> error_;
  std::string body_;
};

}  // namespace

Result<HttpUrl> parse_http_url(const std::string& url) {
  std::string_view rest(url);
  if (rest.starts_with("https://")) {
    return usage_error("URL " + url + ": https:// is not supported by evledger's tile client; "
                       "serve the tiles over http:// (e.g. on a local port behind your TLS "
                       "proxy), or download them and verify the directory with --tiles");
  }
  if (!rest.starts_with("http://")) {
    return usage_error("URL '" + url + "' must start with http://");
  }
  rest.remove_prefix(7);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpUrl parts;
  parts.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos || authority.starts_with('[')) {
    return usage_error("URL " + url + ": user info and IPv6 literals are not supported; use a "
                       "host name or an IPv4 address");
  }
  size_t colon = authority.find(':');
  parts.host = std::string(authority.substr(0, colon));
  parts.port = colon == std::string_view::npos ? "80" : std::string(authority.substr(colon + 1));
  if (parts.host.empty()) return usage_error("URL " + url + " has no host");
  auto port = parse_u64(parts.port);
  if (!port || *port == 0 || *port > 65535) {
    return usage_error("URL " + url + ": port '" + parts.port + "' must be 1 to 65535");
  }
  return parts;
}

Result<std::string> http_get(const std::string& url, const HttpOptions& options) {
  auto parts = parse_http_url(url);
  if (!parts) return parts.error();
  try {
    Fetch fetch(url, std::move(*parts), options);
    return fetch.run();
  } catch (const std::exception& e) {
    // Asio reports resource exhaustion (no file descriptors, no memory) by throwing.
    return io_error("GET " + url + ": " + e.what());
  }
}

}  // namespace evl
