// Split-view evidence files (ledger/split_view.h; what `evledger verify --evidence` and a
// mirror read and write): parsed strictly, formatted back to the bytes read, then checked under
// the fixed log key (tests/fuzz/fuzz_keys.h). A finding must be what a split view is: two
// checkpoints of that log, the older no larger, whose trees differ at the older size.
#include "ledger/split_view.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tests/fuzz/fuzz_target.h"

EVL_FUZZ_TARGET(evidence) {
  using namespace evl;
  const std::string_view text = fuzz::as_text(data, size);
  auto evidence = parse_split_view(text);
  if (!evidence) return;
  EVL_FUZZ_CHECK(format_split_view(*evidence) == text);
  auto finding = check_split_view(*evidence, fuzz::log_key().verifier());
  if (!finding) return;
  EVL_FUZZ_CHECK(finding->older.origin == fuzz::log_key().name());
  EVL_FUZZ_CHECK(finding->newer.origin == finding->older.origin);
  EVL_FUZZ_CHECK(finding->older.size <= finding->newer.size);
  if (finding->older.size == finding->newer.size) {
    EVL_FUZZ_CHECK(finding->older.root != finding->newer.root);
  } else {
    EVL_FUZZ_CHECK(finding->older_in_newer != finding->older.root);
  }
}
