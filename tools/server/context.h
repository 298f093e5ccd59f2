// tools/server/context.h — what every handler is given besides its request: the ledger, the
// append queue in front of its writer (none on a read-only server), the caches, the
// metrics, and the witnessing component when the log publishes only witnessed checkpoints.
// Built once by `evledger serve` (or a test) and shared by all I/O threads.
//
// Thread safety: every member is safe to use from many threads at once (see each type).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ledger/append_queue.h"
#include "ledger/ledger.h"
#include "ledger/witnessing.h"
#include "tools/server/caches.h"
#include "tools/server/metrics.h"
#include "tools/server/server_context.h"

namespace evl::server {

// Entries in one POST /add-event of application/vnd.evledger.entries.
inline constexpr size_t kMaxEntriesPerRequest = 1000;
// The largest request body: 1,000 framed entries of at most 65,535 bytes each.
inline constexpr size_t kMaxAppendBody = size_t{64} << 20;

struct Context : ServerContext {
  Context(Ledger& l, AppendQueue* a, ResourceCache& r, CheckpointCache& c, Metrics& m)
      : ServerContext(m), ledger(l), appends(a), resources(r), checkpoints(c) {}

  Ledger& ledger;
  AppendQueue* appends;  // null on a read-only server
  ResourceCache& resources;
  CheckpointCache& checkpoints;
  std::string log_vkey;           // the log's verifier key, as `key new` prints one
  int retry_after_seconds = 1;    // what a 503 asks publishers to wait
  size_t max_entries_per_request = kMaxEntriesPerRequest;
  // serve --policy: /checkpoint serves its publications only, and POST /add-event?wait=witnessed
  // waits for one, at most `witnessed_wait`. Null without a policy.
  Witnessing* witnessing = nullptr;
  std::chrono::milliseconds witnessed_wait{30000};
};

}  // namespace evl::server
