#include "ledger/remote_log.h"

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include "events/event.h"
#include "events/json.h"
#include "ledger/http_client.h"
#include "ledger/proof_format.h"
#include "ledger/tile_path.h"

namespace evl {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kEntriesType = "application/vnd.evledger.entries";

bool retryable(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

std::string seconds_text(Clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f" : "%.0f", s);
  return buf;
}

// The detail of an RFC 9457 problem, or the start of whatever else the body holds.
std::string problem_detail(const HttpResponse& r) {
  JsonLimits limits;
  limits.max_depth = 8;
  if (auto json = parse_json(r.body, limits)) {
    if (const Json* detail = json->find("detail"); detail && detail->is_string()) {
      return detail->as_string();
    }
  }
  return r.body.substr(0, 300);
}

// Retry-After in whole seconds (RFC 9110 also allows a date, which evledger serve never
// sends: such a value is ignored and the backoff alone decides).
std::optional<Clock::duration> retry_after(const HttpResponse& r) {
  auto value = r.header("Retry-After");
  if (!value || value->empty() || value->size() > 6) return std::nullopt;
  uint64_t seconds = 0;
  for (char c : *value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + static_cast<uint64_t>(c - '0');
  }
  return std::chrono::seconds(seconds);
}

// The code an entry's own status in a 200 answer maps to.
Code entry_code(int status) {
  switch (status) {
    case 400:
    case 413: return Code::kRejected;
    case 403: return Code::kDenied;
    case 404: return Code::kNotFound;
    default: return Code::kIo;
  }
}

std::optional<uint64_t> whole_number(const Json* value) {
  if (value == nullptr || !value->is_number()) return std::nullopt;
  const double v = value->as_number();
  if (v < 0 || v > 9007199254740992.0 || v != static_cast<double>(static_cast<uint64_t>(v))) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(v);
}

// The event id of an entry, when it decodes (the server refuses one that does not).
std::optional<Digest> entry_id(ByteView entry) {
  auto decoded = decode_entry(entry);
  if (!decoded) return std::nullopt;
  return event_id(decoded->body);
}

}  // namespace

struct RemoteLog::State {
  std::string url;     // the base, ending in "/"
  std::string target;  // "add-event", with "?receipts=0" when none are asked for
  RemoteLogOptions options;
  std::unique_ptr<HttpClient> http;
  std::optional<ReceiptVerifier> receipts;
  std::mt19937_64 jitter{std::random_device{}()};
  mutable std::mutex mu;
  std::optional<uint64_t> size;
  uint64_t requests = 0;

  // One request's entries: their positions in the batch.
  struct Request {
    std::vector<size_t> positions;
    std::string body;
  };

  // The next request of `batch` from position `next` (moved past it); an entry that cannot
  // be framed is answered in `out` and left out.
  Request next_request(std::span<const Bytes> batch, size_t& next,
                       std::vector<SinkOutcome>& out) const;
  Result<HttpResponse> post_with_retries(const std::string& body);
  // Fills the outcomes of a 200 answer; kIo when it does not answer what was sent.
  Status read_answer(const HttpResponse& r, const Request& request,
                     std::span<const Bytes> batch, std::vector<SinkOutcome>& out);
  // One entry's result in it: stored (with its receipt, when asked for) or refused.
  Status read_result(const Json& result, ByteView entry, uint64_t tree_size, SinkOutcome& out);
  void read_receipt(const Json& result, ByteView entry, SinkOutcome& out);
  // The outcome of every entry of a request the server refused as a whole; the Status that
  // stops the batch, or ok when the next request may still go.
  Status refuse_request(const HttpResponse& r, const Request& request,
                        std::vector<SinkOutcome>& out) const;
  Clock::duration backoff_wait(Clock::duration backoff) {
    const auto ticks = std::max<Clock::rep>(1, backoff.count());
    std::uniform_int_distribution<Clock::rep> pick(ticks / 2, ticks);
    return Clock::duration(pick(jitter));
  }
};

Result<HttpResponse> RemoteLog::State::post_with_retries(const std::string& body) {
  std::optional<Clock::time_point> first_failure;
  Clock::duration backoff = options.first_backoff;
  for (uint64_t attempt = 1;; ++attempt) {
    ++requests;
    auto answer = http->post(target, kEntriesType, body);
    if (answer && !retryable(answer->status)) {
      if (first_failure && options.notice) {
        options.notice(url + " answers again (after " + std::to_string(attempt) +
                       " attempts over " + seconds_text(Clock::now() - *first_failure) + " s)");
      }
      return answer;
    }
    const std::string why =
        answer ? "POST " + http->url(target) + " answered " +
                     std::to_string(answer->status) + ": " + problem_detail(*answer)
               : answer.error().message();
    const auto now = Clock::now();
    if (!first_failure) {
      first_failure = now;
      if (options.notice) {
        options.notice(why + "; retrying for up to " + seconds_text(options.retry_for) +
                       " s (a resend is safe: events are content-addressed)");
      }
    }
    const auto elapsed = now - *first_failure;
    const auto left = options.retry_for - elapsed;
    auto wait = backoff_wait(backoff);
    if (answer) {
      if (auto asked = retry_after(*answer); asked && *asked > wait) wait = *asked;
    }
    if (left <= Clock::duration::zero() || (answer && retry_after(*answer) > left)) {
      return io_error(why + "; still failing after " + std::to_string(attempt) +
                      " attempts over " + seconds_text(elapsed) + " s, so nothing more was sent");
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(wait, left));
    backoff = std::min<Clock::duration>(backoff * 2, options.max_backoff);
  }
}

Status RemoteLog::State::read_answer(const HttpResponse& r, const Request& request,
                                     std::span<const Bytes> batch,
                                     std::vector<SinkOutcome>& out) {
  const std::string what = "the answer of " + url + "add-event";
  JsonLimits limits;
  limits.max_depth = 8;
  limits.max_bytes = options.http.max_body;
  auto json = parse_json(r.body, limits);
  if (!json) return io_error(what + " is not JSON: " + json.error().message());
  const Json* results = json->find("results");
  if (results == nullptr || !results->is_array() ||
      results->as_array().size() != request.positions.size()) {
    return io_error(what + " does not list one result per entry sent (" +
                    std::to_string(request.positions.size()) + ")");
  }
  const uint64_t tree_size = whole_number(json->find("size")).value_or(0);
  if (tree_size > 0) size = std::max(size.value_or(0), tree_size);
  for (size_t k = 0; k < request.positions.size(); ++k) {
    const size_t p = request.positions[k];
    EVL_RETURN_IF_ERROR(read_result(results->as_array()[k], batch[p], tree_size, out[p])
                            .with_context(what + ", entry " + std::to_string(p) + " of the batch"));
  }
  return Status::ok();
}

Status RemoteLog::State::read_result(const Json& result, ByteView entry, uint64_t tree_size,
                                     SinkOutcome& out) {
  AppendOutcome& o = out.outcome;
  if (const Json* id = result.find("id"); id && id->is_string()) {
    const std::optional<Digest> sent = entry_id(entry);
    auto named = parse_digest_text(id->as_string());
    if (!named || (sent && *named != *sent)) {
      return io_error("it names event " + id->as_string() + ", but what was sent is " +
                      (sent ? digest_text(*sent) : std::string("not an entry")) +
                      ": the server does not answer for what was sent");
    }
    o.id = *named;
  }
  auto index = whole_number(result.find("index"));
  if (!index) {  // refused: the server's status and detail
    const Json* detail = result.find("detail");
    const int status = static_cast<int>(whole_number(result.find("status")).value_or(500));
    o.status = Status(entry_code(status), detail && detail->is_string()
                                              ? detail->as_string()
                                              : "the server refused the entry");
    return Status::ok();
  }
  if (o.id == Digest{}) return io_error("it gives a stored entry no event id");
  const Json* present = result.find("present");
  o.status = Status::ok();
  o.index = *index;
  o.added = !(present && present->is_bool() && present->as_bool());
  o.tree_size = tree_size;
  if (options.receipts) read_receipt(result, entry, out);
  return Status::ok();
}

void RemoteLog::State::read_receipt(const Json& result, ByteView entry, SinkOutcome& out) {
  if (const Json* receipt = result.find("receipt"); receipt && receipt->is_string()) {
    out.receipt = receipt->as_string();
  } else if (const Json* error = result.find("receiptError"); error && error->is_string()) {
    out.receipt_status = io_error("the server made no receipt: " + error->as_string());
    return;
  } else {
    out.receipt_status = io_error("the server answered no receipt");
    return;
  }
  if (!receipts) return;
  Status verified = receipts->verify(out.receipt, entry, out.outcome.index);
  if (!verified) {
    out.receipt_status = rejected(verified.message() + " under the log key " +
                                  receipts->log_key().to_string() +
                                  ": the server is not that log, or not honest about it");
  }
}

Status RemoteLog::State::refuse_request(const HttpResponse& r, const Request& request,
                                        std::vector<SinkOutcome>& out) const {
  const std::string detail = problem_detail(r);
  Status why;
  bool stops = true;
  if (r.status == 400 || r.status == 413) {
    why = rejected(url + " refused the request (" + std::to_string(r.status) + "): " + detail);
    stops = false;
  } else if (r.status == 405) {
    why = io_error("the server " + url + " is read-only (405): " + detail);
  } else if (r.status == 404) {
    why = io_error(url + "add-event is not found (404): " + detail +
                   "; is the URL the log's, with its prefix?");
  } else {
    why = io_error("POST " + url + "add-event answered " + std::to_string(r.status) + ": " +
                   detail);
  }
  for (size_t p : request.positions) {
    out[p].outcome.status = why;
    out[p].outcome.commit_failed = stops;
  }
  return stops ? why : Status::ok();
}

RemoteLog::RemoteLog(std::unique_ptr<State> state) : state_(std::move(state)) {}
RemoteLog::~RemoteLog() = default;

Result<std::unique_ptr<RemoteLog>> RemoteLog::open(const std::string& url,
                                                   RemoteLogOptions options) {
  auto http = HttpClient::open(url, options.http);
  if (!http) return http.error();
  auto state = std::make_unique<State>();
  state->url = url.back() == '/' ? url : url + "/";
  state->http = std::move(http.value());
  if (options.log_key) state->receipts.emplace(*options.log_key);
  options.max_entries = std::max<size_t>(1, options.max_entries);
  if (options.log_key) options.receipts = true;
  state->target = options.receipts ? "add-event" : "add-event?receipts=0";
  state->options = std::move(options);
  return std::unique_ptr<RemoteLog>(new RemoteLog(std::move(state)));
}

RemoteLog::State::Request RemoteLog::State::next_request(std::span<const Bytes> batch,
                                                         size_t& next,
                                                         std::vector<SinkOutcome>& out) const {
  Request request;
  for (; next < batch.size() && request.positions.size() < options.max_entries; ++next) {
    const Bytes& entry = batch[next];
    if (entry.empty() || entry.size() > kMaxEntryBytes) {  // cannot be framed: never sent
      out[next].outcome.status =
          rejected("entry is " + std::to_string(entry.size()) + " bytes; an entry is 1 to " +
                   std::to_string(kMaxEntryBytes) + " bytes (the tile bundle's 16-bit prefix)");
      continue;
    }
    if (!request.positions.empty() && request.body.size() + 2 + entry.size() > options.max_bytes) {
      break;
    }
    append_entry_frame(request.body, entry);
    request.positions.push_back(next);
  }
  return request;
}

std::vector<SinkOutcome> RemoteLog::append(std::span<const Bytes> batch,
                                           const std::function<void()>& queued) {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  std::vector<SinkOutcome> out(batch.size());
  Status stop;  // once a request failed for good, nothing later is sent
  for (size_t next = 0; next < batch.size();) {
    const State::Request request = s.next_request(batch, next, out);
    if (request.positions.empty()) continue;
    if (stop.is_ok()) {
      auto answer = s.post_with_retries(request.body);
      if (!answer) {
        stop = answer.error();
      } else if (answer->status != 200) {
        stop = s.refuse_request(*answer, request, out);  // answers the entries itself
        continue;
      } else if (stop = s.read_answer(*answer, request, batch, out); stop.is_ok()) {
        continue;
      }
    }
    // Whatever a request that failed for good answered is not to be relied on: its entries,
    // and those of every later request, were not (known to be) stored.
    for (size_t p : request.positions) {
      out[p] = SinkOutcome{};
      out[p].outcome.status = stop;
      out[p].outcome.commit_failed = true;
    }
  }
  if (queued) queued();
  return out;
}

std::optional<uint64_t> RemoteLog::size() const {
  std::lock_guard lock(state_->mu);
  return state_->size;
}

std::string RemoteLog::where() const { return state_->url; }

uint64_t RemoteLog::requests_sent() const {
  std::lock_guard lock(state_->mu);
  return state_->requests;
}

}  // namespace evl
