// The RFC 8785 canonicalizer as a round trip: canonicalizing a parsed document twice gives the
// same bytes; and the one-pass checker agrees with the canonicalizer on every input.
#include "events/jcs.h"
#include "events/json.h"
#include "tests/fuzz/fuzz_target.h"

EVL_FUZZ_TARGET(jcs) {
  using namespace evl;
  const std::string_view text = fuzz::as_text(data, size);
  auto canonical = jcs_canonicalize(text);
  // jcs_check_canonical is ok exactly when canonicalizing returns the text unchanged.
  EVL_FUZZ_CHECK(jcs_check_canonical(text).is_ok() == (canonical && *canonical == text));
  if (!canonical) return;
  auto parsed = parse_json(*canonical);
  EVL_FUZZ_CHECK(parsed.has_value());
  EVL_FUZZ_CHECK(jcs_serialize(*parsed) == *canonical);
  EVL_FUZZ_CHECK(jcs_check_canonical(*canonical).is_ok());
}
