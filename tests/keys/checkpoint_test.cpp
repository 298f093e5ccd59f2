#include "keys/checkpoint.h"

#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace evl {
namespace {

// The checkpoint body of the C2SP tlog-checkpoint and tlog-cosignature examples.
constexpr std::string_view kBody =
    "example.com/behind-the-sofa\n"
    "20852163\n"
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
constexpr uint64_t kTime = 1679315147;  // the time of the spec's cosigned-message example

// Known answers computed independently of evledger (Python's `cryptography` Ed25519 and
// hashlib): a log key with seed 01 02 … 20, a witness key with seed 65 66 … 84, the log's
// signature of kBody and the witness's cosignature of it at kTime.
constexpr std::string_view kLogSkey =
    "PRIVATE+KEY+example.com/behind-the-sofa+40a4258c+"
    "AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g";
constexpr std::string_view kLogVkey =
    "example.com/behind-the-sofa+40a4258c+AXm1Vi6P5lT5QHixEuipi6eQH4U65pW+1+DjkQutBJZk";
constexpr std::string_view kWitnessSkey =
    "PRIVATE+KEY+witness.example.com/w1+089f1748+AWVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOE";
constexpr std::string_view kWitnessCosignerKey =
    "witness.example.com/w1+c59c640a+BNop6VsC4A/6FWRXdfsdK6IioZQzle6ga5TiwFe3vmnQ";
constexpr std::string_view kLogLine =
    "— example.com/behind-the-sofa "
    "QKQljMp7dP7daku7LgmV6OS6I/IHOAQxdVQb1vrHHUecHJK3AlPvjos8bxwmu/jMXRefJebPVQ57sQ/OVPxd5sw5/Qs=\n";
constexpr std::string_view kCosignatureLine =
    "— witness.example.com/w1 "
    "xZxkCgAAAABkGFDL4INZETA67y7zkrCPebQS7rDXgA3MMR4pa2ovzjBjkA2y0R7kdw36k3vqIwbGNLbprfWSAyOFm04HJ5g3"
    "08gTAg==\n";

SecretKey secret(std::string_view text) {
  auto key = SecretKey::parse(text);
  REQUIRE_OK(key);
  return std::move(key).value();
}

CosignerKey cosigner(std::string_view text) {
  auto key = CosignerKey::parse(text);
  REQUIRE_OK(key);
  return *key;
}

Checkpoint example() {
  auto cp = parse_checkpoint_body(kBody);
  REQUIRE_OK(cp);
  return *cp;
}

std::string signed_example() { return std::string(kBody) + "\n" + std::string(kLogLine); }

TEST_CASE("checkpoint_body writes origin, decimal size and base64 root", "[keys][checkpoint]") {
  Checkpoint cp = example();
  CHECK(cp.origin == "example.com/behind-the-sofa");
  CHECK(cp.size == 20852163);
  CHECK(base64_encode(cp.root) == "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=");
  CHECK(cp.extensions.empty());
  CHECK(checkpoint_body(cp) == kBody);

  Checkpoint empty{"log.example", 0, sha256(ByteView()), {}};
  CHECK(checkpoint_body(empty) ==
        "log.example\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n");
  CHECK(parse_checkpoint_body(checkpoint_body(empty)).value() == empty);
}

TEST_CASE("parse_checkpoint_body keeps extension lines and round-trips them",
          "[keys][checkpoint]") {
  std::string body = std::string(kBody) + "ext one\nrekor.example - 42\n";
  auto cp = parse_checkpoint_body(body);
  REQUIRE_OK(cp);
  CHECK(cp->extensions == std::vector<std::string>{"ext one", "rekor.example - 42"});
  CHECK(checkpoint_body(*cp) == body);
}

TEST_CASE("parse_checkpoint_body is strict", "[keys][checkpoint]") {
  const std::string root = "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=";
  struct Case {
    std::string what;
    std::string body;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"empty", "", "newline"},
      {"no final newline", std::string(kBody.substr(0, kBody.size() - 1)), "newline"},
      {"two lines", "o\n1\n", "three lines"},
      {"empty origin", "\n1\n" + root + "\n", "origin"},
      {"leading zero", "o\n01\n" + root + "\n", "leading zeros"},
      {"plus sign", "o\n+1\n" + root + "\n", "tree size"},
      {"minus sign", "o\n-1\n" + root + "\n", "tree size"},
      {"space in size", "o\n1 \n" + root + "\n", "tree size"},
      {"empty size", "o\n\n" + root + "\n", "tree size"},
      {"size over 2^64-1", "o\n18446744073709551616\n" + root + "\n", "tree size"},
      {"hex size", "o\n0x10\n" + root + "\n", "tree size"},
      {"31-byte root", "o\n1\n" + base64_encode(Bytes(31, 1)) + "\n", "32 bytes"},
      {"33-byte root", "o\n1\n" + base64_encode(Bytes(33, 1)) + "\n", "32 bytes"},
      {"unpadded root", "o\n1\n" + root.substr(0, root.size() - 1) + "\n", "32 bytes"},
      {"url-safe root", "o\n1\n" + std::string(43, '_') + "=\n", "32 bytes"},
      {"empty extension line", std::string(kBody) + "\n", "extension line 4"},
      {"carriage return", "o\r\n1\n" + root + "\n", "control character"},
      {"invalid UTF-8", "o\xFF\n1\n" + root + "\n", "UTF-8"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto cp = parse_checkpoint_body(c.body);
    REQUIRE_FALSE(cp.has_value());
    CHECK(cp.error().code() == Code::kRejected);
    CHECK_THAT(cp.error().message(), Catch::Contains(c.expect));
  }
  auto max = parse_checkpoint_body("o\n18446744073709551615\n" + root + "\n");
  REQUIRE_OK(max);
  CHECK(max->size == std::numeric_limits<uint64_t>::max());
}

TEST_CASE("sign_checkpoint matches an independently computed note and open_checkpoint opens it",
          "[keys][checkpoint]") {
  SecretKey log = secret(kLogSkey);
  CHECK(log.verifier().to_string() == kLogVkey);
  std::string note = sign_checkpoint(example(), log);
  CHECK(note == signed_example());

  auto log_vkey = VerifierKey::parse(kLogVkey);
  REQUIRE_OK(log_vkey);
  auto cp = open_checkpoint(note, *log_vkey);
  REQUIRE_OK(cp);
  CHECK(*cp == example());
}

TEST_CASE("open_checkpoint rejects another key, an altered body and a foreign origin",
          "[keys][checkpoint]") {
  VerifierKey log = secret(kLogSkey).verifier();
  SecretKey other = SecretKey::from_seed("example.com/behind-the-sofa", Bytes(32, 9)).value();

  auto by_other = open_checkpoint(sign_checkpoint(example(), other), log);
  REQUIRE_FALSE(by_other.has_value());
  CHECK_THAT(by_other.error().message(), Catch::Contains("no signature by a known key"));

  std::string altered = signed_example();
  altered.replace(altered.find("20852163"), 8, "20852164");
  auto bad = open_checkpoint(altered, log);
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message(), Catch::Contains("does not verify"));

  // A key named otherwise signs a checkpoint of our origin: the note verifies, the origin does
  // not match the key's name.
  SecretKey misnamed = SecretKey::from_seed("mirror.example", Bytes(32, 10)).value();
  auto note = sign_note(kBody, misnamed);
  REQUIRE_OK(note);
  auto foreign = open_checkpoint(*note, misnamed.verifier());
  REQUIRE_FALSE(foreign.has_value());
  CHECK_THAT(foreign.error().message(), Catch::Contains("is not the log key's name"));

  auto not_checkpoint = sign_note("example.com/behind-the-sofa\n", secret(kLogSkey));
  REQUIRE_OK(not_checkpoint);
  CHECK_FALSE(open_checkpoint(*not_checkpoint, log).has_value());
}

TEST_CASE("a cosignature matches an independently computed known answer",
          "[keys][checkpoint][cosignature]") {
  SecretKey witness = secret(kWitnessSkey);
  CHECK(cosignature_message(example(), kTime) ==
        "cosignature/v1\ntime 1679315147\n" + std::string(kBody));
  NoteSignature sig = cosign_checkpoint(example(), witness, kTime);
  CHECK(note_signature_line(sig) == kCosignatureLine);
  CHECK(hex_encode(sig.id) == "c59c640a");
  CHECK(sig.signature.size() == 72);

  auto time = verify_cosignature(example(), sig, cosigner(kWitnessCosignerKey));
  REQUIRE_OK(time);
  CHECK(*time == kTime);
}

TEST_CASE("cosigner keys use type 0x04 in the key id and the key text", "[keys][cosignature]") {
  SecretKey witness = secret(kWitnessSkey);
  CosignerKey key = CosignerKey::of(witness.name(), witness.public_key());
  CHECK(key.to_string() == kWitnessCosignerKey);
  CHECK(key.id != witness.id());  // the same Ed25519 key as a 0x01 note key has another id
  Bytes preimage = to_bytes("witness.example.com/w1\n");
  preimage.push_back(0x04);
  preimage.insert(preimage.end(), witness.public_key().begin(), witness.public_key().end());
  Digest d = sha256(preimage);
  CHECK(key.id == KeyId{d[0], d[1], d[2], d[3]});
  CHECK(cosigner(key.to_string()) == key);

  // A cosigner key of transparency-dev/formats' tests (a real witness).
  CHECK(cosigner("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2").name ==
        "remora.n621.de");

  auto as_note_key = CosignerKey::parse(witness.verifier().to_string());
  REQUIRE_FALSE(as_note_key.has_value());
  CHECK_THAT(as_note_key.error().message(), Catch::Contains("0x04"));
  CHECK_FALSE(CosignerKey::parse("remora.n621.de+da77ade8+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
                  .has_value());
  CHECK_FALSE(CosignerKey::parse("remora.n621.de+da77ade7").has_value());
  CHECK_FALSE(CosignerKey::parse("a b+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
                  .has_value());
}

TEST_CASE("verify_cosignature rejects what the cosigner did not sign", "[keys][cosignature]") {
  SecretKey witness = secret(kWitnessSkey);
  CosignerKey key = cosigner(kWitnessCosignerKey);
  NoteSignature sig = cosign_checkpoint(example(), witness, kTime);

  Checkpoint bigger = example();
  bigger.size += 1;
  CHECK_FALSE(verify_cosignature(bigger, sig, key).has_value());

  Checkpoint extended = example();
  extended.extensions.push_back("extension");
  CHECK_FALSE(verify_cosignature(extended, sig, key).has_value());  // extensions are signed
  CHECK(verify_cosignature(extended, cosign_checkpoint(extended, witness, kTime), key)
            .has_value());

  NoteSignature later = sig;
  later.signature[7] ^= 1;  // the time
  auto t = verify_cosignature(example(), later, key);
  REQUIRE_FALSE(t.has_value());
  CHECK_THAT(t.error().message(), Catch::Contains("witness.example.com/w1+c59c640a"));

  NoteSignature huge = sig;
  huge.signature[0] = 0x80;
  CHECK_THAT(verify_cosignature(example(), huge, key).error().message(),
             Catch::Contains("2^63-1"));

  NoteSignature truncated = sig;
  truncated.signature.pop_back();
  CHECK_THAT(verify_cosignature(example(), truncated, key).error().message(),
             Catch::Contains("8-byte time"));

  // The log's own (0x01) signature line is not a cosignature even with the same key.
  SecretKey log = secret(kLogSkey);
  CosignerKey log_as_cosigner = CosignerKey::of(log.name(), log.public_key());
  NoteSignature log_sig = parse_note(signed_example()).value().signatures.at(0);
  CHECK_THAT(verify_cosignature(example(), log_sig, log_as_cosigner).error().message(),
             Catch::Contains("another key"));
}

TEST_CASE("open_cosigned_checkpoint verifies known cosigners and ignores unknown ones",
          "[keys][cosignature]") {
  VerifierKey log = secret(kLogSkey).verifier();
  CosignerKey witness = cosigner(kWitnessCosignerKey);
  SecretKey stranger = SecretKey::from_seed("stranger.example", Bytes(32, 11)).value();
  std::string note = signed_example() + std::string(kCosignatureLine) +
                     note_signature_line(cosign_checkpoint(example(), stranger, kTime + 1));

  CosignerKey known[] = {witness};
  auto opened = open_cosigned_checkpoint(note, log, known);
  REQUIRE_OK(opened);
  CHECK(opened->checkpoint == example());
  REQUIRE(opened->cosignatures.size() == 1);
  CHECK(opened->cosignatures[0].name == "witness.example.com/w1");
  CHECK(opened->cosignatures[0].time == kTime);

  CHECK(open_cosigned_checkpoint(note, log, {}).value().cosignatures.empty());
  CHECK(open_checkpoint(note, log).has_value());  // cosignatures ride along as unknown keys

  // A known cosigner whose signature fails rejects the checkpoint, naming the cosigner.
  SecretKey impostor = SecretKey::from_seed("witness.example.com/w1", Bytes(32, 12)).value();
  NoteSignature forged = cosign_checkpoint(example(), impostor, kTime);
  forged.id = witness.id;
  std::string bad = signed_example() + note_signature_line(forged);
  auto rejected_note = open_cosigned_checkpoint(bad, log, known);
  REQUIRE_FALSE(rejected_note.has_value());
  CHECK_THAT(rejected_note.error().message(),
             Catch::Contains("witness.example.com/w1+c59c640a") &&
                 Catch::Contains("does not verify"));
}

}  // namespace
}  // namespace evl
