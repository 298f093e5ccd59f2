#include "tools/server/handlers.h"

#include <variant>

#include "events/bytes.h"
#include "ledger/tile_path.h"
#include "ledger/tiles.h"

namespace evl::server {
namespace {

constexpr std::string_view kEntriesType = "application/vnd.evledger.entries";
constexpr std::string_view kEntryType = "application/octet-stream";
constexpr size_t kMaxEntryBytes = 65535;

// The media type without parameters ("application/json; charset=utf-8" → "application/json").
std::string_view media_type(std::string_view value) {
  value = value.substr(0, value.find(';'));
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

Response checkpoint_missing(const Status& status) {
  if (status.code() == Code::kNotFound) {
    return problem(404, "the log has no checkpoint yet: its genesis is not appended");
  }
  return problem(status);
}

// The JSON of one entry's outcome in an /add-event answer.
std::string result_json(const QueuedOutcome& r, int& status) {
  const AppendOutcome& o = r.outcome;
  std::string out;
  if (o.status) {
    status = 200;
    out = "{\"index\":" + std::to_string(o.index) + ",\"id\":\"" + digest_text(o.id) +
          "\",\"present\":" + (o.added ? "false" : "true");
    if (!r.receipt.empty()) {
      out += ",\"receipt\":" + json_string(r.receipt);
    } else if (!r.receipt_status.is_ok()) {
      out += ",\"receiptError\":" + json_string(r.receipt_status.message());
    }
    return out + "}";
  }
  // An environment failure (a full disk, a failed commit) is worth resending later: 503.
  status = o.status.code() == Code::kIo ? 503 : http_status(o.status.code());
  out = "{\"status\":" + std::to_string(status) + ",\"detail\":" + json_string(o.status.message());
  if (o.id != Digest{}) out += ",\"id\":\"" + digest_text(o.id) + "\"";
  return out + "}";
}

Response add_event_answer(const std::vector<QueuedOutcome>& results, bool single,
                          const Context& context) {
  std::string list = "[";
  uint64_t added = 0, present = 0, refused = 0, size = 0;
  int worst = 200;
  std::string first_detail;
  for (size_t i = 0; i < results.size(); ++i) {
    int status = 200;
    if (i > 0) list += ",";
    list += result_json(results[i], status);
    const AppendOutcome& o = results[i].outcome;
    if (o.status) {
      ++(o.added ? added : present);
      size = std::max(size, o.tree_size);
    } else {
      ++refused;
      if (first_detail.empty()) first_detail = "entry " + std::to_string(i) + ": " + o.status.message();
      // A single entry's refusal is the answer's status; a batch fails whole only for the
      // server's sake.
      if (single || status >= 500) worst = std::max(worst, status);
    }
  }
  list += "]";
  std::string tail = ",\"results\":" + list + ",\"added\":" + std::to_string(added) +
                     ",\"present\":" + std::to_string(present) +
                     ",\"rejected\":" + std::to_string(refused) + ",\"size\":" + std::to_string(size) +
                     "}";
  if (worst == 200) {
    return Response::bytes(200, "application/json", "{" + tail.substr(1))
        .with("Cache-Control", "no-store");
  }
  Response r = problem(worst, single ? results[0].outcome.status.message() : first_detail);
  std::string body = *r.body;
  body.pop_back();  // the problem's closing brace: the results follow as extension members
  r.body = std::make_shared<const std::string>(body + tail);
  if (worst == 503) r.with("Retry-After", std::to_string(context.retry_after_seconds));
  return r;
}

}  // namespace

void add_log_routes(Router& router) {
  router.get("/checkpoint", "checkpoint", handle_checkpoint);
  router.get("/tile/", "tile", handle_tile, true);
  router.post("/add-event", "add-event", handle_add_event, kMaxAppendBody);
  router.get("/healthz", "healthz", handle_healthz);
  router.get("/metrics", "metrics", handle_metrics);
}

Response handle_checkpoint(const Request& request, Context& context) {
  auto cp = context.checkpoints.current();
  if (!cp) return checkpoint_missing(cp.error());
  const PublishedCheckpoint& c = **cp;
  // Mutable: clients and caches may keep it a moment, never long (tlog-tiles: a few seconds).
  if (auto match = request.header("If-None-Match"); match && *match == c.etag) {
    Response r;
    r.status = 304;
    return std::move(r).with("ETag", c.etag).with("Cache-Control", "public, max-age=2");
  }
  return Response::bytes(200, "text/plain; charset=utf-8", c.note)
      .with("ETag", c.etag)
      .with("Cache-Control", "public, max-age=2");
}

Response handle_tile(const Request& request, Context& context) {
  const std::string path = "tile/" + request.rest;
  auto resource = parse_tile_path(path);
  if (!resource) return problem(400, "/" + path + ": " + resource.error().message());
  const auto* tile = std::get_if<HashTile>(&*resource);
  const auto* bundle = std::get_if<EntryBundle>(&*resource);
  const uint32_t width = tile ? tile->width : bundle->width;
  const char* cache_control = width == kTileWidth ? "public, max-age=31536000, immutable"
                                                  : "public, max-age=3600";
  if (auto cached = context.resources.find(path)) {
    return Response::shared(200, "application/octet-stream", std::move(cached))
        .with("Cache-Control", cache_control);
  }
  auto cp = context.checkpoints.current();
  if (!cp) return checkpoint_missing(cp.error());
  const uint64_t size = (*cp)->size;
  auto bytes = tile ? read_hash_tile(context.ledger, *tile, size)
                    : read_entry_bundle(context.ledger, *bundle, size);
  if (!bytes) {
    if (bytes.error().code() == Code::kNotFound) {
      return problem(404, "/" + bytes.error().message() + " (the newest checkpoint's)");
    }
    return problem(bytes.error());
  }
  auto shared = std::make_shared<const std::string>(std::move(*bytes));
  context.resources.insert(path, shared);
  return Response::shared(200, "application/octet-stream", std::move(shared))
      .with("Cache-Control", cache_control);
}

Response handle_healthz(const Request&, Context& context) {
  auto cp = context.checkpoints.current();
  uint64_t size = cp ? (*cp)->size : 0;
  std::string body = "{\"status\":\"ok\",\"size\":" + std::to_string(size) +
                     ",\"readOnly\":" + (context.appends ? "false" : "true") + "}";
  return Response::bytes(200, "application/json", std::move(body)).with("Cache-Control", "no-store");
}

Response handle_metrics(const Request&, Context& context) {
  Gauges gauges;
  if (auto cp = context.checkpoints.current()) gauges.log_size = (*cp)->size;
  if (context.appends) {
    gauges.queue_entries = context.appends->queued_entries();
    gauges.queue_capacity = context.appends->capacity();
  }
  gauges.connections = context.connections.load(std::memory_order_relaxed);
  return Response::bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                         context.metrics.render(gauges))
      .with("Cache-Control", "no-store");
}

void handle_add_event(const Request& request, Context& context, Respond respond) {
  if (context.appends == nullptr) {
    respond(problem(405, "this server is read-only; it appends nothing"));
    return;
  }
  const std::string_view type = media_type(request.header("Content-Type").value_or(""));
  std::vector<Bytes> batch;
  bool single = false;
  if (type == kEntryType) {
    if (request.body.empty()) {
      respond(problem(400, "the body is empty; send one signed entry (evledger sign writes one)"));
      return;
    }
    if (request.body.size() > kMaxEntryBytes) {
      respond(problem(413, "the entry is " + std::to_string(request.body.size()) +
                               " bytes; an entry is at most 65,535 bytes (the tile bundle's "
                               "length prefix)"));
      return;
    }
    single = true;
    batch.emplace_back(request.body.begin(), request.body.end());
  } else if (type == kEntriesType) {
    auto frames = split_entry_frames(as_bytes(request.body), SIZE_MAX);
    if (!frames) {
      respond(problem(400, frames.error().message()));
      return;
    }
    if (frames->size() > context.max_entries_per_request) {
      respond(problem(413, "the body holds " + std::to_string(frames->size()) +
                               " entries; a request carries at most " +
                               std::to_string(context.max_entries_per_request) +
                               ": send the rest in another"));
      return;
    }
    if (frames->empty()) {
      respond(problem(400, "the body holds no entries; send up to " +
                               std::to_string(context.max_entries_per_request) +
                               " uint16-framed entries"));
      return;
    }
    batch.reserve(frames->size());
    for (ByteView f : *frames) batch.emplace_back(f.begin(), f.end());
  } else {
    respond(problem(415, "Content-Type '" + std::string(type.substr(0, 100)) +
                             "' is not an entry: send application/octet-stream (one entry) or " +
                             std::string(kEntriesType) + " (uint16-framed entries)"));
    return;
  }
  Context* ctx = &context;
  auto admission = context.appends->submit(
      std::move(batch), [respond, single, ctx](std::vector<QueuedOutcome> results) {
        respond(add_event_answer(results, single, *ctx));
      });
  if (admission == AppendQueue::Admission::kQueued) return;
  const bool closing = admission == AppendQueue::Admission::kClosed;
  if (!closing) context.metrics.record_overload();
  respond(problem(503, closing ? "the server is shutting down; send this again to it (or its "
                                 "successor) in a moment"
                               : "the append queue is full; retry after the time Retry-After "
                                 "gives (events are content-addressed, so a resend is safe)")
              .with("Retry-After", std::to_string(context.retry_after_seconds)));
}

}  // namespace evl::server
