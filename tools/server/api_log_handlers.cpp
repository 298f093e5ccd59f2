// The API's log routes: events, proofs, checkpoints, keys, the statement and the document
// (tools/server/api.h). Each parses its parameters, calls the ledger's libraries (the
// functions the CLI's commands call) and serializes what they give.
#include <optional>
#include <string>

#include "events/bytes.h"
#include "events/sha256.h"
#include "ledger/proof_format.h"
#include "ledger/proofs.h"
#include "projections/statement_audit.h"
#include "tools/render.h"
#include "tools/server/api.h"
#include "tools/server/api_support.h"

namespace evl::server {

using api::LogAnswer;

namespace {

// A cursor or from= of the listings by index or size: decimal digits.
Result<uint64_t> start_parameter(const Request& request) {
  if (request.query("cursor") && request.query("from")) {
    return usage_error("give from= for the first page or cursor= for the next, not both");
  }
  const char* name = request.query("cursor") ? "cursor" : "from";
  auto start = api::u64_parameter(request, name);
  if (!start) return start.error();
  return start->value_or(0);
}

// The size a request names with `name` (size=, to=), checked to be one the log signed.
Result<std::optional<uint64_t>> signed_size(const Request& request, Context& context,
                                            const char* name) {
  auto size = api::u64_parameter(request, name);
  if (!size || !*size) return size;
  auto cp = stored_checkpoint(context.ledger, **size);
  if (!cp) return cp.error().with_context(std::string(name) + "=" + std::to_string(**size));
  return size;
}

// A proof's answer: immutable for a size the request gave, else following the log (`answer`
// was made before the proof, so that the proof is at least as new as its ETag).
Response proof_answer(const LogAnswer& answer, bool size_given, std::string body,
                      std::string_view content_type) {
  if (size_given) return api::immutable(std::move(body), content_type);
  return answer.ok(std::move(body), content_type);
}

std::string etag_of(std::string_view bytes) {
  return "\"" + hex_encode(sha256(as_bytes(bytes))).substr(0, 32) + "\"";
}

}  // namespace

Response handle_api_openapi(const Request& request, Context&) {
  static const std::string etag = etag_of(kOpenApiDocument);
  if (request.header("If-None-Match").value_or("") == etag) {
    Response r;
    r.status = 304;
    return std::move(r).with("ETag", etag).with("Cache-Control", "public, max-age=3600");
  }
  return Response::bytes(200, "application/json", std::string(kOpenApiDocument))
      .with("ETag", etag)
      .with("Cache-Control", "public, max-age=3600");
}

Response handle_api_events(const Request& request, Context& context) {
  auto page = api::listing_parameters(request, "events", {"from", "cursor", "limit"});
  if (!page) return problem(page.error());
  auto start = start_parameter(request);
  if (!start) return problem(start.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  auto cp = context.checkpoints.current();
  const uint64_t size = cp ? (*cp)->size : 0;
  const uint64_t end = *start >= size ? *start : *start + std::min<uint64_t>(page->limit, size - *start);
  const KeyPolicy keys = context.ledger.policy();
  std::vector<std::string> items;
  Status s = end == *start ? Status::ok()
                           : context.ledger.scan(*start, end, [&](uint64_t index, ByteView bytes) {
                               auto json = cli::stored_entry_json(index, bytes, keys);
                               if (!json) return json.error();
                               items.push_back(std::move(*json));
                               return Status::ok();
                             });
  if (!s) return api::problem_of(s, context);
  std::optional<std::string> next;
  if (end < size) next = std::to_string(end);
  return answer.ok(api::page_json(items, next));
}

Response handle_api_event(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "events/{event}", {"format"}); !s) {
    return problem(s);
  }
  const std::string format = request.query("format").value_or("json");
  if (format != "json" && format != "raw") {
    return problem(400, "format=" + format.substr(0, 100) +
                            " is not a format of an event: json (decoded, the default) or raw "
                            "(the stored bytes)");
  }
  auto index = find_entry(context.ledger, request.rest);
  if (!index) return api::problem_of(index.error(), context);
  auto bytes = context.ledger.entry(*index);
  if (!bytes) return api::problem_of(bytes.error(), context);
  if (format == "raw") {
    return api::immutable(std::string(as_chars(*bytes)), "application/octet-stream");
  }
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  auto json = cli::stored_entry_json(*index, *bytes, context.ledger.policy());
  if (!json) return api::problem_of(json.error(), context);
  return answer.ok(std::move(*json));
}

Response handle_api_inclusion(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "proofs/inclusion",
                                       {"index", "id", "size", "format"});
      !s) {
    return problem(s);
  }
  const std::string format = request.query("format").value_or("json");
  if (format != "json" && format != "tlog-proof") {
    return problem(400, "format=" + format.substr(0, 100) + " is tlog-proof or json");
  }
  const auto id = request.query("id");
  if (id.has_value() == request.query("index").has_value()) {
    return problem(400, "name the entry with exactly one of index= and id=");
  }
  Result<uint64_t> index = uint64_t{0};
  if (id) {
    auto digest = parse_digest_text(*id);
    index = digest ? context.ledger.find(*digest)
                   : Result<uint64_t>(usage_error("id=: " + digest.error().message()));
  } else {
    auto given = api::u64_parameter(request, "index");
    index = given ? Result<uint64_t>(**given) : Result<uint64_t>(given.error());
  }
  if (!index) return api::problem_of(index.error(), context);
  LogAnswer answer(request, context);
  auto size = signed_size(request, context, "size");
  if (!size) return api::problem_of(size.error(), context);
  if (auto unchanged = answer.not_modified(); unchanged && !*size) return *unchanged;
  auto proof = prove_inclusion(context.ledger, *index, *size);
  if (!proof) return api::problem_of(proof.error(), context);
  if (format == "json") {
    return proof_answer(answer, size->has_value(), format_inclusion_proof_json(proof->proof),
                        api::kJsonType);
  }
  return proof_answer(answer, size->has_value(), format_tlog_proof(proof->proof),
                      "text/plain; charset=utf-8");
}

Response handle_api_consistency(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "proofs/consistency", {"from", "to"}); !s) {
    return problem(s);
  }
  auto from = api::u64_parameter(request, "from");
  if (!from) return problem(from.error());
  if (!*from) return problem(400, "from= is required: the size of the older tree");
  if (**from == 0) {
    return problem(400, "from must be at least 1: every tree extends the empty one, so a proof "
                        "from size 0 proves nothing");
  }
  LogAnswer answer(request, context);
  auto to = signed_size(request, context, "to");
  if (!to) return api::problem_of(to.error(), context);
  if (auto unchanged = answer.not_modified(); unchanged && !*to) return *unchanged;
  auto proof = prove_consistency(context.ledger, **from, *to);
  if (!proof) {
    if (proof.error().code() == Code::kUsage) {
      return problem(400, "from=" + std::to_string(**from) + ": " + proof.error().message());
    }
    return api::problem_of(proof.error(), context);
  }
  return proof_answer(answer, to->has_value(), format_consistency_proof_json(*proof),
                      api::kJsonType);
}

Response handle_api_checkpoints(const Request& request, Context& context) {
  auto page = api::listing_parameters(request, "checkpoints", {"from", "cursor", "limit"});
  if (!page) return problem(page.error());
  auto start = start_parameter(request);
  if (!start) return problem(start.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  auto checkpoints = stored_checkpoints(context.ledger, *start, page->limit);
  if (!checkpoints) return api::problem_of(checkpoints.error(), context);
  std::vector<std::string> items;
  for (const auto& c : checkpoints->checkpoints) items.push_back(checkpoint_json(c));
  std::optional<std::string> next;
  if (checkpoints->next) next = std::to_string(*checkpoints->next);
  return answer.ok(api::page_json(items, next));
}

Response handle_api_keys(const Request& request, Context& context) {
  auto page = api::listing_parameters(request, "keys", {"limit", "cursor"});
  if (!page) return problem(page.error());
  if (Status s = api::check_key_cursor(page->cursor); !s) return problem(s);
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  std::optional<std::string> next;
  auto items = cli::key_registry_json(context.ledger.policy(), page->cursor, page->limit, next);
  return answer.ok(api::page_json(items, next));
}

Response handle_api_statement(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "statement", {"size"}); !s) return problem(s);
  auto size = api::u64_parameter(request, "size");
  if (!size) return problem(size.error());
  LogAnswer answer(request, context);
  if (auto unchanged = answer.not_modified()) return *unchanged;
  auto statement = stored_statement(context.ledger, *size);
  if (!statement) return api::problem_of(statement.error(), context);
  // Even the statement of a given size follows the log: a rebuild replaces one of another
  // projection format (whose change also changes the ETag's revision).
  return answer.ok(statement_json(*statement));
}

void add_api_routes(Router& router) {
  router.get("/api/v1/openapi.json", "api-openapi", handle_api_openapi);
  router.get("/api/v1/events", "api-events", handle_api_events);
  router.get("/api/v1/events/", "api-event", handle_api_event, true);
  router.get("/api/v1/proofs/inclusion", "api-inclusion", handle_api_inclusion);
  router.get("/api/v1/proofs/consistency", "api-consistency", handle_api_consistency);
  router.get("/api/v1/checkpoints", "api-checkpoints", handle_api_checkpoints);
  router.get("/api/v1/runs", "api-runs", handle_api_runs);
  router.get("/api/v1/runs/", "api-run", handle_api_run, true);
  router.get("/api/v1/groups", "api-groups", handle_api_groups);
  router.get("/api/v1/groups/", "api-group", handle_api_group, true);
  router.get("/api/v1/leaders", "api-leaders", handle_api_leaders);
  router.get("/api/v1/benchmarks", "api-benchmarks", handle_api_benchmarks);
  router.get("/api/v1/keys", "api-keys", handle_api_keys);
  router.get("/api/v1/statement", "api-statement", handle_api_statement);
}

}  // namespace evl::server
