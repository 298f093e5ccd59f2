// tools/server/api.h — the JSON API of `evledger serve`, at <prefix>/api/v1/. Everything the CLI
// reads, with DESIGN.md's field names; tools/server/openapi.json (served at openapi.json)
// describes every route, parameter and answer, and tests/tools/api_schema_test.py holds a real
// server's answers to it.
//
//   GET openapi.json                          this API's OpenAPI 3.1 document
//   GET events [from | cursor, limit]         entries in log order, decoded (evledger log --json)
//   GET events/{index | id} [format=raw]      one entry, decoded (evledger get --json), or its bytes
//   GET proofs/inclusion (index | id) [size, format=json|tlog-proof]   (evledger proof inclusion)
//   GET proofs/consistency from [to]          (evledger proof consistency)
//   GET checkpoints [from | cursor, limit]    the signed checkpoints, oldest first
//   GET runs [benchmark, group, cursor, limit]   run views (evledger runs --json)
//   GET runs/{digest or a unique start}       one run view with its manifests (evledger show --json)
//   GET groups [cursor, limit], groups/{key or a unique start}           (evledger groups --json)
//   GET leaders [group, cursor, limit]        leadership changes (evledger leaders --json)
//   GET benchmarks [cursor, limit]            {benchmark, runs} per benchmark
//   GET keys [cursor, limit]                  the key registry at the head (evledger key list --json)
//   GET statement [size]                      the signed projection statement (evledger statement --json)
//
// Listings answer {"items": [...], "next": <cursor> | null}: at most `limit` items (1 to
// kMaxPageLimit, default kDefaultPageLimit) from the one at `cursor` (the `next` of the page
// before; opaque, and stable as the log grows) in the CLI's order; `next` is null on the last
// page. Parameters that a route does not take, given twice, or malformed are 400 naming the
// parameter and the rule. Every error is an RFC 9457 problem carrying the CLI's message for the
// same case; a projection read while the projections do not cover the log yet (a writer is
// catching them up) is 503 with Retry-After.
//
// Caching, one rule for every route:
//   - immutable, `Cache-Control: public, max-age=31536000, immutable`: what no later entry can
//     change: an entry's bytes (events/{i}?format=raw) and a proof for a size given (size=, to=);
//   - everything else follows the log, `Cache-Control: public, max-age=2` with an ETag made of
//     the newest checkpoint's and the API's revision (a digest of openapi.json and the
//     projection format). If-None-Match with the current ETag is 304 before anything is read.
//     A decoded entry is of this kind: it names its signers and its void cause as the key state
//     at the head says, which later grants and compromises change. The ETag is read before the
//     answer, so an answer is at least as new as its ETag says, never older;
//   - openapi.json: `public, max-age=3600` with the document's ETag; errors: no-store.
//
// Reads: each request reads the projections in one LMDB snapshot (read_projections) and the
// log through the ledger's own read calls, never across anything slow, and reads the state as
// it is then: a read-only server over a ledger that another process writes follows its commits.
//
// Thread safety: handlers are plain functions of their request and context.
#pragma once

#include <cstddef>
#include <string_view>

#include "tools/server/context.h"
#include "tools/server/http.h"
#include "tools/server/router.h"

namespace evl::server {

inline constexpr size_t kDefaultPageLimit = 100;
inline constexpr size_t kMaxPageLimit = 1000;

// The OpenAPI document (tools/server/openapi.json), embedded at build time.
extern const std::string_view kOpenApiDocument;

// Adds the routes above to `router`, under /api/v1/.
void add_api_routes(Router& router);

Response handle_api_openapi(const Request& request, Context& context);
Response handle_api_events(const Request& request, Context& context);
Response handle_api_event(const Request& request, Context& context);
Response handle_api_inclusion(const Request& request, Context& context);
Response handle_api_consistency(const Request& request, Context& context);
Response handle_api_checkpoints(const Request& request, Context& context);
Response handle_api_keys(const Request& request, Context& context);
Response handle_api_statement(const Request& request, Context& context);
Response handle_api_runs(const Request& request, Context& context);
Response handle_api_run(const Request& request, Context& context);
Response handle_api_groups(const Request& request, Context& context);
Response handle_api_group(const Request& request, Context& context);
Response handle_api_leaders(const Request& request, Context& context);
Response handle_api_benchmarks(const Request& request, Context& context);

}  // namespace evl::server
