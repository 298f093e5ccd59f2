// tests/fuzz/fuzz_keys.h — the fixed keys that the fuzz targets verify with and that
// make_seeds signs the seed corpora with, so that seeds carry signatures that verify and the
// fuzzer starts from inside the accepting paths.
//
// Thread safety: each function builds its keys once; the keys are then only read.
#pragma once

#include <vector>

#include "keys/checkpoint.h"
#include "keys/key.h"
#include "tests/support/fixtures.h"

namespace evl::fuzz {

// The log key of tests/support/fixtures.h's Cast: its name is the origin.
inline const SecretKey& log_key() {
  static const SecretKey key = test::Cast().log;
  return key;
}

// Two witnesses that cosign the seeds' checkpoints.
inline const std::vector<SecretKey>& witness_keys() {
  static const std::vector<SecretKey> keys = [] {
    std::vector<SecretKey> out;
    out.push_back(test::test_key("witness-a.example.org", 0x31));
    out.push_back(test::test_key("witness-b.example.org", 0x32));
    return out;
  }();
  return keys;
}

inline const std::vector<CosignerKey>& cosigner_keys() {
  static const std::vector<CosignerKey> keys = [] {
    std::vector<CosignerKey> out;
    for (const auto& k : witness_keys()) out.push_back(CosignerKey::of(k.name(), k.public_key()));
    return out;
  }();
  return keys;
}

}  // namespace evl::fuzz
