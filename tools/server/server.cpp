#include "tools/server/server.h"

// Asio needs <utility> before its own headers under C++20 (Boost 1.74).
#include <utility>

#include <sys/resource.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace evl::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// How much a body is read at a time (see Session::read_body).
constexpr size_t kBodyReadBytes = 64 * 1024;

class Session;

// What every connection shares: the router, the context, the limits, and the registry of open
// connections that shutdown() walks.
struct Shared {
  Shared(const RouteTable& r, ServerContext& c, const ServerLimits& l)
      : router(r), context(c), limits(l) {}
  const RouteTable& router;
  ServerContext& context;
  ServerLimits limits;
  uint64_t max_body = 0;  // the largest body limit of any route
  std::atomic<bool> closing{false};
  std::mutex mu;
  std::condition_variable all_closed;
  std::set<Session*> sessions;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Shared& shared) : stream_(std::move(socket)), shared_(shared) {
    shared_.context.connections.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(shared_.mu);
    shared_.sessions.insert(this);
  }

  ~Session() {
    shared_.context.connections.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard lock(shared_.mu);
    shared_.sessions.erase(this);
    if (shared_.sessions.empty()) shared_.all_closed.notify_all();
  }

  void start() {
    asio::dispatch(stream_.get_executor(),
                   beast::bind_front_handler(&Session::read_header, shared_from_this()));
  }

  // From shutdown(): on the session's event loop, close it if it waits for a request that has
  // not begun to arrive; a busy one closes after its response.
  void close_if_idle() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->idle_) self->stream_.socket().close();
    });
  }

 private:
  void read_header() {
    match_ = RouteMatch{};
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_.limits.header_limit));
    // Beast checks a declared Content-Length against this limit while it parses the header,
    // before any route is known: the largest route's limit here, the route's own after it.
    parser_->body_limit(shared_.max_body);
    stream_.expires_after(first_ ? shared_.limits.header_timeout : shared_.limits.idle_timeout);
    idle_ = buffer_.size() == 0;
    if (idle_ && shared_.closing.load()) return close();
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    idle_ = false;
    first_ = false;
    if (ec) return read_failed(ec);
    auto& req = parser_->get();
    started_ = Clock::now();
    match_ = shared_.router.match(std::string_view(req.method_string().data(), req.method_string().size()),
                                  std::string_view(req.target().data(), req.target().size()));
    const bool has_body = req.has_content_length() ? parser_->content_length().value_or(0) > 0
                                                   : req.chunked();
    if (match_.route == nullptr) {
      // The body, if any, is not read: close after the answer rather than parse past it.
      keep_alive_ = req.keep_alive() && !has_body;
      return write(std::move(match_.refusal));
    }
    const size_t limit = match_.route->body_limit;
    if (parser_->content_length() && *parser_->content_length() > limit) {
      keep_alive_ = false;
      return write(too_large(limit));
    }
    keep_alive_ = req.keep_alive();
    if (parser_->is_done()) return dispatch();
    parser_->body_limit(limit);
    if (auto expect = req[http::field::expect]; beast::iequals(expect, "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      stream_.expires_after(shared_.limits.write_timeout);
      return http::async_write(stream_, *cont,
                               [self = shared_from_this(), cont](beast::error_code e, std::size_t) {
                                 if (e) return self->close();
                                 self->read_body();
                               });
    }
    read_body();
  }

  void read_body() {
    // Beast reads at most the buffer's free room per call (512 bytes when it has none), and a
    // body's bytes leave the buffer as the parser takes them: without room, a 1 MiB append is
    // 2,000 reads through the reactor (measured: a tenth of the server's CPU in an import).
    // Room for 64 KiB per read while a body lasts; on_write gives it back.
    if (auto length = parser_->content_length(); !length || *length > 4096) {
      buffer_.reserve(kBodyReadBytes);
    }
    stream_.expires_after(shared_.limits.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::on_body, shared_from_this()));
  }

  void on_body(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      return write(too_large(match_.route->body_limit));
    }
    if (ec) return read_failed(ec);
    dispatch();
  }

  Response too_large(size_t limit) {
    return problem(413, "the body is larger than the " + std::to_string(limit) +
                            " bytes this route takes");
  }

  void read_failed(beast::error_code ec) {
    // A client that went away or sent nothing in time gets no answer; one that sent
    // something that is not HTTP, or too much of it, is told so.
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof || !stream_.socket().is_open()) {
      return close();
    }
    keep_alive_ = false;
    if (ec == http::error::body_limit) {  // a declared length beyond every route's limit
      started_ = Clock::now();
      return write(too_large(shared_.max_body));
    }
    if (ec == http::error::header_limit) {
      started_ = Clock::now();
      return write(problem(431, "the request line and headers are larger than " +
                                    std::to_string(shared_.limits.header_limit) + " bytes"));
    }
    started_ = Clock::now();
    write(problem(400, "malformed HTTP request: " + ec.message()));
  }

  void dispatch() {
    auto& req = parser_->get();
    request_ = Request{};
    request_.method = std::string(req.method_string());
    request_.target = std::string(req.target());
    for (const auto& field : req) {
      request_.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    }
    request_.body = std::move(req.body());
    try {
      shared_.router.prepare(match_, request_);
      auto self = shared_from_this();
      auto now = shared_.router.run(match_, request_, shared_.context, [self](Response response) {
        asio::post(self->stream_.get_executor(),
                   [self, r = std::move(response)]() mutable { self->write(std::move(r)); });
      });
      if (now) write(std::move(*now));
    } catch (const std::exception& e) {
      write(problem(500, std::string("evledger bug: unexpected exception: ") + e.what()));
    }
  }

  void write(Response response) {
    shared_.context.metrics.record_request(
        match_.route ? match_.index : shared_.router.routes().size(), response.status,
        Clock::now() - started_);
    const bool head = parser_ && parser_->get().method() == http::verb::head;
    keep_alive_ = keep_alive_ && !shared_.closing.load();
    body_ = response.body;
    res_.emplace();
    auto& res = *res_;
    res.version(11);
    res.result(static_cast<unsigned>(response.status));
    if (!response.content_type.empty()) res.set(http::field::content_type, response.content_type);
    for (auto& h : response.headers) res.insert(h.name, h.value);
    const size_t size = body_ ? body_->size() : 0;
    if (response.status != 304 && !(response.status >= 100 && response.status < 200)) {
      res.content_length(size);
    }
    if (body_ && !head && response.status != 304) res.body() = {body_->data(), size};
    res.keep_alive(keep_alive_);
    stream_.expires_after(shared_.limits.write_timeout);
    http::async_write(stream_, res,
                      beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    res_.reset();
    body_.reset();
    // An idle connection keeps only what it holds (pipelined bytes), not a body's read room.
    if (buffer_.capacity() > 4096) buffer_.shrink_to_fit();
    if (ec || !keep_alive_) return close();
    read_header();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  Shared& shared_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::span_body<const char>>> res_;
  std::shared_ptr<const std::string> body_;  // what res_'s span points into
  RouteMatch match_;
  Request request_;
  Clock::time_point started_{};
  bool first_ = true;
  bool idle_ = false;
  bool keep_alive_ = true;
};

class ServerImpl final : public HttpServer {
 public:
  ServerImpl(const ServerOptions& options, const RouteTable& router, ServerContext& context)
      : options_(options),
        shared_{router, context, options.limits},
        loops_(make_loops(options.threads)),
        acceptor_(*loops_[0]),
        signals_(*loops_[0], SIGINT, SIGTERM) {
    for (const auto& r : router.routes()) shared_.max_body = std::max<uint64_t>(shared_.max_body, r.body_limit);
  }

  ~ServerImpl() override { shutdown(std::chrono::milliseconds(0)); }

  Status listen() {
    beast::error_code ec;
    tcp::resolver resolver(*loops_[0]);
    auto results = resolver.resolve(options_.host, options_.port,
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      return usage_error("--listen " + options_.host + ":" + options_.port +
                         " is not an address to listen on (" + ec.message() +
                         "); give HOST:PORT, such as 127.0.0.1:8080");
    }
    tcp::endpoint endpoint = *results.begin();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return io_error("cannot listen on " + options_.host + ":" + options_.port + ": " +
                      ec.message() + " (is another server using the port?)");
    }
    port_ = acceptor_.local_endpoint().port();
    return Status::ok();
  }

  void run() {
    raise_descriptor_limit();
    accept();
    signals_.async_wait([this](beast::error_code ec, int signal) {
      if (!ec) note_signal(signal);
    });
    for (auto& loop : loops_) {
      guards_.emplace_back(loop->get_executor());
      threads_.emplace_back([&io = *loop] { io.run(); });
    }
  }

  std::string host() const override { return options_.host; }
  uint16_t port() const override { return port_; }

  int wait_for_signal() override {
    std::unique_lock lock(wait_mu_);
    wait_cv_.wait(lock, [&] { return woken_; });
    return signal_;
  }

  void stop_waiting() override { note_signal(0); }

  void shutdown(std::chrono::milliseconds grace) override {
    if (stopped_) return;
    stopped_ = true;
    shared_.closing.store(true);
    asio::post(*loops_[0], [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      signals_.cancel(ignored);
    });
    // Hold each open session while it is told, outside the registry's mutex: dropping the last
    // hold on one runs its destructor, which takes that mutex.
    std::vector<std::shared_ptr<Session>> open;
    {
      std::lock_guard lock(shared_.mu);
      for (Session* s : shared_.sessions) {
        if (auto held = s->weak_from_this().lock()) open.push_back(std::move(held));
      }
    }
    for (auto& s : open) s->close_if_idle();
    open.clear();
    {
      std::unique_lock lock(shared_.mu);
      shared_.all_closed.wait_for(lock, grace, [&] { return shared_.sessions.empty(); });
    }
    for (auto& loop : loops_) loop->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void note_signal(int signal) {
    std::lock_guard lock(wait_mu_);
    signal_ = signal;
    woken_ = true;
    wait_cv_.notify_all();
  }

  // Every connection is a descriptor: let the process hold as many as its hard limit allows.
  void raise_descriptor_limit() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }

  // One event loop per I/O thread, each connection on one of them in turn: a connection's
  // handlers never run on two threads, so it needs no strand, and the loops share no lock
  // (one io_context run by every thread serialises them on its scheduler's mutex).
  static std::vector<std::unique_ptr<asio::io_context>> make_loops(unsigned threads) {
    const unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::unique_ptr<asio::io_context>> loops;
    for (unsigned i = 0; i < n; ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
      // A loop opens its reactor's descriptors (epoll, wakeup, timers) with its first timer:
      // here, at start, not at its first connection, so the count of descriptors a server
      // holds while idle is the same before and after any load.
      asio::steady_timer open_reactor(*loops.back());
    }
    return loops;
  }

  void accept() {
    asio::io_context& loop = *loops_[next_loop_++ % loops_.size()];
    acceptor_.async_accept(loop, [this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) admit(std::move(s));
      accept();
    });
  }

  void admit(tcp::socket socket) {
    if (shared_.context.connections.load() >= shared_.limits.max_connections) {
      // Past the limit: a short answer written without waiting, then the door.
      static const std::string kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
          "Content-Length: 0\r\n\r\n";
      beast::error_code ignored;
      socket.non_blocking(true, ignored);
      socket.write_some(asio::buffer(kBusy), ignored);
      socket.close(ignored);
      shared_.context.metrics.record_request(shared_.router.routes().size(), 503,
                                             std::chrono::nanoseconds(0));
      return;
    }
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::make_shared<Session>(std::move(socket), shared_)->start();
  }

  ServerOptions options_;
  Shared shared_;
  std::vector<std::unique_ptr<asio::io_context>> loops_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  size_t next_loop_ = 0;  // the loop the next connection goes to; only the acceptor's handler moves it
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  bool woken_ = false;
  int signal_ = 0;
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start_table(const ServerOptions& options,
                                                            const RouteTable& router,
                                                            ServerContext& context) {
  auto server = std::make_unique<ServerImpl>(options, router, context);
  EVL_RETURN_IF_ERROR(server->listen());
  server->run();
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace evl::server
