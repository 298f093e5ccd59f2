#include "tools/server/handlers.h"

#include <variant>

#include "events/bytes.h"
#include "events/sha256.h"
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

// `unwitnessed`: why no witnessed checkpoint came for a ?wait=witnessed request (a 504 whose
// results carry the log's own receipts), or null.
Response add_event_answer(const std::vector<QueuedOutcome>& results, bool single,
                          const Context& context, const Status* unwitnessed = nullptr) {
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
  if (worst == 200 && unwitnessed != nullptr) {
    worst = 504;
    first_detail = unwitnessed->message() + "; the entries are stored: their receipts carry the "
                   "log's checkpoint alone, and /checkpoint will serve the witnessed one";
  }
  if (worst == 200) {
    return Response::bytes(200, "application/json", "{" + tail.substr(1))
        .with("Cache-Control", "no-store");
  }
  Response r = problem(worst, single && worst != 504 ? results[0].outcome.status.message()
                                                     : first_detail);
  std::string body = *r.body;
  body.pop_back();  // the problem's closing brace: the results follow as extension members
  r.body = std::make_shared<const std::string>(body + tail);
  if (worst == 503) r.with("Retry-After", std::to_string(context.retry_after_seconds));
  return r;
}

// Answers a ?wait=witnessed request once its entries are in a published checkpoint (their
// receipts then carry the cosigned note), or with 504 after the server's wait.
void answer_witnessed(std::vector<QueuedOutcome> results, bool single, Context& context,
                      const Respond& respond) {
  uint64_t size = 0;
  for (const QueuedOutcome& r : results) {
    if (r.outcome.status) size = std::max(size, r.outcome.tree_size);
  }
  if (size == 0) {  // nothing stored: nothing to wait for
    respond(add_event_answer(results, single, context));
    return;
  }
  Context* ctx = &context;
  auto shared = std::make_shared<std::vector<QueuedOutcome>>(std::move(results));
  context.witnessing->when_published(
      size, context.witnessed_wait,
      [shared, single, ctx, respond](Result<std::shared_ptr<const Publication>> published) {
        std::vector<QueuedOutcome>& results = *shared;
        if (!published) {
          respond(add_event_answer(results, single, *ctx, &published.error()));
          return;
        }
        std::vector<uint64_t> indexes;
        for (const QueuedOutcome& r : results) {
          if (r.outcome.status) indexes.push_back(r.outcome.index);
        }
        auto receipts = witnessed_receipts(ctx->ledger, indexes, **published);
        size_t k = 0;
        for (QueuedOutcome& r : results) {
          if (!r.outcome.status) continue;
          if (receipts) {
            r.receipt = std::move((*receipts)[k++]);
          } else {
            r.receipt.clear();
            r.receipt_status = receipts.error();
          }
        }
        respond(add_event_answer(results, single, *ctx));
      });
}

// The ?wait= of POST /add-event: nothing, or "witnessed" on a server with a policy.
Status wait_parameter(const Request& request, const Context& context, bool& witnessed) {
  auto wait = request.query("wait");
  witnessed = wait.has_value();
  if (!wait) return Status::ok();
  if (*wait != "witnessed") {
    return usage_error("wait=" + wait->substr(0, 100) + " is not a wait this server knows: "
                       "wait=witnessed waits for the witnesses' quorum");
  }
  if (context.witnessing == nullptr) {
    return usage_error("wait=witnessed: this server publishes without witnesses (it was "
                       "started without --policy); leave the parameter out");
  }
  return Status::ok();
}

// The published checkpoint of a server with a policy (the witnessed one), or why there is none.
Response witnessed_checkpoint(const Request& request, const Context& context) {
  auto published = context.witnessing->published();
  if (!published) {
    return problem(503, "no checkpoint of this log has its witnesses' quorum (" +
                            context.witnessing->policy().quorum() +
                            ") yet; the log publishes only witnessed checkpoints: retry later")
        .with("Retry-After", std::to_string(context.retry_after_seconds));
  }
  Digest digest = sha256(as_bytes(published->note));
  const std::string etag = "\"w" + hex_encode(ByteView(digest.data(), 16)) + "\"";
  if (auto match = request.header("If-None-Match"); match && *match == etag) {
    Response r;
    r.status = 304;
    return std::move(r).with("ETag", etag).with("Cache-Control", "public, max-age=2");
  }
  return Response::bytes(200, "text/plain; charset=utf-8", published->note)
      .with("ETag", etag)
      .with("Cache-Control", "public, max-age=2");
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
  if (context.witnessing) return witnessed_checkpoint(request, context);
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
  if (context.witnessing) {
    auto published = context.witnessing->published();
    gauges.witnessed_size = published ? published->checkpoint.size : 0;
  }
  return Response::bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                         context.metrics.render(gauges))
      .with("Cache-Control", "no-store");
}

void handle_add_event(const Request& request, Context& context, Respond respond) {
  if (context.appends == nullptr) {
    respond(problem(405, "this server is read-only; it appends nothing"));
    return;
  }
  bool witnessed = false;
  if (Status s = wait_parameter(request, context, witnessed); !s) {
    respond(problem(s));
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
  // ?receipts=0: a publisher that keeps no receipts asks for none, and the server skips
  // proving each entry (about a fifth of its CPU in an import).
  const auto receipts = request.query("receipts");
  if (receipts && *receipts != "0" && *receipts != "1") {
    respond(problem(400, "receipts=" + receipts->substr(0, 20) +
                             ": the query member receipts is 0 (none) or 1 (the default)"));
    return;
  }
  Context* ctx = &context;
  auto admission = context.appends->submit(
      std::move(batch),
      [respond, single, ctx, witnessed](std::vector<QueuedOutcome> results) {
        if (witnessed) return answer_witnessed(std::move(results), single, *ctx, respond);
        respond(add_event_answer(results, single, *ctx));
      },
      receipts.value_or("1") == "1");
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
