// projections/internal/log_scan.h — a rebuild's pass over the log: entries decoded and their
// manifests prepared on two threads, visited in log order on the calling one.
//
// Decoding an entry (the canonical-form checks, the event id's hash, the manifest's parsing
// and summary) costs more than folding it, so a second thread decodes chunks of
// entries ahead of the fold. The fold's thread copies each chunk out of the transaction (only
// it may read the transaction) and, when the next chunk to visit is still being decoded, decodes
// a later one itself instead of waiting: the two threads share the decoding in whatever
// proportion keeps both busy, which a fixed split cannot on shared, noisy cores.
//
// Thread safety: scan_bodies runs its visits on the calling thread, in log order; the thread it
// starts ends before it returns.
#pragma once

#include <cstdint>
#include <functional>

#include "events/bytes.h"
#include "events/event.h"
#include "events/sha256.h"
#include "events/status.h"
#include "ledger/append_hook.h"
#include "projections/internal/prepared.h"

namespace evl {

// Entry `index` of the log: its event id and body; kCorrupt naming the entry when it does not
// decode.
[[nodiscard]] Status decode_event(uint64_t index, ByteView bytes, Digest& id, EventBody& body);

// `prepared` is the event's prepare_manifest() result for a manifest or observation event;
// null for others.
using BodyVisitor = std::function<Status(uint64_t index, const Digest& id, const EventBody& body,
                                         PreparedManifest* prepared)>;

// Visits the decoded entries [0, size) of the log in order. The first entry that does not
// decode stops the scan with its kCorrupt; a visitor's error stops it unchanged.
[[nodiscard]] Status scan_bodies(AppendContext& context, uint64_t size, const BodyVisitor& visit);

}  // namespace evl
