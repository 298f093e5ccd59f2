// Entries and event bodies: the strict Cap'n Proto decoders, the in-place fast path, the
// stateless checks of check_entry, and the manifest check of the manifests they carry.
#include "events/event.h"
#include "events/jcs.h"
#include "events/json.h"
#include "events/manifest_check.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace evl;

// The manifest check of one stored manifest: what it says is canonical must be.
void check_stored_manifest(const ManifestText& text) {
  auto json = parse_json(text.canonical);
  if (!json) return;
  CheckedManifest checked = check_manifest(*json, 1);
  if (checked.ok()) {
    EVL_FUZZ_CHECK(jcs_check_canonical(checked.text.canonical).is_ok());
    EVL_FUZZ_CHECK(checked.digest == sha256(as_bytes(checked.text.canonical)));
  }
}

void check_body(ByteView bytes) {
  auto body = decode_body(bytes);
  if (!body) return;
  // Strict decoding: bytes are accepted only when re-encoding gives them back.
  EVL_FUZZ_CHECK(encode_body(*body) == Bytes(bytes.begin(), bytes.end()));
  EVL_FUZZ_CHECK(check_body_fields(*body).is_ok());
  if (const auto* o = std::get_if<Observation>(&body->payload)) check_stored_manifest(o->manifest);
  if (const auto* m = std::get_if<ManifestEvent>(&body->payload)) check_stored_manifest(m->manifest);
}

}  // namespace

EVL_FUZZ_TARGET(entry) {
  ByteView bytes(data, size);
  check_body(bytes);

  auto entry = decode_entry(bytes);
  if (entry) {
    EVL_FUZZ_CHECK(encode_entry(*entry) == Bytes(bytes.begin(), bytes.end()));
    check_body(entry->body);
  }
  // The in-place reading agrees with the full decoding.
  Digest id{};
  auto in_place = decode_entry_body(bytes, id);
  const bool body_decodes = entry && decode_body(entry->body).has_value();
  EVL_FUZZ_CHECK(in_place.has_value() == body_decodes);
  if (in_place) {
    EVL_FUZZ_CHECK(id == event_id(entry->body));
    EVL_FUZZ_CHECK(*in_place == *decode_body(entry->body));
  }
  auto checked = check_entry(bytes);
  if (checked) {
    EVL_FUZZ_CHECK(body_decodes);
    EVL_FUZZ_CHECK(checked->id == event_id(entry->body));
    EVL_FUZZ_CHECK(!checked->signers.empty() && checked->signers[0] == checked->body.author);
  }
}
