// Entries and bodies: round trips of every kind, the golden vectors of events/FORMAT.md, one
// test per rejection class with its message, and single-byte tampering of a stored entry.
#include "events/event.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <variant>

#include "events/event.capnp.h"
#include "keys/key.h"
#include "keys/signer.h"
#include "tests/support/fixtures.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

namespace s = schema;
using Catch::Contains;

// ---- helpers ------------------------------------------------------------------------------

Bytes golden_bytes(const char* name) {
  return to_bytes(test::read_file(test::source_dir() / "tests/golden" / name));
}

std::map<std::string, std::string> golden_values() {
  std::map<std::string, std::string> out;
  std::istringstream in(test::read_file(test::source_dir() / "tests/golden/golden.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// The example of events/FORMAT.md, rebuilt from its recipe.
struct Example {
  SecretKey key = test::test_key("example.org/test-author", 0x01);
  EventBody body = test::manifest_body(key, test::environment_manifest_text(),
                                       R"({"name":"b200"})", test::kTestTimeMs);
};

// Signs `body` bytes as they are (no canonical check): lets tests put a body that breaks a rule
// into an otherwise valid entry, so that the rejection comes from that rule alone.
Bytes sign_raw(const SecretKey& author, ByteView body,
               const std::vector<const SecretKey*>& more = {}) {
  SignedEvent entry;
  entry.body.assign(body.begin(), body.end());
  Bytes message = pae(kEventPayloadType, body);
  entry.signatures.push_back({author.public_key(), author.sign(message)});
  for (const SecretKey* k : more) entry.signatures.push_back({k->public_key(), k->sign(message)});
  return encode_entry(entry);
}

std::string rejection(ByteView entry) {
  auto checked = check_entry(entry);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().code() == Code::kRejected);
  return checked.error().message();
}

template <typename Reader>
Bytes canonical(Reader reader) {
  kj::Array<capnp::word> words = capnp::canonicalize(reader);
  auto bytes = words.asBytes();
  return Bytes(bytes.begin(), bytes.end());
}

kj::ArrayPtr<const kj::byte> kj_bytes(ByteView b) { return kj::arrayPtr(b.data(), b.size()); }

// A valid manifest body written with the generated builder, for tests that then break one thing.
void fill_manifest_body(s::EventBody::Builder b, const PublicKey& author) {
  b.setSchemaVersion(kSchemaVersion);
  b.setAuthor(kj_bytes(author));
  b.setClaimedTimeMs(test::kTestTimeMs);
  b.initManifest().setCanonical(test::environment_manifest_text());
}

uint64_t get_word(const Bytes& b, size_t i) {
  uint64_t w;
  std::memcpy(&w, b.data() + 8 * i, 8);  // little-endian host, as Cap'n Proto
  return w;
}
void set_word(Bytes& b, size_t i, uint64_t w) { std::memcpy(b.data() + 8 * i, &w, 8); }
void insert_word(Bytes& b, size_t i, uint64_t w) {
  uint8_t raw[8];
  std::memcpy(raw, &w, 8);
  b.insert(b.begin() + static_cast<std::ptrdiff_t>(8 * i), raw, raw + 8);
}

// One body of every kind (and every correction kind), each valid on its own.
std::vector<EventBody> bodies_of_every_kind(const SecretKey& k) {
  Digest run = test::test_digest("run-17828");
  return {
      test::genesis_body(k, test::test_key("example.org/test-log", 0x02).public_key(),
                         {test::key_ref(test::test_key("second-admin.example.org", 0x03))}),
      test::grant_body(k, test::key_ref(test::test_key("importer.example.org", 0x04)),
                       {Role::kImporter, Role::kAttestor}, {"gpumode", "sol-execbench"}),
      test::revoke_body(k, test::test_key("importer.example.org", 0x04).public_key(),
                        RevokeReason::kRotated),
      test::revoke_body(k, test::test_key("importer.example.org", 0x04).public_key(),
                        RevokeReason::kCompromised, 7),
      test::manifest_body(k, test::environment_manifest_text(), R"({"name":"b200"})"),
      test::manifest_body(k, test::environment_manifest_text("amd")),
      test::observation_body(k, "sol-execbench"),
      test::rerun_body(k, run, 161000, R"([{"case":"a","ns":161000}])"),
      test::rerun_body(k, run),
      test::attestation_body(k, run, AttestationType::kCouldNotReproduce, "20% slower here",
                             "https://example.org/logs/1", 190000, "B200, CUDA 12.8"),
      test::attestation_body(k, run, AttestationType::kRegressionObserved, ""),
      test::retract_body(k, run),
      test::supersede_body(k, run, test::test_digest("run-17829")),
      test::disqualify_body(k, "sol-execbench", run),
      test::manifest_body(k, test::environment_manifest_text(), {}, 0),  // claimed time 0
      test::manifest_body(k, test::environment_manifest_text(), {}, -1),
  };
}

// ---- round trips --------------------------------------------------------------------------

TEST_CASE("every event kind survives encode, sign, check and decode unchanged",
          "[events][entry]") {
  auto author = test::test_key("author.example.org", 0x21);
  auto cosigner = test::test_key("cosigner.example.org", 0x22);
  std::vector<EventBody> bodies = bodies_of_every_kind(author);
  std::set<size_t> kinds;
  for (const auto& body : bodies) {
    INFO("kind " << event_kind_name(body.kind()));
    kinds.insert(body.payload.index());
    Bytes bytes = encode_body(body);
    auto decoded = decode_body(bytes);
    REQUIRE(decoded.has_value());
    CHECK(decoded.value() == body);
    CHECK(encode_body(decoded.value()) == bytes);

    Bytes entry = test::cosigned_entry(author, {&cosigner}, body);
    auto checked = check_entry(entry);
    REQUIRE(checked.has_value());
    CHECK(checked->id == sha256(bytes));
    CHECK(checked->body == body);
    CHECK(checked->signers == std::vector<PublicKey>{author.public_key(), cosigner.public_key()});

    auto envelope = decode_entry(entry);
    REQUIRE(envelope.has_value());
    CHECK(envelope->body == bytes);
    CHECK(encode_entry(envelope.value()) == entry);
  }
  CHECK(kinds.size() == std::variant_size_v<Payload>);
}

TEST_CASE("the same body signed twice is the same event with the same entry",
          "[events][entry]") {
  Example ex;
  CHECK(test::signed_entry(ex.key, ex.body) == test::signed_entry(ex.key, ex.body));
  auto a = check_entry(test::signed_entry(ex.key, ex.body));
  auto other = test::test_key("other.example.org", 0x23);
  auto b = check_entry(test::cosigned_entry(ex.key, {&other}, ex.body));
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->id == b->id);  // co-signatures never change the id
}

TEST_CASE("an entry of 65,528 bytes, the largest whole number of words under the limit, "
          "is accepted and one more word is not",
          "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  // Grow the manifest text until the entry reaches the limit exactly.
  std::string text = "{\"pad\":\"";
  Bytes entry;
  for (;;) {
    EventBody body = test::manifest_body(key, text + "\"}");
    SignedEvent probe{encode_body(body), {{key.public_key(), {}}}};
    size_t size = encode_entry(probe).size();
    if (size == 65528) {
      entry = test::signed_entry(key, body);
      break;
    }
    REQUIRE(size < 65528);
    text.append(std::min<size_t>(65528 - size, 4096), 'x');
  }
  REQUIRE(entry.size() == 65528);
  CHECK(check_entry(entry).has_value());

  EventBody bigger = test::manifest_body(key, text + "12345678\"}");
  auto signed_bigger = sign_event(key, bigger);
  REQUIRE_FALSE(signed_bigger.has_value());
  CHECK_THAT(signed_bigger.error().message(), Contains("the limit is 65535"));
  Bytes forced = sign_raw(key, encode_body(bigger));
  CHECK(forced.size() == 65536);
  CHECK_THAT(rejection(forced), Contains("entry is 65536 bytes; the limit is 65535"));
}

// ---- golden vectors -----------------------------------------------------------------------

TEST_CASE("the worked example of events/FORMAT.md matches tests/golden byte for byte",
          "[events][entry][golden]") {
  Example ex;
  auto golden = golden_values();
  Bytes body = golden_bytes("body.bin");
  Bytes entry = golden_bytes("entry.bin");

  CHECK(hex_encode(ex.key.public_key()) == golden.at("public_key"));
  CHECK(encode_body(ex.body) == body);
  CHECK(digest_text(event_id(body)) == golden.at("id"));
  CHECK(hex_encode(pae(kEventPayloadType, body)) == golden.at("pae"));
  CHECK(test::signed_entry(ex.key, ex.body) == entry);

  auto decoded = decode_entry(entry);
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->signatures.size() == 1);
  CHECK(hex_encode(decoded->signatures[0].signature) == golden.at("signature"));
  CHECK(hex_encode(ex.key.sign(pae(kEventPayloadType, body))) == golden.at("signature"));

  auto checked = check_entry(entry);
  REQUIRE(checked.has_value());
  CHECK(checked->body == ex.body);
  CHECK(digest_text(checked->id) == golden.at("id"));
}

TEST_CASE("events/FORMAT.md shows exactly the golden bytes, id, PAE and signature",
          "[events][entry][golden]") {
  // The document's hex blocks are plain hex split over lines: with whitespace removed, each
  // value must appear whole.
  std::string doc = test::read_file(test::source_dir() / "events/FORMAT.md");
  std::string flat;
  for (char c : doc) {
    if (c != ' ' && c != '\n') flat += c;
  }
  auto golden = golden_values();
  Bytes body = golden_bytes("body.bin");
  std::string prefix = "DSSEv1 39 application/vnd.evledger.event.v1+capnp 264 ";
  CHECK(golden.at("pae") == hex_encode(as_bytes(prefix)) + hex_encode(body));

  CHECK_THAT(flat, Contains(hex_encode(body)));
  CHECK_THAT(flat, Contains(hex_encode(golden_bytes("entry.bin"))));
  CHECK_THAT(flat, Contains(hex_encode(as_bytes(prefix))));
  CHECK_THAT(doc, Contains(prefix));
  CHECK_THAT(flat, Contains(golden.at("public_key")));
  CHECK_THAT(flat, Contains(golden.at("signature")));
  CHECK_THAT(doc, Contains(golden.at("id")));
  CHECK_THAT(doc, Contains(golden.at("id").substr(7) + "  body.bin"));  // sha256sum output

  // The public key as PEM (SubjectPublicKeyInfo DER: a 12-byte prefix and the key).
  Bytes spki = hex_decode("302a300506032b6570032100").value();
  Bytes pk = hex_decode(golden.at("public_key")).value();
  spki.insert(spki.end(), pk.begin(), pk.end());
  CHECK_THAT(doc, Contains(base64_encode(spki)));
  // The recipe of the example body.
  CHECK_THAT(doc, Contains("The manifest text is `" + test::environment_manifest_text() + "`"));
  CHECK_THAT(doc, Contains("claimedTimeMs = 1700000000000"));
  CHECK(test::kTestTimeMs == 1700000000000);
  CHECK(hex_encode(u64_be(static_cast<uint64_t>(test::kTestTimeMs))) == "0000018bcfe56800");
  CHECK_THAT(doc, Contains("0x0000018bcfe56800"));
  CHECK_THAT(doc, Contains("DSSEv1 29 http://example.com/HelloWorld 11 hello world"));
}

TEST_CASE("the DSSE PAE of the specification's own vector", "[events][entry][golden]") {
  CHECK(as_chars(pae("http://example.com/HelloWorld", as_bytes("hello world"))) ==
        "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
}

// ---- rejections: the shape of the bytes ---------------------------------------------------

TEST_CASE("check_entry rejects truncated bytes", "[events][entry]") {
  Bytes entry = golden_bytes("entry.bin");
  entry.resize(entry.size() - 8);
  CHECK_THAT(rejection(entry), Contains("entry is not a valid Cap'n Proto message"));
  CHECK_THAT(rejection(ByteView(entry).first(8)),
             Contains("entry is not a valid Cap'n Proto message"));  // the root pointer alone
  CHECK_THAT(rejection(Bytes{}), Contains("entry is 0 bytes"));
}

TEST_CASE("check_entry rejects a length that is not a multiple of 8", "[events][entry]") {
  Bytes entry = golden_bytes("entry.bin");
  entry.pop_back();
  CHECK_THAT(rejection(entry),
             Contains("entry is 407 bytes: canonical Cap'n Proto is a whole number of 8-byte "
                      "words"));
  auto body = decode_body(ByteView(golden_bytes("body.bin")).first(263));
  REQUIRE_FALSE(body.has_value());
  CHECK_THAT(body.error().message(), Contains("event body is 263 bytes"));
}

TEST_CASE("check_entry rejects an entry framed with a segment table", "[events][entry]") {
  // The standard stream framing of `capnp convert canonical:binary`: (segment count - 1) and
  // the segment's size in words as little-endian uint32, then the segment itself.
  Bytes entry = golden_bytes("entry.bin");
  Bytes framed(8, 0);
  uint32_t words = static_cast<uint32_t>(entry.size() / 8);
  std::memcpy(framed.data() + 4, &words, 4);
  framed.insert(framed.end(), entry.begin(), entry.end());
  CHECK_THAT(rejection(framed), Contains("entry envelope is not in canonical form"));
}

TEST_CASE("check_entry rejects an envelope with an explicitly set empty signature list",
          "[events][entry]") {
  Bytes body = golden_bytes("body.bin");
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<s::SignedEvent>();
  root.setBody(kj_bytes(body));
  root.initSignatures(0);
  CHECK_THAT(rejection(canonical(root.asReader())),
             Contains("entry envelope is not in canonical form"));
}

TEST_CASE("check_entry rejects an envelope with an unknown field set (an extra data word)",
          "[events][entry]") {
  // SignedEvent has no data section. Give the root struct one data word holding 1: pointers
  // and their targets move by one word together, so every offset stays right and Cap'n Proto
  // reads the message happily; only the re-encoding check sees the unknown field.
  Bytes entry = golden_bytes("entry.bin");
  REQUIRE(get_word(entry, 0) == 0x0002000000000000ull);
  set_word(entry, 0, 0x0002000100000000ull);
  insert_word(entry, 1, 1);
  auto decoded = decode_entry(entry);
  REQUIRE_FALSE(decoded.has_value());
  CHECK_THAT(decoded.error().message(), Contains("entry envelope is not in canonical form"));
  CHECK_THAT(rejection(entry), Contains("unknown fields"));
}

TEST_CASE("check_entry rejects an envelope with an unknown pointer field set",
          "[events][entry]") {
  // A third pointer (a future field @2) pointing at one word of data placed at the end.
  Bytes entry = golden_bytes("entry.bin");
  size_t words = entry.size() / 8;
  set_word(entry, 0, 0x0003000000000000ull);
  insert_word(entry, 3, 0);  // the new pointer slot after body and signatures
  // body and signatures pointers now need one more word of offset to reach their targets.
  set_word(entry, 1, get_word(entry, 1) + (1u << 2));
  set_word(entry, 2, get_word(entry, 2) + (1u << 2));
  // pointer 3 at word 3: a struct with one data word at the end of the message (word `words+1`).
  uint64_t offset = (words + 1) - 4;
  set_word(entry, 3, (offset << 2) | (1ull << 32));
  insert_word(entry, words + 1, 42);
  CHECK_THAT(rejection(entry), Contains("entry envelope is not in canonical form"));
}

TEST_CASE("check_entry rejects trailing garbage after the message", "[events][entry]") {
  Bytes entry = golden_bytes("entry.bin");
  insert_word(entry, entry.size() / 8, 0);
  CHECK_THAT(rejection(entry), Contains("entry envelope is not in canonical form"));
  insert_word(entry, entry.size() / 8, 0x6567726162726167ull);  // "garbage"
  CHECK_THAT(rejection(entry), Contains("entry envelope is not in canonical form"));
}

TEST_CASE("check_entry rejects an entry over 65,535 bytes and names the limit",
          "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  EventBody body = test::manifest_body(key, "{\"pad\":\"" + std::string(70000, 'x') + "\"}");
  Bytes entry = sign_raw(key, encode_body(body));
  REQUIRE(entry.size() > kMaxEntryBytes);
  CHECK_THAT(rejection(entry),
             Contains("the limit is 65535 (the tile bundle's 16-bit length prefix)"));
}

// ---- rejections: the body -----------------------------------------------------------------

TEST_CASE("check_entry rejects a body with an explicitly set empty text", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<s::EventBody>();
  fill_manifest_body(b, key.public_key());
  b.getManifest().setMetadata("");  // the canonical form leaves an empty text unset
  Bytes body = canonical(b.asReader());
  CHECK_THAT(rejection(sign_raw(key, body)), Contains("event body is not in canonical form"));
  auto decoded = decode_body(body);
  REQUIRE_FALSE(decoded.has_value());
  CHECK_THAT(decoded.error().message(), Contains("empty values left unset"));
}

TEST_CASE("check_entry rejects a body with an extra data word (an unknown field)",
          "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  Bytes body = encode_body(test::manifest_body(key, test::environment_manifest_text()));
  // EventBody: 2 data words, 2 pointers. Make it 3 data words with the new one set.
  REQUIRE(get_word(body, 0) == 0x0002000200000000ull);
  set_word(body, 0, 0x0002000300000000ull);
  insert_word(body, 3, 0xffull);
  CHECK_THAT(rejection(sign_raw(key, body)), Contains("event body is not in canonical form"));
}

TEST_CASE("check_entry rejects a body whose data section keeps a trailing zero word",
          "[events][entry]") {
  // claimedTimeMs = 0: the canonical form drops the zero second data word; keep it instead.
  auto key = test::test_key("author.example.org", 0x21);
  Bytes body = encode_body(test::manifest_body(key, test::environment_manifest_text(), {}, 0));
  REQUIRE(get_word(body, 0) == 0x0002000100000000ull);
  set_word(body, 0, 0x0002000200000000ull);
  insert_word(body, 2, 0);
  CHECK_THAT(rejection(sign_raw(key, body)), Contains("event body is not in canonical form"));
}

TEST_CASE("check_entry rejects a body that is not a valid message", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  Bytes body = encode_body(test::manifest_body(key, test::environment_manifest_text()));
  body.resize(body.size() - 8);  // the metadata-less text now runs past the end
  CHECK_THAT(rejection(sign_raw(key, body)),
             Contains("event body is not a valid Cap'n Proto message"));
}

TEST_CASE("check_entry rejects an unknown schema version (2)", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  EventBody body = test::manifest_body(key, test::environment_manifest_text());
  body.schema_version = 2;
  CHECK_THAT(rejection(sign_raw(key, encode_body(body))),
             Contains("event schema version 2 is unknown; this evledger reads version 1"));
  body.schema_version = 0;
  CHECK_THAT(rejection(sign_raw(key, encode_body(body))), Contains("schema version 0"));
}

TEST_CASE("check_entry rejects an unknown union discriminant", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  Bytes body = encode_body(test::manifest_body(key, test::environment_manifest_text()));
  // Data word 0: bytes 0-1 schemaVersion, bytes 2-3 the kind (3 = manifest).
  REQUIRE(body[10] == 3);
  body[10] = 8;
  CHECK_THAT(rejection(sign_raw(key, body)),
             Contains("event body has unknown kind 8 (a newer evledger may know it)"));
}

TEST_CASE("check_entry rejects an unknown correction kind", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  Bytes body = encode_body(test::supersede_body(key, test::test_digest("a"),
                                                test::test_digest("b")));
  // The Correction struct follows the author: its one data word holds the discriminant (1).
  auto decoded = decode_body(body);
  REQUIRE(decoded.has_value());
  size_t pos = 0;
  for (size_t w = 9; w < body.size() / 8; ++w) {
    if (get_word(body, w) == 1) {
      pos = w;
      break;
    }
  }
  REQUIRE(pos != 0);
  set_word(body, pos, 3);
  CHECK_THAT(rejection(sign_raw(key, body)), Contains("correction has an unknown kind 3"));
}

TEST_CASE("check_entry rejects an unknown enum value", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<s::EventBody>();
  b.setSchemaVersion(kSchemaVersion);
  b.setAuthor(kj_bytes(key.public_key()));
  b.setClaimedTimeMs(test::kTestTimeMs);
  SECTION("a revoke reason") {
    auto r = b.initKeyRevoke();
    r.setPublicKey(kj_bytes(test::test_key("x", 0x30).public_key()));
    r.setReason(static_cast<s::RevokeReason>(7));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("revoke reason has unknown value 7"));
  }
  SECTION("a role") {
    auto g = b.initKeyGrant();
    auto k = g.initKey();
    k.setPublicKey(kj_bytes(test::test_key("x", 0x30).public_key()));
    k.setName("x.example.org");
    auto roles = g.initRoles(2);
    roles.set(0, s::Role::IMPORTER);
    roles.set(1, static_cast<s::Role>(5));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("grant role has unknown value 5"));
  }
  SECTION("an attestation type") {
    auto a = b.initAttestation();
    a.setTarget(kj_bytes(test::test_digest("run")));
    a.setType(static_cast<s::AttestationType>(4));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("attestation type has unknown value 4"));
  }
}

TEST_CASE("check_entry rejects text that is not valid UTF-8 or holds a NUL", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<s::EventBody>();
  fill_manifest_body(b, key.public_key());
  SECTION("an invalid UTF-8 sequence") {
    b.getManifest().setMetadata(capnp::Text::Reader("{\"name\":\"\xc3\x28\"}", 13));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("manifest metadata is not valid UTF-8 text without NUL bytes"));
  }
  SECTION("an encoded surrogate") {
    b.getManifest().setCanonical(capnp::Text::Reader("\xed\xa0\x80", 3));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("manifest canonical text is not valid UTF-8"));
  }
  SECTION("a NUL inside the text") {
    b.getManifest().setCanonical(capnp::Text::Reader("{}\0{}", 5));
    CHECK_THAT(rejection(sign_raw(key, canonical(b.asReader()))),
               Contains("without NUL bytes"));
  }
}

TEST_CASE("check_entry rejects fixed-size fields of the wrong length", "[events][entry]") {
  auto key = test::test_key("author.example.org", 0x21);
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<s::EventBody>();
  fill_manifest_body(b, key.public_key());
  b.setAuthor(kj_bytes(ByteView(key.public_key()).first(31)));
  auto decoded = decode_body(canonical(b.asReader()));
  REQUIRE_FALSE(decoded.has_value());
  CHECK_THAT(decoded.error().message(), Contains("event author must be 32 bytes, found 31"));
}

// ---- rejections: signatures ---------------------------------------------------------------

TEST_CASE("check_entry rejects a wrong signature", "[events][entry]") {
  Bytes entry = golden_bytes("entry.bin");
  entry[entry.size() - 1] ^= 0x01;  // the last byte of the only signature
  CHECK_THAT(rejection(entry), Contains("signature 0 by key 8a88e3dd7409f195… does not verify "
                                        "over the DSSE PAE of the body"));
  // A valid signature, but over the body bytes instead of their PAE.
  Example ex;
  Bytes body = golden_bytes("body.bin");
  SignedEvent raw{body, {{ex.key.public_key(), ex.key.sign(body)}}};
  CHECK_THAT(rejection(encode_entry(raw)), Contains("does not verify over the DSSE PAE"));
}

TEST_CASE("check_entry rejects an entry without a signature (an empty list)",
          "[events][entry]") {
  SignedEvent entry{golden_bytes("body.bin"), {}};
  CHECK_THAT(rejection(encode_entry(entry)),
             Contains("entry has no signature; at least one is needed"));
  SignedEvent no_body{{}, {}};
  CHECK_THAT(rejection(encode_entry(no_body)), Contains("entry has no body"));
}

TEST_CASE("check_entry rejects more signatures than the limit of 16", "[events][entry]") {
  Example ex;
  std::vector<SecretKey> keys;
  for (uint8_t i = 0; i < 16; ++i) {
    keys.push_back(test::test_key("co" + std::to_string(i), static_cast<uint8_t>(0x40 + i)));
  }
  std::vector<const SecretKey*> co;
  for (const auto& k : keys) co.push_back(&k);
  Bytes body = golden_bytes("body.bin");
  std::vector<const SecretKey*> fifteen(co.begin(), co.begin() + 15);
  CHECK(check_entry(sign_raw(ex.key, body, fifteen)).has_value());  // 16 in all
  CHECK_THAT(rejection(sign_raw(ex.key, body, co)),
             Contains("entry has 17 signatures; the limit is 16"));
}

TEST_CASE("check_entry rejects an entry whose first signature is not the author's",
          "[events][entry]") {
  Example ex;
  auto other = test::test_key("other.example.org", 0x23);
  Bytes body = golden_bytes("body.bin");
  CHECK_THAT(rejection(sign_raw(other, body)),
             Contains("the first signature must be the author's"));
  CHECK_THAT(rejection(sign_raw(other, body, {&ex.key})),
             Contains("the first signature must be the author's"));
  auto refused = sign_body(other, body);
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message(), Contains("the body's author is not the key"));
}

TEST_CASE("check_entry rejects an entry signed twice by the same key", "[events][entry]") {
  Example ex;
  auto other = test::test_key("other.example.org", 0x23);
  Bytes body = golden_bytes("body.bin");
  CHECK_THAT(rejection(sign_raw(ex.key, body, {&ex.key})),
             Contains("signature 1 repeats the key of signature 0"));
  CHECK_THAT(rejection(sign_raw(ex.key, body, {&other, &other})),
             Contains("signature 2 repeats the key of signature 1"));
  auto again = add_signature(other, test::cosigned_entry(ex.key, {&other}, ex.body));
  REQUIRE_FALSE(again.has_value());
  CHECK_THAT(again.error().message(), Contains("has signed this entry already"));
}

TEST_CASE("check_entry rejects a co-signature that does not verify", "[events][entry]") {
  Example ex;
  auto other = test::test_key("other.example.org", 0x23);
  Bytes entry = test::cosigned_entry(ex.key, {&other}, ex.body);
  entry[entry.size() - 1] ^= 0x80;
  CHECK_THAT(rejection(entry), Contains("signature 1 by key"));
}

// ---- rejections: field rules --------------------------------------------------------------

std::string field_rejection(const SecretKey& key, const EventBody& body) {
  Bytes bytes = encode_body(body);
  std::string via_entry = rejection(sign_raw(key, bytes));
  CHECK(check_body_fields(body).message() == via_entry);
  auto signed_event = sign_event(key, body);  // the signer refuses it too
  CHECK_FALSE(signed_event.has_value());
  return via_entry;
}

TEST_CASE("check_entry enforces the field rules canonical form cannot express",
          "[events][entry]") {
  auto k = test::test_key("author.example.org", 0x21);
  auto target = test::test_key("target.example.org", 0x24);
  Digest run = test::test_digest("run");
  SECTION("a grant with no role") {
    CHECK_THAT(field_rejection(k, test::grant_body(k, test::key_ref(target), {})),
               Contains("key grant names no role"));
  }
  SECTION("a grant with roles out of order or repeated") {
    CHECK_THAT(field_rejection(k, test::grant_body(k, test::key_ref(target),
                                                   {Role::kRunner, Role::kImporter})),
               Contains("roles must be listed once each"));
    CHECK_THAT(field_rejection(k, test::grant_body(k, test::key_ref(target),
                                                   {Role::kRunner, Role::kRunner})),
               Contains("roles must be listed once each"));
  }
  SECTION("a grant with an unsorted or repeated scope") {
    CHECK_THAT(field_rejection(k, test::grant_body(k, test::key_ref(target), {Role::kImporter},
                                                   {"sol-execbench", "gpumode"})),
               Contains("key grant scope must be sorted and without duplicates"));
    CHECK_THAT(field_rejection(k, test::grant_body(k, test::key_ref(target), {Role::kImporter},
                                                   {"gpumode", "gpumode"})),
               Contains("key grant scope must be sorted and without duplicates"));
  }
  SECTION("a grant of a key whose name has a space or a plus") {
    CHECK_THAT(field_rejection(k, test::grant_body(k, KeyRef{target.public_key(), "a b"},
                                                   {Role::kImporter})),
               Contains("which C2SP key names forbid"));
    CHECK_THAT(field_rejection(k, test::grant_body(k, KeyRef{target.public_key(), "a+b"},
                                                   {Role::kImporter})),
               Contains("which C2SP key names forbid"));
  }
  SECTION("voidFrom on a revocation that is not for compromise") {
    CHECK_THAT(field_rejection(k, test::revoke_body(k, target.public_key(),
                                                    RevokeReason::kRetired, 3)),
               Contains("voidFrom is only for compromised keys, not retired"));
  }
  SECTION("a compromise without voidFrom") {
    CHECK_THAT(field_rejection(k, test::revoke_body(k, target.public_key(),
                                                    RevokeReason::kCompromised, 0)),
               Contains("a compromise revocation needs voidFrom >= 1"));
  }
  SECTION("attestation text over 2000 characters") {
    std::string ok_text;
    for (int i = 0; i < 2000; ++i) ok_text += "\xc3\xa9";  // é: 2000 characters, 4000 bytes
    CHECK(check_entry(test::signed_entry(k, test::attestation_body(
                          k, run, AttestationType::kEnvironmentNote, ok_text)))
              .has_value());
    CHECK_THAT(field_rejection(k, test::attestation_body(k, run,
                                                         AttestationType::kEnvironmentNote,
                                                         ok_text + "x")),
               Contains("attestation text has 2001 characters; the limit is 2000"));
  }
  SECTION("an evidence URL that is not https") {
    CHECK_THAT(field_rejection(k, test::attestation_body(k, run, AttestationType::kReproduced,
                                                         "ok", "http://example.org/log")),
               Contains("attestation evidence URL must start with https://"));
  }
  SECTION("a genesis without admins or origin") {
    EventBody g = test::genesis_body(k, target.public_key());
    std::get<Genesis>(g.payload).admins.clear();
    CHECK_THAT(field_rejection(k, g), Contains("genesis names no admin key"));
    EventBody o = test::genesis_body(k, target.public_key(), {}, "");
    CHECK_THAT(field_rejection(k, o), Contains("genesis origin has no name"));
  }
  SECTION("events without their required text") {
    CHECK_THAT(field_rejection(k, test::manifest_body(k, "")),
               Contains("manifest event has no manifest text"));
    CHECK_THAT(field_rejection(k, test::retract_body(k, run, "")),
               Contains("a correction needs a reason"));
    CHECK_THAT(field_rejection(k, test::disqualify_body(k, "", run)),
               Contains("a disqualification names its source"));
    CHECK_THAT(field_rejection(k, test::supersede_body(k, run, run)),
               Contains("a run cannot supersede itself"));
  }
}

TEST_CASE("events bug: check_entry accepts a granted key name with a Unicode space, which "
          "C2SP key names forbid",
          "[events][entry][bug]") {
  // The schema says a KeyRef name is a C2SP key name, and keys/key.cpp check_key_name refuses
  // Unicode spaces (U+00A0, U+2003, ...). events/event.cpp check_name only refuses ASCII space,
  // controls and '+', so a grant can name a key that no key file or signed note can carry.
  auto k = test::test_key("author.example.org", 0x21);
  auto target = test::test_key("target.example.org", 0x24);
  REQUIRE_FALSE(check_key_name("no\xc2\xa0" "break").is_ok());
  for (const char* name : {"no\xc2\xa0" "break", "em\xe2\x80\x83" "space",
                           "ideo\xe3\x80\x80" "space"}) {
    INFO(name);
    EventBody body = test::grant_body(k, KeyRef{target.public_key(), name}, {Role::kImporter});
    CHECK_FALSE(check_entry(sign_raw(k, encode_body(body))).has_value());
  }
}

// ---- the envelope read in place -------------------------------------------------------------

// An envelope of `body_size` bytes of body and `signatures` signatures (random bytes: layout only).
SignedEvent random_envelope(size_t body_size, size_t signatures, std::mt19937_64& rng) {
  SignedEvent e;
  for (size_t i = 0; i < body_size; ++i) e.body.push_back(static_cast<uint8_t>(rng()));
  e.signatures.resize(signatures);
  for (auto& sig : e.signatures) {
    for (auto& b : sig.public_key) b = static_cast<uint8_t>(rng());
    for (auto& b : sig.signature) b = static_cast<uint8_t>(rng());
  }
  return e;
}

// Calls visit(changed) for every single-byte change of `message` (to 0, or by xor with a few
// masks), every change of one word by a small amount or in one of its fields, and the message
// one word longer and one word shorter.
void for_each_change(const Bytes& message, const std::function<void(const Bytes&)>& visit) {
  for (size_t pos = 0; pos < message.size(); ++pos) {
    for (int v : {0x00, 0x01, 0x80, 0xc3, 0xff}) {
      Bytes bad = message;
      bad[pos] ^= static_cast<uint8_t>(v == 0 ? bad[pos] : v);
      visit(bad);
    }
  }
  for (size_t w = 0; w < message.size() / 8; ++w) {
    for (int64_t delta : {int64_t{-8}, int64_t{-1}, int64_t{1}, int64_t{4}, int64_t{8},
                          int64_t{1} << 16, int64_t{1} << 32, int64_t{1} << 35,
                          int64_t{1} << 48}) {
      Bytes bad = message;
      set_word(bad, w, get_word(bad, w) + static_cast<uint64_t>(delta));
      visit(bad);
    }
  }
  Bytes longer = message;
  insert_word(longer, longer.size() / 8, 0);
  visit(longer);
  visit(Bytes(message.begin(), message.end() - 8));
}

// Whatever an in-place reading accepts among the changes of `message` must encode back to
// exactly the same bytes (so the full decoding, which compares with that encoding, would have
// accepted it too). Returns how many changed messages it accepted.
template <typename InLayout, typename Decode, typename Encode>
size_t changes_read_in_place(const Bytes& message, InLayout in_layout, Decode decode,
                             Encode encode) {
  size_t accepted = 0;
  for_each_change(message, [&](const Bytes& bad) {
    if (!in_layout(bad)) return;
    auto decoded = decode(bad);
    REQUIRE(decoded.has_value());
    CHECK(encode(*decoded) == bad);
    accepted += bad != message;
  });
  return accepted;
}

TEST_CASE("every envelope the encoder writes is read in place, to the same value",
          "[events][entry][layout]") {
  std::mt19937_64 rng(7);
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 40; ++n) sizes.push_back(n);
  for (size_t n : {255, 256, 257, 2048, 2049, 4095, 65000}) sizes.push_back(n);
  for (size_t body_size : sizes) {
    for (size_t signatures : {size_t{1}, size_t{2}, size_t{3}, kMaxSignatures}) {
      SignedEvent e = random_envelope(body_size, signatures, rng);
      Bytes bytes = encode_entry(e);
      INFO("body " << body_size << " bytes, " << signatures << " signatures");
      if (bytes.size() > kMaxEntryBytes) {
        CHECK_FALSE(entry_in_canonical_layout(bytes));
        continue;
      }
      CHECK(entry_in_canonical_layout(bytes));
      auto decoded = decode_entry(bytes);
      REQUIRE(decoded.has_value());
      CHECK(*decoded == e);
    }
  }
  // Not valid envelopes, so never read in place: no body, no signature, too many.
  CHECK_FALSE(entry_in_canonical_layout(encode_entry(random_envelope(0, 1, rng))));
  CHECK_FALSE(entry_in_canonical_layout(encode_entry(random_envelope(16, 0, rng))));
  CHECK_FALSE(
      entry_in_canonical_layout(encode_entry(random_envelope(16, kMaxSignatures + 1, rng))));
}

TEST_CASE("an envelope read in place is always the canonical encoding of what it holds",
          "[events][entry][layout]") {
  // Every change (for_each_change) of envelopes with bodies that do and do not fill their last
  // word.
  std::mt19937_64 rng(11);
  size_t accepted_changed = 0;
  for (size_t body_size : {5, 8, 13, 24}) {
    for (size_t signatures : {1, 2}) {
      accepted_changed +=
          changes_read_in_place(encode_entry(random_envelope(body_size, signatures, rng)),
                                entry_in_canonical_layout, decode_entry, encode_entry);
    }
  }
  CHECK(accepted_changed > 0);  // changes to the body and key bytes are still envelopes
}

// Manifest and observation bodies with texts of every length around a word boundary, with and
// without metadata, at claimed times that do and do not keep the second data word.
std::vector<EventBody> manifest_bodies(const SecretKey& k) {
  std::vector<EventBody> out;
  for (size_t n = 1; n <= 20; ++n) {
    for (const std::string& metadata : {std::string(), std::string(n % 5 + 1, 'm')}) {
      for (int64_t time : {int64_t{0}, int64_t{-1}, test::kTestTimeMs}) {
        ManifestText text{std::string(n, 'c'), metadata};
        EventBody body = test::manifest_body(k, text.canonical, text.metadata, time);
        out.push_back(body);
        body.payload = Observation{text};
        out.push_back(body);
      }
    }
  }
  out.push_back(test::manifest_body(k, test::environment_manifest_text(), {}, 7));
  out.push_back(test::observation_body(k, "sol-execbench"));
  return out;
}

TEST_CASE("every manifest and observation body the encoder writes is read in place, unchanged",
          "[events][entry][layout]") {
  const SecretKey k = test::test_key("example.org/test-author", 0x01);
  for (const EventBody& body : manifest_bodies(k)) {
    const Bytes bytes = encode_body(body);
    INFO(hex_encode(bytes));
    CHECK(body_in_canonical_layout(bytes));
    auto decoded = decode_body(bytes);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == body);
  }
  // Other kinds are never read in place; they get the full decoding.
  for (const EventBody& body : bodies_of_every_kind(k)) {
    if (body.kind() != EventKind::kManifest && body.kind() != EventKind::kObservation) {
      CHECK_FALSE(body_in_canonical_layout(encode_body(body)));
    }
  }
}

TEST_CASE("a body read in place is always the canonical encoding of what it holds",
          "[events][entry][layout]") {
  // As for the envelope, with texts that come to break a rule (a NUL inside, invalid UTF-8, a
  // missing NUL, non-zero padding).
  const SecretKey k = test::test_key("example.org/test-author", 0x01);
  size_t accepted_changed = 0;
  for (const EventBody& body : {test::manifest_body(k, "{\"ab\":1}", "{\"m\":1}", 5),
                                test::manifest_body(k, "{\"abcdefgh\":1}", {}, 0)}) {
    accepted_changed += changes_read_in_place(encode_body(body), body_in_canonical_layout,
                                              decode_body, encode_body);
  }
  CHECK(accepted_changed > 0);  // changes to the key and the text's letters are still bodies
}

TEST_CASE("check_entry rejects manifest texts the in-place reading leaves to the full decoding",
          "[events][entry]") {
  const SecretKey k = test::test_key("example.org/test-author", 0x01);
  const Bytes good = encode_body(test::manifest_body(k, "{\"ab\":1}", {}, 5));
  REQUIRE(good.size() % 8 == 0);
  auto with = [&](size_t pos, uint8_t value) {
    Bytes bad = good;
    bad[pos] = value;
    CHECK_FALSE(body_in_canonical_layout(bad));
    return rejection(sign_raw(k, bad));
  };
  const size_t start = good.size() - 16;  // {"ab":1} and its NUL: 9 bytes in two words
  CHECK_THAT(with(start + 2, 0x00), Contains("not valid UTF-8 text without NUL bytes"));
  CHECK_THAT(with(start + 2, 0xff), Contains("not valid UTF-8 text without NUL bytes"));
  CHECK_THAT(with(start + 8, 0x41), Contains("not a valid Cap'n Proto message"));  // no NUL
  CHECK_THAT(with(start + 9, 0x01), Contains("not in canonical form"));  // padding
}

TEST_CASE("check_entry rejects an envelope whose body is padded with a non-zero byte",
          "[events][entry]") {
  // Bodies are whole words, but the envelope's rule holds for any length it carries.
  std::mt19937_64 rng(3);
  Bytes entry = encode_entry(random_envelope(13, 1, rng));
  REQUIRE(entry_in_canonical_layout(entry));
  entry[24 + 13] = 0x01;  // the first padding byte after the body
  CHECK_FALSE(entry_in_canonical_layout(entry));
  CHECK_THAT(rejection(entry), Contains("entry envelope is not in canonical form"));
}

// ---- tampering ----------------------------------------------------------------------------

TEST_CASE("decode_entry_body gives what decode_entry then decode_body give, and the id",
          "[events][entry][layout]") {
  // The same body or the same error for stored entries in canonical layout, every single-byte
  // change of one (some leave it an envelope, some not), and an envelope of another layout.
  auto same = [](const Bytes& entry) {
    Digest id{};
    auto in_place = decode_entry_body(entry, id);
    auto whole = decode_entry(entry);
    Result<EventBody> expected =
        whole ? decode_body(whole->body) : Result<EventBody>(whole.error());
    REQUIRE(in_place.has_value() == expected.has_value());
    if (!expected) {
      CHECK(in_place.error().message() == expected.error().message());
      return false;
    }
    CHECK(*in_place == *expected);
    CHECK(id == event_id(whole->body));
    return true;
  };
  const SecretKey k = test::test_key("example.org/test-author", 0x01);
  for (const EventBody& body : manifest_bodies(k)) CHECK(same(test::signed_entry(k, body)));
  const Bytes entry = golden_bytes("entry.bin");
  CHECK(same(entry));
  size_t accepted = 0;
  for (size_t pos = 0; pos < entry.size(); ++pos) {
    Bytes changed = entry;
    changed[pos] ^= 0x5a;
    INFO("byte " << pos);
    accepted += same(changed);
  }
  CHECK(accepted > 0);  // changes to the signature bytes leave a decodable entry
  std::mt19937_64 rng(5);
  const Bytes other = encode_entry(random_envelope(16, 0, rng));  // not the canonical layout
  REQUIRE_FALSE(entry_in_canonical_layout(other));
  same(other);
}

TEST_CASE("check_entry rejects every single-bit and single-byte change of a stored entry",
          "[events][entry][tamper]") {
  const Bytes entry = golden_bytes("entry.bin");
  REQUIRE(check_entry(entry).has_value());
  std::vector<std::string> accepted;
  size_t tried = 0;
  auto attempt = [&](size_t pos, uint8_t value) {
    if (value == entry[pos]) return;
    Bytes bad = entry;
    bad[pos] = value;
    ++tried;
    auto checked = check_entry(bad);  // must neither crash nor accept
    if (checked.has_value()) {
      accepted.push_back("byte " + std::to_string(pos) + " set to " + std::to_string(value));
    } else if (checked.error().code() != Code::kRejected || checked.error().message().empty()) {
      accepted.push_back("byte " + std::to_string(pos) + ": rejection without a message");
    }
  };
  for (size_t pos = 0; pos < entry.size(); ++pos) {
    for (int bit = 0; bit < 8; ++bit) attempt(pos, entry[pos] ^ static_cast<uint8_t>(1u << bit));
    attempt(pos, 0x00);
    attempt(pos, 0xff);
  }
  INFO(tried << " changes tried");
  CHECK(tried > entry.size() * 8);
  CHECK(accepted == std::vector<std::string>{});
}

TEST_CASE("check_entry names the part of an entry that was tampered with",
          "[events][entry][tamper]") {
  // Byte classes of the worked example (events/FORMAT.md draws them).
  const Bytes entry = golden_bytes("entry.bin");
  struct Case {
    size_t pos;
    uint8_t xor_mask;
    const char* expect;
  };
  const Case cases[] = {
      {4, 0x01, "entry is not a valid Cap'n Proto message"},  // root: data section size
      {12, 0x08, "entry envelope is not in canonical form"},  // body length 264 -> 265
      {24 + 2, 0x01, "event body is not a valid Cap'n Proto message"},  // body root pointer
      {24 + 8, 0x01, "event schema version 0 is unknown"},    // schemaVersion
      {24 + 10, 0x08, "unknown kind 11"},                 // kind 3 -> 11
      {24 + 17, 0x01, "does not verify"},                 // claimedTimeMs
      {24 + 40, 0x01, "the first signature must be the author's"},  // body author
      {24 + 100, 0x01, "does not verify"},                // manifest text
      {288, 0x01, "entry is not a valid Cap'n Proto message"},  // signature list tag
      {312, 0x01, "the first signature must be the author's"},  // signature public key
      {344, 0x01, "signature 0 by key"},                  // signature R
      {407, 0x01, "signature 0 by key"},                  // signature S
  };
  for (const auto& c : cases) {
    Bytes bad = entry;
    bad[c.pos] ^= c.xor_mask;
    INFO("byte " << c.pos);
    CHECK_THAT(rejection(bad), Contains(c.expect));
  }
}

}  // namespace
}  // namespace evl
