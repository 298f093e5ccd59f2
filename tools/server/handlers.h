// tools/server/handlers.h — the routes of `evledger serve` and their handlers.
//
// The log (log_handlers.cpp), at the URL prefix:
//   GET  /checkpoint                 the newest signed checkpoint (ETag, If-None-Match → 304);
//                                    with a policy (serve --policy), the newest one with its
//                                    witnesses' quorum, and 503 with Retry-After before any
//                                    has one
//   GET  /tile/<L>/<N>[.p/<W>]       hash tiles, byte for byte what export-tiles writes
//   GET  /tile/entries/<N>[.p/<W>]   entry bundles, likewise
//   POST /add-event                  one entry (application/octet-stream) or up to 1,000
//                                    uint16-framed entries (application/vnd.evledger.entries);
//                                    answered after the durable commit, with receipts;
//                                    ?wait=witnessed (with a policy): answered once a witnessed
//                                    checkpoint covers the entries, with receipts in it, or
//                                    504 after the server's wait (the entries are stored)
//   GET  /healthz, /metrics          liveness; Prometheus text
// The JSON API under /api/v1/ is tools/server/api.h's.
//
// Answers of POST /add-event, JSON (application/json, or application/problem+json with the
// members of RFC 9457 beside "results" when the request fails as a whole):
//   {"results": [<result>...], "added": A, "present": P, "rejected": R, "size": S}
//   <result> = {"index": I, "id": "sha256:...", "present": bool, "receipt": "<tlog-proof>"}
//            | {"status": 400|403|500|503, "detail": "<the CLI's message>", "id"?: ...}
// A request of one entry that is refused is answered with that entry's status. A framed
// request is 200 when every entry was stored or refused for what it is (400, 403); when any
// failed for the server's sake (5xx: a full disk, a commit that failed) the answer has that
// status, and the entries it lists as stored are stored: resend the others.
//
// Thread safety: handlers are plain functions of their request and context.
#pragma once

#include "tools/server/context.h"
#include "tools/server/http.h"
#include "tools/server/router.h"

namespace evl::server {

// Adds the log's routes above to `router`.
void add_log_routes(Router& router);

Response handle_checkpoint(const Request& request, Context& context);
Response handle_tile(const Request& request, Context& context);
Response handle_healthz(const Request& request, Context& context);
Response handle_metrics(const Request& request, Context& context);
void handle_add_event(const Request& request, Context& context, Respond respond);

}  // namespace evl::server
