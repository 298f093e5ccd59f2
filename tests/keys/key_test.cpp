#include "keys/key.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "events/sha256.h"
#include "tests/support/note_examples.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::kC2spVkey;
using test::kGoSkey;
using test::kGoVkey;

// A verifier key of transparency-dev/formats' tests whose base64 holds a '+'.
constexpr std::string_view kPlusVkey = "TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6";

SecretKey test_key(const std::string& name, uint8_t fill) {
  auto key = SecretKey::from_seed(name, Bytes(32, fill));
  REQUIRE_OK(key);
  return std::move(key).value();
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::binary) << text;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

TEST_CASE("a verifier key formats and parses back to the same key", "[keys][key]") {
  for (std::string_view text : {kC2spVkey, kGoVkey, kPlusVkey}) {
    INFO(text);
    auto key = VerifierKey::parse(text);
    REQUIRE_OK(key);
    CHECK(key->to_string() == text);
    CHECK(VerifierKey::parse(std::string(text) + "\n").value() == *key);
  }
  SecretKey k = test_key("log.example/one", 1);
  CHECK(VerifierKey::parse(k.verifier().to_string()).value() == k.verifier());
}

TEST_CASE("the key id is SHA-256 of name, newline, 0x01 and the public key, cut to 4 bytes",
          "[keys][key]") {
  auto key = VerifierKey::parse(kC2spVkey);
  REQUIRE_OK(key);
  CHECK(key->id == KeyId{0x53, 0x0d, 0x90, 0x3a});
  Bytes preimage = to_bytes("example.com/foo\n");
  preimage.push_back(0x01);
  preimage.insert(preimage.end(), key->public_key.begin(), key->public_key.end());
  Digest d = sha256(preimage);
  CHECK(key_id("example.com/foo", key->public_key) == KeyId{d[0], d[1], d[2], d[3]});
}

TEST_CASE("a verifier key with a wrong id, type, name or encoding is refused", "[keys][key]") {
  auto wrong_id = VerifierKey::parse("example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k");
  REQUIRE_FALSE(wrong_id.has_value());
  CHECK_THAT(wrong_id.error().message(), Catch::Contains("expected 530d903a"));
  // The same key under type 0x04 (a cosigner key) is not a note verifier key.
  Bytes raw{0x04};
  PublicKey pk = VerifierKey::parse(kC2spVkey)->public_key;
  raw.insert(raw.end(), pk.begin(), pk.end());
  CHECK_FALSE(VerifierKey::parse("example.com/foo+530d903a+" + base64_encode(raw)).has_value());
  CHECK_FALSE(VerifierKey::parse("example.com/foo+530d90+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k").has_value());
  CHECK_FALSE(VerifierKey::parse("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2").has_value());
  CHECK_FALSE(VerifierKey::parse("example.com/foo+530d903a").has_value());
  CHECK_FALSE(VerifierKey::parse("+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k").has_value());
}

TEST_CASE("key names with a space, a control character or '+' are refused", "[keys][key]") {
  CHECK(check_key_name("example.com/log").is_ok());
  CHECK(check_key_name("ключ.example").is_ok());
  CHECK_FALSE(check_key_name("").is_ok());
  CHECK_FALSE(check_key_name("a b").is_ok());
  CHECK_FALSE(check_key_name("a+b").is_ok());
  CHECK_FALSE(check_key_name("a\nb").is_ok());
  CHECK_FALSE(check_key_name("a\x7f").is_ok());
  CHECK_FALSE(check_key_name("a\xC2\xA0" "b").is_ok());  // U+00A0: Go's notes refuse it too
  CHECK_FALSE(check_key_name("a\xE3\x80\x80" "b").is_ok());
  CHECK_FALSE(check_key_name("a\xFF").is_ok());
  CHECK_FALSE(SecretKey::from_seed("a b", Bytes(32, 1)).has_value());
}

TEST_CASE("Go's example secret key parses and gives its verifier key", "[keys][key]") {
  auto key = SecretKey::parse(kGoSkey);
  REQUIRE_OK(key);
  CHECK(key->name() == "PeterNeumann");
  CHECK(hex_encode(key->id()) == "c74f20a3");
  CHECK(key->verifier().to_string() == kGoVkey);
}

TEST_CASE("a secret key file round-trips through save and load", "[keys][key]") {
  test::TempDir dir;
  const std::string path = dir.str() + "/log.key";
  SecretKey key = test_key("log.example/rt", 2);
  REQUIRE(key.save(path).is_ok());
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string text = test::read_file(path);
  CHECK(text.rfind("PRIVATE+KEY+log.example/rt+" + hex_encode(key.id()) + "+", 0) == 0);
  CHECK(text.back() == '\n');

  auto loaded = SecretKey::load(path);
  REQUIRE_OK(loaded);
  CHECK(loaded->name() == key.name());
  CHECK(loaded->public_key() == key.public_key());
  CHECK(loaded->sign(as_bytes("m")) == key.sign(as_bytes("m")));
  CHECK(loaded->verifier().verify(as_bytes("m"), key.sign(as_bytes("m"))));

  const std::string go_path = dir.str() + "/go.key";
  write_file(go_path, std::string(kGoSkey) + "\n", 0600);
  auto go = SecretKey::load(go_path);
  REQUIRE_OK(go);
  CHECK(go->verifier().to_string() == kGoVkey);

  auto vk = load_verifier_key(dir.str() + "/absent");
  CHECK_FALSE(vk.has_value());
  write_file(dir.str() + "/log.vkey", key.verifier().to_string() + "\nignored\n", 0644);
  CHECK(load_verifier_key(dir.str() + "/log.vkey").value() == key.verifier());
  CHECK(load_verifier_key(std::string(kC2spVkey)).value().name == "example.com/foo");
}

TEST_CASE("a secret key file readable by group or others is refused with the chmod to run",
          "[keys][key]") {
  test::TempDir dir;
  const std::string path = dir.str() + "/open.key";
  write_file(path, std::string(kGoSkey) + "\n", 0644);
  auto key = SecretKey::load(path);
  REQUIRE_FALSE(key.has_value());
  CHECK(key.error().code() == Code::kRejected);
  CHECK_THAT(key.error().message(), Catch::Contains("0644") &&
                                        Catch::Contains("chmod 600 " + path));
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  CHECK_FALSE(SecretKey::load(path).has_value());
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  CHECK(SecretKey::load(path).has_value());
  CHECK(SecretKey::load(dir.str() + "/absent.key").error().code() == Code::kIo);
}

TEST_CASE("a secret key whose id does not match its key is refused", "[keys][key]") {
  auto key = SecretKey::parse(
      "PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz");
  REQUIRE_FALSE(key.has_value());
  CHECK_THAT(key.error().message(), Catch::Contains("expected c74f20a3"));
  // The same seed under another name has another id.
  CHECK_FALSE(SecretKey::parse(
                  "PRIVATE+KEY+PaulNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
                  .has_value());
  CHECK_FALSE(SecretKey::parse(std::string(kGoVkey)).has_value());
  CHECK_FALSE(
      SecretKey::parse("PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr").has_value());

  test::TempDir dir;
  const std::string path = dir.str() + "/wrong.key";
  write_file(path, "PRIVATE+KEY+PeterNeumann+00000000+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n",
             0600);
  auto loaded = SecretKey::load(path);
  REQUIRE_FALSE(loaded.has_value());
  CHECK_THAT(loaded.error().message(), Catch::Contains(path) && Catch::Contains("key id"));
}

TEST_CASE("key files edited on Windows, ending in CR LF, load as the same keys", "[keys][key]") {
  test::TempDir dir;
  write_file(dir.str() + "/go.key", std::string(kGoSkey) + "\r\n", 0600);
  auto secret = SecretKey::load(dir.str() + "/go.key");
  REQUIRE_OK(secret);
  CHECK(secret->verifier().to_string() == kGoVkey);
  write_file(dir.str() + "/go.vkey", std::string(kGoVkey) + "\r\nignored\r\n", 0644);
  auto verifier = load_verifier_key(dir.str() + "/go.vkey");
  REQUIRE_OK(verifier);
  CHECK(verifier->to_string() == kGoVkey);
  // A CR anywhere else is still wrong, and said to be.
  write_file(dir.str() + "/cr.vkey", std::string(kGoVkey) + "\r\r\n", 0644);
  CHECK_FALSE(load_verifier_key(dir.str() + "/cr.vkey").has_value());
}

TEST_CASE("a verifier key argument that is neither a file nor a key is a path that cannot be "
          "read", "[keys][key]") {
  test::TempDir dir;
  auto typo = load_verifier_key(dir.str() + "/lg.vkey");
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().code() == Code::kIo);
  CHECK_THAT(typo.error().message(),
             Catch::Contains("cannot read verifier key file " + dir.str() + "/lg.vkey") &&
                 Catch::Contains("No such file or directory"));
  // Shaped like a key, it is judged as a key.
  auto bad_key = load_verifier_key("name+00000000+AQ==");
  REQUIRE_FALSE(bad_key.has_value());
  CHECK(bad_key.error().code() == Code::kRejected);
}

TEST_CASE("a key file larger than any key is refused before it is read", "[keys][key]") {
  test::TempDir dir;
  write_file(dir.str() + "/big.vkey",
             std::string(kGoVkey) + "\n" + std::string(kMaxKeyFileBytes, '#'), 0644);
  auto key = load_verifier_key(dir.str() + "/big.vkey");
  REQUIRE_FALSE(key.has_value());
  CHECK_THAT(key.error().message(), Catch::Contains("the limit for verifier key files"));
}

TEST_CASE("save refuses to overwrite an existing file", "[keys][key]") {
  test::TempDir dir;
  const std::string path = dir.str() + "/k.key";
  SecretKey first = test_key("first.example", 3);
  SecretKey second = test_key("second.example", 4);
  REQUIRE(first.save(path).is_ok());
  Status again = second.save(path);
  REQUIRE_FALSE(again.is_ok());
  CHECK_THAT(again.message(), Catch::Contains("refusing to overwrite"));
  CHECK(SecretKey::load(path).value().name() == "first.example");
}

TEST_CASE("a moved-from secret key leaves the key with its new owner", "[keys][key]") {
  SecretKey a = test_key("move.example", 5);
  PublicKey pk = a.public_key();
  SecretKey b = std::move(a);
  CHECK(b.public_key() == pk);
  SecretKey c = test_key("other.example", 6);
  c = std::move(b);
  CHECK(c.verifier().verify(as_bytes("x"), c.sign(as_bytes("x"))));
}

}  // namespace
}  // namespace evl
