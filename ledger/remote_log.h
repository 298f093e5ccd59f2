// ledger/remote_log.h — an EventSink that posts signed entries to a log server's
// POST /add-event (evledger serve, or anything that answers as it does) over one kept-alive
// HTTP connection (ledger/http_client.h). Secret keys never travel: entries arrive signed.
//
// A batch goes out as requests of at most `max_entries` uint16-framed entries and
// `max_bytes` bytes (application/vnd.evledger.entries), one after the other, each sent only
// once the previous one is answered: the server sequences a request's entries in order, so
// the log's order is the input's.
//
// Retries. A request that gets no answer (a refused, reset or timed-out connection) or a
// 429, 502, 503 or 504 is sent again after an exponential backoff with jitter (from
// `first_backoff`, doubling, at most `max_backoff`, each wait drawn in [b/2, b]), and never
// sooner than the answer's Retry-After. That is safe because events are content-addressed: an
// entry the server stored before the answer was lost comes back "present", at its first index.
// A request that keeps failing for `retry_for` gives up: its entries and every later entry of
// the batch are answered commit_failed with kIo, saying how long it tried; nothing after them
// is sent. So a publisher started before its server, or across a server restart, keeps trying
// for a bounded time and then says so.
//
// Answers. 200: per entry its index, event id, whether it was present and its receipt (the
// C2SP tlog-proof of its inclusion in the checkpoint of the commit that answered it); a refused
// entry gets its own status (400 kRejected, 403 kDenied, 413 kRejected) with the server's
// detail. A whole request refused: 400 or 413 is kRejected for its entries (the next request
// is still sent), 405 is a read-only server and any other status kIo (both commit_failed).
// Every answer must name the event id of the entry it answers (kIo otherwise: the server is
// not answering for what was sent). Without `receipts`, outcomes carry none (and no
// receipt_status). With `log_key`, every receipt is verified against it
// (ReceiptVerifier); one that does not verify, or is missing, sets the outcome's
// receipt_status (kRejected) and leaves its outcome as the server answered it.
//
// Thread safety: as EventSink (ledger/event_sink.h); `notice` runs on the appending thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "keys/key.h"
#include "ledger/event_sink.h"
#include "ledger/http_fetch.h"

namespace evl {

struct RemoteLogOptions {
  size_t max_entries = 1000;              // entries per request: evledger serve's limit
  size_t max_bytes = size_t{16} << 20;    // framed bytes per request (the server takes 64 MiB)
  std::chrono::milliseconds retry_for{60000};  // how long one request may keep failing
  std::chrono::milliseconds first_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  HttpOptions http;                       // deadlines of each step, the answer's size limit
  // Ask for receipts (false: "add-event?receipts=0", for a publisher that keeps none, which
  // spares the server proving every entry). With a log key they are always asked for.
  bool receipts = true;
  std::optional<VerifierKey> log_key;     // verify every receipt against the log's key
  // Told once per outage, when a request first fails and will be retried ("... retrying for
  // up to 60 s"), and when it is answered again; for a publisher's standard error.
  std::function<void(const std::string&)> notice;
};

class RemoteLog final : public EventSink {
 public:
  // `url` is the server's base, "http://host[:port][/prefix]"; requests go to <url>/add-event.
  // kUsage for a URL the HTTP client cannot use. Connects on the first append.
  static Result<std::unique_ptr<RemoteLog>> open(const std::string& url,
                                                 RemoteLogOptions options = {});
  ~RemoteLog() override;

  [[nodiscard]] std::vector<SinkOutcome> append(
      std::span<const Bytes> batch, const std::function<void()>& queued = nullptr) override;
  std::optional<uint64_t> find(const Digest&) const override { return std::nullopt; }
  std::optional<uint64_t> size() const override;
  std::string where() const override;

  // Requests sent, counting every retry; for tests and benchmarks.
  uint64_t requests_sent() const;

 private:
  struct State;
  explicit RemoteLog(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace evl
