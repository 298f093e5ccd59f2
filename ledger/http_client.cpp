#include "ledger/http_client.h"

// Asio needs <utility> before its own headers under C++20 (Boost 1.74).
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace evl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Runs the asynchronous steps queued on a private io_context, each bounded by the stream's
// deadline; the whole by `limit` (the resolver has no deadline of its own).
class Client final : public HttpClient {
 public:
  Client(std::string base, HttpUrl parts, const HttpOptions& options)
      : base_(std::move(base)), parts_(std::move(parts)), options_(options) {
    while (!parts_.target.empty() && parts_.target.back() == '/') parts_.target.pop_back();
    // Beast reads at most the buffer's free room per call (512 bytes when it has none), and a
    // body's bytes leave the buffer as they are parsed: room for 64 KiB per read, or a 1 MiB
    // answer (an append's receipts) takes 2,000 reads.
    buffer_.reserve(kReadBytes);
  }

  Result<HttpResponse> get(std::string_view target,
                           const std::vector<std::pair<std::string, std::string>>& headers) override {
    http::request<http::string_body> req{http::verb::get, path(target), 11};
    for (const auto& [k, v] : headers) req.set(k, v);
    return exchange(req, "GET");
  }

  Result<HttpResponse> post(std::string_view target, std::string_view content_type,
                            std::string_view body) override {
    http::request<http::string_body> req{http::verb::post, path(target), 11};
    req.set(http::field::content_type, std::string(content_type));
    req.body() = std::string(body);
    req.prepare_payload();
    return exchange(req, "POST");
  }

  std::string url(std::string_view target) const override {
    return "http://" + host_header() + path(target);
  }

 private:
  std::string path(std::string_view target) const {
    return parts_.target + "/" + std::string(target);
  }

  std::string host_header() const {
    return parts_.port == "80" ? parts_.host : parts_.host + ":" + parts_.port;
  }

  // `target` is the request's whole path.
  Status failure(const std::string& method, std::string_view target, const std::string& what,
                 beast::error_code ec) const {
    std::string why = ec == beast::error::timeout
                          ? "timed out after " + std::to_string(options_.timeout.count()) + " ms"
                          : ec.message();
    return io_error(method + " http://" + host_header() + std::string(target) + ": " + what +
                    ": " + why);
  }

  void run_steps() {
    ioc_.restart();
    ioc_.run_for(options_.timeout * 4);
    if (!ioc_.stopped()) {
      // A step outlived every deadline (the resolver, stuck): cancel it and let the cancelled
      // handlers run now, while what they refer to still exists.
      resolver_.cancel();
      if (stream_) stream_->cancel();
      ioc_.restart();
      ioc_.run();
    }
  }

  Status connect(const std::string& method, std::string_view target) {
    stream_.emplace(ioc_);
    buffer_.clear();
    beast::error_code result = asio::error::timed_out;
    std::string step = "cannot resolve " + parts_.host;
    resolver_.async_resolve(parts_.host, parts_.port,
                            [&](beast::error_code ec, tcp::resolver::results_type r) {
                              if (ec) {
                                result = ec;
                                return;
                              }
                              step = "cannot connect to " + parts_.host + ":" + parts_.port;
                              stream_->expires_after(options_.timeout);
                              stream_->async_connect(r, [&](beast::error_code e, const tcp::endpoint&) {
                                result = e;
                              });
                            });
    run_steps();
    if (result) {
      stream_.reset();
      return failure(method, target, step, result);
    }
    beast::error_code ignored;
    stream_->socket().set_option(tcp::no_delay(true), ignored);
    return Status::ok();
  }

  Result<HttpResponse> exchange(http::request<http::string_body>& req, const std::string& method) {
    req.set(http::field::host, host_header());
    req.set(http::field::user_agent, "evledger");
    const std::string target(req.target());
    try {
      return exchange_once_or_twice(req, method, target);
    } catch (const std::exception& e) {
      // Asio reports resource exhaustion (no file descriptors, no memory) by throwing.
      stream_.reset();
      return io_error(method + " http://" + host_header() + target + ": " + e.what());
    }
  }

  Result<HttpResponse> exchange_once_or_twice(http::request<http::string_body>& req,
                                              const std::string& method, const std::string& target) {
    for (int attempt = 0;; ++attempt) {
      const bool reused = stream_.has_value();
      if (!reused) EVL_RETURN_IF_ERROR(connect(method, target));
      bool answered = false;
      auto response = send_and_receive(req, method, target, answered);
      if (response) return response;
      stream_.reset();
      // A kept connection the server closed meanwhile: once more on a fresh one.
      if (!reused || answered || attempt > 0) return response.error();
    }
  }

  Result<HttpResponse> send_and_receive(http::request<http::string_body>& req,
                                        const std::string& method, const std::string& target,
                                        bool& answered) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.max_body);
    beast::error_code result = asio::error::timed_out;
    std::string step = "cannot send the request";
    stream_->expires_after(options_.timeout);
    http::async_write(*stream_, req, [&](beast::error_code ec, size_t) {
      if (ec) {
        result = ec;
        return;
      }
      step = "cannot read the response";
      stream_->expires_after(options_.timeout);
      http::async_read(*stream_, buffer_, parser, [&](beast::error_code e, size_t) { result = e; });
    });
    run_steps();
    answered = parser.got_some();
    if (result == http::error::body_limit) {
      return failure(method, target, "the response body exceeds the limit of " +
                                         std::to_string(options_.max_body) + " bytes",
                     result);
    }
    if (result) return failure(method, target, step, result);
    auto& res = parser.get();
    HttpResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    out.body = std::move(res.body());
    if (!res.keep_alive()) stream_.reset();
    return out;
  }

  static constexpr size_t kReadBytes = 64 * 1024;

  std::string base_;
  HttpUrl parts_;
  HttpOptions options_;
  asio::io_context ioc_;
  tcp::resolver resolver_{ioc_};
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

}  // namespace

std::optional<std::string_view> HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (same_name(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

Result<std::unique_ptr<HttpClient>> HttpClient::open(const std::string& base_url,
                                                     const HttpOptions& options) {
  auto parts = parse_http_url(base_url);
  if (!parts) return parts.error();
  try {
    return std::unique_ptr<HttpClient>(new Client(base_url, std::move(*parts), options));
  } catch (const std::exception& e) {
    return io_error(base_url + ": " + e.what());
  }
}

}  // namespace evl
