// RemoteLog (ledger/remote_log.h) against the real HTTP server on loopback, and against a
// scripted server for the answers a real one gives only under load or when it misbehaves.
#include "ledger/remote_log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "events/json.h"
#include "ledger/proof_format.h"
#include "tests/tools/served_ledger.h"

namespace evl {
namespace {

using test::observation;
using test::ServedLedger;
using Clock = std::chrono::steady_clock;

// A port nothing uses right now (bound and released), below the kernel's ephemeral range: a
// client that connects to it before its server listens never gets it as its own local port
// (a loopback connection to itself would then succeed).
uint16_t free_port() {
  int low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low;
  std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<uint16_t>(10000 + random() % static_cast<unsigned>(low - 10000));
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (bound) return port;
  }
  FAIL("no free port below " << low);
  return 0;
}

// A loopback HTTP/1.1 server that answers the n-th request with the n-th scripted response
// (raw HTTP text, which must carry its Content-Length) on a kept-alive connection.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<std::string> responses) : responses_(std::move(responses)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listen_fd_, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  size_t requests() const { return served_.load(); }

 private:
  // Waits up to 100 ms for `fd` to be readable; false when it is not (or we stop).
  bool readable(int fd) const {
    pollfd p{fd, POLLIN, 0};
    return !stop_ && ::poll(&p, 1, 100) == 1;
  }
  void serve() {
    while (!stop_ && served_ < responses_.size()) {
      if (!readable(listen_fd_)) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      std::string in;
      while (!stop_ && served_ < responses_.size()) {
        size_t end = in.find("\r\n\r\n");
        if (end != std::string::npos) {
          size_t length = 0;
          if (size_t at = in.find("Content-Length: "); at != std::string::npos && at < end) {
            length = std::stoul(in.substr(at + 16));
          }
          if (in.size() >= end + 4 + length) {
            in.erase(0, end + 4 + length);
            const std::string& out = responses_[served_++];
            if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) break;
            continue;
          }
        }
        if (!readable(fd)) continue;
        char buf[65536];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      ::close(fd);
    }
  }

  std::vector<std::string> responses_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> served_{0};
  std::thread thread_;
};

std::string http_response(int status, const std::string& reason, const std::string& body,
                          const std::string& headers = "") {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " +
         "application/json\r\n" + headers + "Content-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

std::vector<Bytes> observations(const test::Cast& cast, int first, int count) {
  std::vector<Bytes> out;
  for (int i = first; i < first + count; ++i) out.push_back(observation(cast, "gpumode", i));
  return out;
}

RemoteLogOptions quick_options() {
  RemoteLogOptions o;
  o.first_backoff = std::chrono::milliseconds(10);
  o.max_backoff = std::chrono::milliseconds(200);
  o.http.timeout = std::chrono::milliseconds(5000);
  return o;
}

std::unique_ptr<RemoteLog> open_remote(const std::string& url, RemoteLogOptions options) {
  auto remote = RemoteLog::open(url, std::move(options));
  REQUIRE(remote.has_value());
  return std::move(remote.value());
}

TEST_CASE("a remote log stores a batch in its order over several requests, with receipts",
          "[remote]") {
  ServedLedger s(3);
  const std::string url = s.listen();
  RemoteLogOptions options = quick_options();
  options.max_entries = 7;
  options.log_key = s.ledger->log_verifier().value();
  auto remote = open_remote(url, options);
  const std::vector<Bytes> batch = observations(s.cast, 100, 20);
  bool queued = false;
  auto out = remote->append(batch, [&] { queued = true; });
  CHECK(queued);
  REQUIRE(out.size() == batch.size());
  CHECK(remote->requests_sent() == 3);  // 7 + 7 + 6
  const uint64_t first = 8;             // the prologue's 5 entries and 3 observations
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("entry " << i << ": " << out[i].outcome.status.message());
    REQUIRE(out[i].outcome.status.is_ok());
    CHECK(out[i].outcome.added);
    CHECK(out[i].outcome.index == first + i);
    CHECK(s.ledger->entry(first + i).value() == batch[i]);
    CHECK(out[i].receipt_status.is_ok());
    CHECK(out[i].receipt.rfind("c2sp.org/tlog-proof@v1\nindex " + std::to_string(first + i), 0) ==
          0);
  }
  CHECK(remote->size() == s.ledger->size());
  CHECK(remote->where() == url);

  // Sent again (an answer lost on the way, say): every entry present at its first index.
  auto again = remote->append(batch);
  for (size_t i = 0; i < again.size(); ++i) {
    REQUIRE(again[i].outcome.status.is_ok());
    CHECK_FALSE(again[i].outcome.added);
    CHECK(again[i].outcome.index == first + i);
  }
  CHECK(s.ledger->size() == first + batch.size());
}

TEST_CASE("a request is also cut at its byte budget", "[remote]") {
  ServedLedger s(0);
  RemoteLogOptions options = quick_options();
  options.max_bytes = 3000;  // an observation entry is about 1 KiB
  auto remote = open_remote(s.listen(), options);
  const std::vector<Bytes> batch = observations(s.cast, 0, 6);
  size_t bytes = 0;
  for (const auto& e : batch) bytes += e.size() + 2;
  auto out = remote->append(batch);
  for (const auto& o : out) REQUIRE(o.outcome.status.is_ok());
  CHECK(remote->requests_sent() >= (bytes + 2999) / 3000);
  CHECK(remote->requests_sent() < batch.size());
}

TEST_CASE("entries the server refuses get its status and detail; the others are stored",
          "[remote]") {
  ServedLedger s(0);
  auto remote = open_remote(s.listen(), quick_options());
  Bytes bad_signature = observation(s.cast, "gpumode", 3);
  bad_signature.back() ^= 1;
  const std::vector<Bytes> batch = {observation(s.cast, "gpumode", 1),
                                    observation(s.cast, "flashinfer", 2),  // out of scope
                                    bad_signature, Bytes(70000, 1),         // too large to frame
                                    observation(s.cast, "gpumode", 4)};
  auto out = remote->append(batch);
  CHECK(out[0].outcome.status.is_ok());
  CHECK(out[1].outcome.status.code() == Code::kDenied);
  CHECK_THAT(out[1].outcome.status.message(), Catch::Contains("flashinfer"));
  CHECK_FALSE(out[1].outcome.commit_failed);
  CHECK(out[2].outcome.status.code() == Code::kRejected);
  CHECK(out[3].outcome.status.code() == Code::kRejected);
  CHECK_THAT(out[3].outcome.status.message(), Catch::Contains("65535"));
  REQUIRE(out[4].outcome.status.is_ok());
  CHECK(out[4].outcome.index == out[0].outcome.index + 1);
}

TEST_CASE("a publisher started before its server keeps trying until it answers", "[remote]") {
  ServedLedger s(0);
  const uint16_t port = free_port();
  std::vector<std::string> notices;
  RemoteLogOptions options = quick_options();
  options.retry_for = std::chrono::milliseconds(20000);
  options.notice = [&](const std::string& text) { notices.push_back(text); };
  auto remote = open_remote("http://127.0.0.1:" + std::to_string(port), options);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    s.listen(std::to_string(port));
  });
  auto out = remote->append(observations(s.cast, 0, 3));
  late.join();
  for (const auto& o : out) {
    INFO(o.outcome.status.message());
    CHECK(o.outcome.status.is_ok());
  }
  CHECK(remote->requests_sent() > 1);
  REQUIRE(notices.size() == 2);
  CHECK_THAT(notices[0], Catch::Contains("retrying for up to 20 s"));
  CHECK_THAT(notices[1], Catch::Contains("answers again"));
}

TEST_CASE("a publisher gives up after its retry time and sends nothing more", "[remote]") {
  const uint16_t port = free_port();
  test::Cast cast;
  RemoteLogOptions options = quick_options();
  options.retry_for = std::chrono::milliseconds(400);
  options.max_entries = 2;
  auto remote = open_remote("http://127.0.0.1:" + std::to_string(port), options);
  const auto start = Clock::now();
  auto out = remote->append(observations(cast, 0, 5));
  const auto took = Clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(400));
  CHECK(took < std::chrono::milliseconds(3000));
  for (const auto& o : out) {
    CHECK(o.outcome.commit_failed);
    CHECK(o.outcome.status.code() == Code::kIo);
    CHECK_THAT(o.outcome.status.message(), Catch::Contains("so nothing more was sent"));
  }
  const uint64_t tried = remote->requests_sent();
  CHECK(tried > 1);
  // The later requests of the batch were never sent: the attempts were all the first one's.
  CHECK(remote->size() == std::nullopt);
}

TEST_CASE("a 503 is retried no sooner than its Retry-After", "[remote]") {
  test::Cast cast;
  const Bytes entry = observation(cast, "gpumode", 1);
  const std::string id = digest_text(event_id(decode_entry(entry).value().body));
  ScriptedServer server({
      http_response(503, "Service Unavailable", R"({"status":503,"detail":"queue full"})",
                    "Retry-After: 1\r\n"),
      http_response(200, "OK", R"({"results":[{"index":9,"id":")" + id +
                                   R"(","present":false,"receipt":"r"}],"size":10})"),
  });
  auto remote = open_remote(server.url(), quick_options());
  const auto start = Clock::now();
  auto out = remote->append(std::vector<Bytes>{entry});
  CHECK(Clock::now() - start >= std::chrono::milliseconds(1000));
  REQUIRE(out[0].outcome.status.is_ok());
  CHECK(out[0].outcome.index == 9);
  CHECK(out[0].receipt == "r");
  CHECK(server.requests() == 2);
  CHECK(remote->size() == 10);
}

TEST_CASE("an answer that names another event than the one sent is an I/O failure",
          "[remote]") {
  test::Cast cast;
  const std::string other = digest_text(test::test_digest("another event"));
  ScriptedServer server({http_response(
      200, "OK", R"({"results":[{"index":3,"id":")" + other + R"(","present":false}],"size":4})")});
  RemoteLogOptions options = quick_options();
  options.max_entries = 1;
  auto remote = open_remote(server.url(), options);
  auto out = remote->append(observations(cast, 0, 2));
  for (const auto& o : out) {
    CHECK(o.outcome.commit_failed);
    CHECK(o.outcome.status.code() == Code::kIo);
  }
  CHECK_THAT(out[0].outcome.status.message(), Catch::Contains("does not answer for what was sent"));
  CHECK(server.requests() == 1);
}

TEST_CASE("a read-only server is told apart and stops the batch", "[remote]") {
  ServedLedger s(1, true);
  auto remote = open_remote(s.listen(), quick_options());
  auto out = remote->append(observations(s.cast, 10, 2));
  for (const auto& o : out) {
    CHECK(o.outcome.commit_failed);
    CHECK(o.outcome.status.code() == Code::kIo);
    CHECK_THAT(o.outcome.status.message(), Catch::Contains("is read-only"));
  }
  CHECK(remote->requests_sent() == 1);
}

TEST_CASE("a receipt that does not verify under the given log key is flagged", "[remote]") {
  ServedLedger s(0);
  RemoteLogOptions options = quick_options();
  options.log_key = test::test_key("example.org/test-log", 0x77).verifier();  // another key
  auto remote = open_remote(s.listen(), options);
  auto out = remote->append(observations(s.cast, 0, 2));
  for (const auto& o : out) {
    REQUIRE(o.outcome.status.is_ok());  // stored: the answer is what it is
    CHECK(o.receipt_status.code() == Code::kRejected);
    CHECK_THAT(o.receipt_status.message(), Catch::Contains("under the log key"));
  }
  // Each receipt is a real proof under the real key.
  ReceiptVerifier real(s.ledger->log_verifier().value());
  const auto entries = observations(s.cast, 0, 2);
  for (size_t i = 0; i < out.size(); ++i) {
    CHECK(real.verify(out[i].receipt, entries[i], out[i].outcome.index));
  }
}

TEST_CASE("a publisher that keeps no receipts asks for none", "[remote]") {
  ServedLedger s(0);
  RemoteLogOptions options = quick_options();
  options.receipts = false;
  auto remote = open_remote(s.listen(), options);
  auto out = remote->append(observations(s.cast, 0, 3));
  for (const auto& o : out) {
    REQUIRE(o.outcome.status.is_ok());
    CHECK(o.receipt.empty());
    CHECK(o.receipt_status.is_ok());
  }
  // The server answers a request without receipts so, and refuses a query it does not know.
  auto answer = parse_json(
      *s.call("POST", "/add-event?receipts=0", std::string(as_chars(observation(s.cast, "gpumode", 9))),
              {{"Content-Type", "application/octet-stream"}})
           .body);
  REQUIRE(answer.has_value());
  const Json& result = answer->find("results")->as_array().at(0);
  CHECK(result.find("index") != nullptr);
  CHECK(result.find("receipt") == nullptr);
  CHECK(s.call("POST", "/add-event?receipts=maybe", "x",
               {{"Content-Type", "application/octet-stream"}})
            .status == 400);
}

TEST_CASE("a local log answers as its ledger does, with the receipts the server makes",
          "[sink]") {
  ServedLedger s(0);
  LocalLog local(*s.ledger, true);
  const std::vector<Bytes> batch = observations(s.cast, 0, 4);
  auto out = local.append(batch);
  ReceiptVerifier verifier(s.ledger->log_verifier().value());
  for (size_t i = 0; i < out.size(); ++i) {
    REQUIRE(out[i].outcome.status.is_ok());
    CHECK(out[i].outcome.index == 5 + i);
    CHECK(local.find(out[i].outcome.id) == out[i].outcome.index);
    CHECK(verifier.verify(out[i].receipt, batch[i], out[i].outcome.index));
  }
  CHECK(local.find(test::test_digest("not an event")) == std::nullopt);
  CHECK(local.size() == 9);
  // Without receipts, none are made.
  LocalLog plain(*s.ledger);
  auto again = plain.append(batch);
  CHECK_FALSE(again[0].outcome.added);
  CHECK(again[0].receipt.empty());
}

}  // namespace
}  // namespace evl
