// Offline proofs: C2SP tlog-proof files and the JSON proofs, parsed strictly, then verified
// against the fixed log key (tests/fuzz/fuzz_keys.h) for the leaf hash of an empty entry and
// for the old checkpoint in the proof itself.
#include <variant>

#include "ledger/merkle.h"
#include "ledger/proof_format.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_target.h"

EVL_FUZZ_TARGET(proof) {
  using namespace evl;
  const std::string_view text = fuzz::as_text(data, size);
  const VerifierKey log = fuzz::log_key().verifier();

  if (auto tlog = parse_tlog_proof(text)) {
    EVL_FUZZ_CHECK(format_tlog_proof(*tlog) == text);
  }
  auto doc = parse_proof(text);
  if (!doc) return;
  if (const auto* inclusion = std::get_if<InclusionProofDoc>(&*doc)) {
    const Hash leaf = inclusion->leaf_hash.value_or(Hash{});
    if (auto verified = verify_inclusion_proof(*inclusion, leaf, log)) {
      EVL_FUZZ_CHECK(verified->index < verified->checkpoint.size);
    }
    if (inclusion->leaf_hash) {
      // The JSON form round-trips through its own parser.
      auto again = parse_proof_json(format_inclusion_proof_json(*inclusion));
      EVL_FUZZ_CHECK(again.has_value() && std::get<InclusionProofDoc>(*again) == *inclusion);
    }
  } else {
    const auto& consistency = std::get<ConsistencyProofDoc>(*doc);
    if (auto verified = verify_consistency_proof(consistency, consistency.checkpoint_note, log)) {
      EVL_FUZZ_CHECK(verified->old_checkpoint.size <= verified->new_checkpoint.size);
    }
    auto again = parse_proof_json(format_consistency_proof_json(consistency));
    EVL_FUZZ_CHECK(again.has_value() && std::get<ConsistencyProofDoc>(*again) == consistency);
  }
}
