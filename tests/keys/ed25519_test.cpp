// Ed25519 edge cases (vectors/ed25519/ed25519vectors.json, from C2SP/CCTV): what evledger's
// verifier, libsodium 1.0.18's crypto_sign_verify_detached, accepts.
//
// Policy, asserted on every vector: a signature is accepted exactly when none of its flags is
// low_order_A, low_order_R, non_canonical_A, non_canonical_R or low_order_residue; the flags
// low_order_component_A and low_order_component_R alone (mixed-order points that no blocklist
// can catch) are accepted. libsodium refuses any small-order or non-canonical public key and any
// small-order R (a blocklist that ignores the sign bit, so it also covers the non-canonical
// encodings of those points), compares the recomputed R with the signature's bytes (so a
// non-canonical R fails), and checks the cofactorless equation (so a low-order residue fails).
// This is stricter than Go's crypto/ed25519 and ref10, which accept low-order points: a note
// whose signature relies on a low-order key or R verifies in Go but not here; no honest signer
// produces one. It matches ed25519-dalek's verify_strict.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "events/bytes.h"
#include "events/dsse.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

bool expected_accept(const std::set<std::string>& flags) {
  for (const char* refused : {"low_order_A", "low_order_R", "non_canonical_A", "non_canonical_R",
                              "low_order_residue"}) {
    if (flags.count(refused) != 0) return false;
  }
  return true;
}

bool verify_hex(const std::string& key_hex, const std::string& sig_hex, std::string_view msg) {
  Bytes key = hex_decode(key_hex).value();
  Bytes sig = hex_decode(sig_hex).value();
  REQUIRE(key.size() == 32);
  PublicKey pk;
  std::copy(key.begin(), key.end(), pk.begin());
  return ed25519_verify(pk, as_bytes(msg), sig);
}

TEST_CASE("RFC 8032 test 1 verifies and a low-order key is refused (inline known answers)",
          "[keys][ed25519]") {
  const std::string pk = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  const std::string sig =
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701c"
      "f9b46bd25bf5f0595bbe24655141438e7a100b";
  CHECK(verify_hex(pk, sig, ""));
  CHECK_FALSE(verify_hex(pk, sig, "x"));
  // Vector 0 of ed25519vectors.json: a low-order (order 4) key and an all-zero signature.
  CHECK_FALSE(verify_hex(std::string(64, '0'), std::string(128, '0'), "ed25519vectors 3"));
  // A 63-byte signature is refused, not read past.
  CHECK_FALSE(verify_hex(pk, sig.substr(0, 126), ""));
}

TEST_CASE("libsodium's verdict on every ed25519vectors edge case follows the stated policy",
          "[keys][ed25519]") {
  auto dir = test::shared_dir();
  if (!dir) {
    WARN("../shared is absent: vectors/ed25519/ed25519vectors.json is not checked");
    return;
  }
  auto vectors =
      nlohmann::json::parse(test::read_file(*dir / "vectors" / "ed25519" / "ed25519vectors.json"));
  REQUIRE(vectors.size() == 914);
  size_t accepted = 0;
  for (const auto& v : vectors) {
    std::set<std::string> flags;
    std::string flag_text;
    for (const auto& f : v.at("flags")) {
      flags.insert(f.get<std::string>());
      flag_text += f.get<std::string>() + " ";
    }
    INFO("vector " << v.at("number").get<int>() << " flags: " << flag_text);
    bool ok = verify_hex(v.at("key").get<std::string>(), v.at("sig").get<std::string>(),
                         v.at("msg").get<std::string>());
    CHECK(ok == expected_accept(flags));
    accepted += ok;
  }
  // Known answer for libsodium 1.0.18: one clean vector, 7 with a mixed-order A, 35 with
  // mixed-order A and R.
  CHECK(accepted == 43);
}

}  // namespace
}  // namespace evl
