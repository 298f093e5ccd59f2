// ledger/audit.h — re-checking a whole ledger from its stored bytes.
//
// The audit trusts nothing but the entries: for every index it checks the canonical envelope
// and body, the event id and its id record, every DSSE signature (in parallel), and that the
// signer held the needed role at that position (replaying key policy from the genesis). It
// stops at the first failure and names the index, what was expected and what was found.
// Events voided by a compromise are not failures; they are counted and explained.
// Memory is flat: entries are read in bounded chunks.
//
// Thread safety: runs on the caller's thread plus a private pool; the ledger may be in use.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.h"

namespace evl {

struct AuditReport {
  Status status;                        // ok, or the first failure (kCorrupt / kRejected)
  std::optional<uint64_t> failed_index; // where it failed, when it is an entry's fault
  uint64_t entries = 0;                 // entries checked
  uint64_t signatures = 0;              // signatures verified
  std::array<uint64_t, 8> kinds{};      // entries per EventKind
  uint64_t voided = 0;                  // events void by a compromise (still in the log)
  std::vector<std::pair<uint64_t, std::string>> voided_examples;  // the first few, with causes
  std::string origin;
};

struct AuditOptions {
  unsigned threads = 0;  // 0: one per hardware thread
  std::function<void(uint64_t done, uint64_t total)> progress;
};

AuditReport audit_ledger(const Ledger& ledger, const AuditOptions& options = {});

}  // namespace evl
