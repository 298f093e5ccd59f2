// tests/support/foreign_log.h — a C2SP log that is not evledger's, for witness tests: its own
// Ed25519 key (not a ledger's log key), its own origin and an RFC 6962 tree of arbitrary
// leaves in memory, signing checkpoints and writing add-checkpoint requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/bytes.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "keys/witness_format.h"
#include "ledger/merkle.h"

namespace evl::test {

class ForeignLog {
 public:
  explicit ForeignLog(std::string origin, uint8_t seed = 7)
      : key_(make_key(std::move(origin), seed)) {}

  // Appends `n` leaves ("leaf <index>").
  void grow(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      tree_.append(leaf_hash(as_bytes("leaf " + std::to_string(tree_.size()))));
    }
  }

  // Appends one leaf of this text (a fork of a log that grew the usual leaves).
  void append_leaf(std::string_view text) { tree_.append(leaf_hash(as_bytes(text))); }

  uint64_t size() const { return tree_.size(); }
  const SecretKey& key() const { return key_; }
  VerifierKey vkey() const { return key_.verifier(); }

  Checkpoint checkpoint() const {
    return Checkpoint{key_.name(), tree_.size(), tree_.root(), {}};
  }
  std::string signed_checkpoint() const { return sign_checkpoint(checkpoint(), key_); }

  // The consistency proof from `old` to the current size (empty from 0 or at the size).
  std::vector<Digest> proof_from(uint64_t old) const {
    if (old == 0 || old == tree_.size()) return {};
    auto proof = prove_tree(tree_.size(), old, tree_);
    EVL_ASSERT(proof.has_value());
    return *proof;
  }

  // The add-checkpoint body for the current checkpoint, with a proof from `old`.
  std::string request(uint64_t old) const {
    return format_add_checkpoint_request({old, proof_from(old), signed_checkpoint()});
  }

 private:
  static SecretKey make_key(std::string origin, uint8_t seed) {
    Bytes bytes(32, seed);
    auto key = SecretKey::from_seed(std::move(origin), bytes);
    EVL_ASSERT(key.has_value());
    return std::move(key).value();
  }

  SecretKey key_;
  MemoryHashStore tree_;
};

// A witness's key: an Ed25519 key whose verifier key is taken under type 0x04.
inline SecretKey witness_key(std::string name, uint8_t seed = 42) {
  Bytes bytes(32, seed);
  auto key = SecretKey::from_seed(std::move(name), bytes);
  EVL_ASSERT(key.has_value());
  return std::move(key).value();
}

}  // namespace evl::test
