// ledger/limits.h — measuring this machine's limits, so benchmarks report ratios to them.
//
// Shared machines are noisy: evledger's figures mean something only next to the limits
// measured in the same run. These probes measure the two primitives an append is built on.
//
// Thread safety: each call is independent; they start and join their own threads.
#pragma once

#include <cstdint>
#include <string>

#include "events/status.h"

namespace evl {

// Ed25519 (libsodium) verifications per second of `message_bytes`-byte messages on `threads`
// threads, run for about `seconds`.
double ed25519_verify_rate(unsigned threads, size_t message_bytes, double seconds);

// Ed25519 signatures per second on one thread.
double ed25519_sign_rate(size_t message_bytes, double seconds);

struct LmdbAppendFigures {
  double entries_per_second = 0;  // durable, batched, MDB_APPEND
  double single_commit_ms = 0;    // median of single-entry durable commits
};

// Raw LMDB in a fresh environment under `dir`: `total` values of `value_bytes` in durable
// transactions of `batch` each, then `single_commits` one-entry commits.
Result<LmdbAppendFigures> lmdb_append_limits(const std::string& dir, uint64_t total,
                                             uint64_t batch, size_t value_bytes,
                                             unsigned single_commits);

// Current process memory from /proc/self/status, in bytes.
struct MemoryFigures {
  uint64_t peak_rss = 0;   // VmHWM
  uint64_t rss_anon = 0;   // RssAnon: heap and stacks
  uint64_t rss_file = 0;   // RssFile: mapped files (LMDB's map), reclaimable page cache
};
MemoryFigures process_memory();

}  // namespace evl
