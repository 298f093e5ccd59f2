#include "ledger/event_sink.h"

#include <map>

#include "ledger/proof_format.h"
#include "ledger/proofs.h"

namespace evl {

LocalLog::LocalLog(Ledger& ledger, bool receipts, std::optional<VerifierKey> log_key)
    : ledger_(ledger), receipts_(receipts || log_key.has_value()) {
  if (log_key) verifier_.emplace(std::move(*log_key));
}

std::vector<SinkOutcome> LocalLog::append(std::span<const Bytes> batch,
                                          const std::function<void()>& queued) {
  std::vector<AppendOutcome> appended = ledger_.append(batch, queued);
  std::vector<SinkOutcome> out(appended.size());
  for (size_t i = 0; i < appended.size(); ++i) out[i].outcome = std::move(appended[i]);
  if (!receipts_) return out;
  attach_receipts(ledger_, out);
  if (!verifier_) return out;
  for (size_t i = 0; i < out.size(); ++i) {
    SinkOutcome& s = out[i];
    if (!s.outcome.status || !s.receipt_status) continue;
    Status verified = verifier_->verify(s.receipt, batch[i], s.outcome.index);
    if (!verified) {
      s.receipt_status = rejected(verified.message() + " under the log key " +
                                  verifier_->log_key().to_string() +
                                  ": the ledger's log key is another one");
    }
  }
  return out;
}

std::optional<uint64_t> LocalLog::find(const Digest& id) const {
  auto index = ledger_.find(id);
  if (!index) return std::nullopt;
  return *index;
}

void attach_receipts(const Ledger& ledger, std::span<SinkOutcome> outcomes) {
  std::map<uint64_t, std::vector<size_t>> by_size;  // commit (tree size) → its outcomes
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const AppendOutcome& o = outcomes[i].outcome;
    if (o.status && o.tree_size > 0) by_size[o.tree_size].push_back(i);
  }
  for (const auto& [size, positions] : by_size) {
    std::vector<uint64_t> indexes;
    for (size_t i : positions) indexes.push_back(outcomes[i].outcome.index);
    auto proofs = prove_inclusions(ledger, indexes, size);
    for (size_t k = 0; k < positions.size(); ++k) {
      SinkOutcome& r = outcomes[positions[k]];
      if (proofs) {
        r.receipt = format_tlog_proof((*proofs)[k]);
      } else {
        r.receipt_status = proofs.error();
      }
    }
  }
}

}  // namespace evl
