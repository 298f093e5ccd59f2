// ledger/event_sink.h — where a publisher's signed entries go: a ledger on this machine
// (LocalLog, below) or a log server over HTTP (RemoteLog, ledger/remote_log.h). The write
// commands and the importer append through this one narrow interface, so that the same
// entries, built and signed the same way, reach either with the same per-entry answers.
//
// Thread safety: append() is called by one thread at a time (calls may come from different
// threads, one after the other); find() may be called from many threads at once, also while
// an append runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "events/bytes.h"
#include "keys/key.h"
#include "ledger/ledger.h"
#include "ledger/proof_format.h"

namespace evl {

// One entry's answer: the log's outcome and, when the sink makes receipts, the C2SP
// tlog-proof of the entry's inclusion in the checkpoint of the commit that answered it.
struct SinkOutcome {
  // ok: stored at `index` (added, or already present when !added). Not ok: why it is not
  // stored; `commit_failed` tells an entry that was refused (a rule, the key policy) from one
  // that could not be stored (a failed commit, an unreachable server) and may be sent again.
  AppendOutcome outcome;
  std::string receipt;    // ok outcomes of a sink that makes receipts: the tlog-proof text
  Status receipt_status;  // why an ok outcome has no receipt, or why its receipt is wrong
};

class EventSink {
 public:
  virtual ~EventSink() = default;

  // Appends `batch` in order: the log stores its entries in this order, after everything
  // earlier calls appended. One outcome per entry, in order. `queued` (optional) is called on
  // this thread once every entry is sequenced ahead of whatever a later call appends, so that
  // a caller may prepare its next batch meanwhile and keep its order. After an entry that
  // could not be stored (commit_failed), nothing later in the batch is stored either: each is
  // answered commit_failed with the same cause.
  [[nodiscard]] virtual std::vector<SinkOutcome> append(
      std::span<const Bytes> batch, const std::function<void()>& queued = nullptr) = 0;

  // The index of event `id` when the sink can tell at no cost, so that a caller may skip
  // signing what the log holds; nullopt when it does not hold it or cannot tell (a remote
  // log is not asked: its append answers "present").
  virtual std::optional<uint64_t> find(const Digest& id) const = 0;

  // The log's size as last seen: now for a local ledger; for a remote log, the size of the
  // newest checkpoint an answer cited, or nullopt before any answer.
  virtual std::optional<uint64_t> size() const = 0;

  // Where the entries go, for messages: "ledger DIR" or "http://host:port/prefix/".
  virtual std::string where() const = 0;
};

// A Ledger opened for writing, as an EventSink. With `receipts`, each stored entry gets its
// tlog-proof from the ledger's own tree (ledger/proofs.h), as the server's receipts are made;
// with `log_key` too, each receipt is verified against that key as RemoteLog does (so a
// publisher holding the wrong key finds out either way).
class LocalLog final : public EventSink {
 public:
  // `ledger` must outlive the LocalLog.
  explicit LocalLog(Ledger& ledger, bool receipts = false,
                    std::optional<VerifierKey> log_key = std::nullopt);

  [[nodiscard]] std::vector<SinkOutcome> append(
      std::span<const Bytes> batch, const std::function<void()>& queued = nullptr) override;
  std::optional<uint64_t> find(const Digest& id) const override;
  std::optional<uint64_t> size() const override { return ledger_.size(); }
  std::string where() const override { return "ledger " + ledger_.dir(); }

 private:
  Ledger& ledger_;
  bool receipts_;
  std::optional<ReceiptVerifier> verifier_;
};

// Fills the receipt of every ok outcome from `ledger`'s tree: one snapshot per commit (the
// outcomes that cite one tree size), each proof checked against that commit's checkpoint. An
// outcome the ledger cannot prove gets the reason in receipt_status.
void attach_receipts(const Ledger& ledger, std::span<SinkOutcome> outcomes);

}  // namespace evl
