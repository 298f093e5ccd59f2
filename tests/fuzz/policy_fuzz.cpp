// C2SP tlog-policy files: parsed strictly, then asked about quorums and about a fixed
// checkpoint note signed by the fuzz log key and cosigned by both fuzz witnesses
// (tests/fuzz/fuzz_keys.h), which the seed policies list.
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "keys/tlog_policy.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace evl;

const std::string& cosigned_note() {
  static const std::string note = [] {
    Checkpoint checkpoint;
    checkpoint.origin = fuzz::log_key().name();
    checkpoint.size = 5;
    checkpoint.root = sha256(as_bytes("root"));
    std::string text = sign_checkpoint(checkpoint, fuzz::log_key());
    for (const auto& w : fuzz::witness_keys()) {
      text += note_signature_line(cosign_checkpoint(checkpoint, w, 1700000000));
    }
    return text;
  }();
  return note;
}

}  // namespace

EVL_FUZZ_TARGET(policy) {
  auto policy = TlogPolicy::parse(fuzz::as_text(data, size));
  if (!policy) return;
  std::vector<std::string> all;
  for (const auto& w : policy->witnesses()) all.push_back(w.name);
  // Every group needs at least one member and at most all of them.
  EVL_FUZZ_CHECK(policy->satisfied_by({}) == (policy->quorum() == kQuorumNone));
  EVL_FUZZ_CHECK(policy->satisfied_by(all));

  const std::vector<VerifierKey> other = {fuzz::log_key().verifier()};
  if (auto report = policy->evaluate(cosigned_note(), other)) {
    EVL_FUZZ_CHECK(report->cosigned.size() + report->missing.size() + report->invalid.size() ==
                   policy->witnesses().size());
    auto verified = policy->verify(cosigned_note(), other);
    EVL_FUZZ_CHECK(verified.has_value() == report->satisfied);
  }
  (void)policy->log_keys(fuzz::log_key().name());
}
