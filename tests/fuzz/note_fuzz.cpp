// Signed notes, checkpoints, cosignatures and the tlog-witness bodies that carry them, opened
// against fixed keys (tests/fuzz/fuzz_keys.h) so that seeds signed by them reach the
// verifying paths. Keys in their text forms too.
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "keys/note.h"
#include "keys/witness_format.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_target.h"

EVL_FUZZ_TARGET(note) {
  using namespace evl;
  const std::string_view text = fuzz::as_text(data, size);
  const VerifierKey log = fuzz::log_key().verifier();

  if (auto note = parse_note(text)) {
    // Every line is kept, so a note that can be written again is written as it was read.
    if (auto again = format_note(*note)) EVL_FUZZ_CHECK(*again == text);
  }
  std::vector<VerifierKey> known = {log};
  for (const auto& w : fuzz::witness_keys()) known.push_back(w.verifier());
  if (auto opened = open_note(text, known)) EVL_FUZZ_CHECK(!opened->verified.empty());

  if (auto body = parse_checkpoint_body(text)) {
    // Extension lines are kept, so a body round-trips byte for byte.
    EVL_FUZZ_CHECK(checkpoint_body(*body) == text);
  }
  if (auto checkpoint = open_checkpoint(text, log)) {
    EVL_FUZZ_CHECK(checkpoint->origin == log.name);
    auto cosigned = open_cosigned_checkpoint(text, log, fuzz::cosigner_keys());
    if (cosigned) EVL_FUZZ_CHECK(cosigned->checkpoint == *checkpoint);
  }

  if (auto request = parse_add_checkpoint_request(text)) {
    EVL_FUZZ_CHECK(format_add_checkpoint_request(*request) == text);
  }
  if (auto lines = parse_cosignature_lines(text)) {
    EVL_FUZZ_CHECK(format_cosignature_lines(*lines) == text);
  }
  (void)parse_tlog_size(text);

  if (auto key = VerifierKey::parse(text)) (void)key->to_string();
  if (auto key = CosignerKey::parse(text)) (void)key->to_string();
  (void)SecretKey::parse(text);
}
