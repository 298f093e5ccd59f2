#include "ledger/proof_format.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"

#include "tests/support/test_support.h"

namespace evl {
namespace {

using Catch::Contains;

const std::string kOrigin(test::kTestOrigin);

SecretKey log_key() { return test::test_key(kOrigin, 0x21); }
// The same name as the log key, another key pair: a signature by it is not the log's.
SecretKey impostor_key() { return test::test_key(kOrigin, 0x22); }

Hash leaf_of(uint64_t i) { return leaf_hash(as_bytes("entry " + std::to_string(i))); }

MemoryHashStore tree(uint64_t size, uint64_t salt = 0) {
  MemoryHashStore store;
  for (uint64_t i = 0; i < size; ++i) store.append(leaf_of(i + salt * 1000));
  return store;
}

std::string checkpoint_note(const MemoryHashStore& store, uint64_t size, const SecretKey& key) {
  auto root = tree_hash(size, store);
  REQUIRE_OK(root);
  return sign_checkpoint(Checkpoint{key.name(), size, *root, {}}, key);
}

InclusionProofDoc inclusion(const MemoryHashStore& store, uint64_t index, uint64_t size,
                            const SecretKey& key) {
  auto hashes = prove_record(size, index, store);
  REQUIRE_OK(hashes);
  return InclusionProofDoc{index, *hashes, checkpoint_note(store, size, key), {}, {}};
}

ConsistencyProofDoc consistency(const MemoryHashStore& store, uint64_t from, uint64_t to,
                                const SecretKey& key) {
  auto hashes = prove_tree(to, from, store);
  REQUIRE_OK(hashes);
  return ConsistencyProofDoc{from, to, *hashes, checkpoint_note(store, to, key)};
}

std::string replace_once(std::string text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string rejection(std::string_view text) {
  auto proof = parse_tlog_proof(text);
  REQUIRE_FALSE(proof.has_value());
  CHECK(proof.error().code() == Code::kRejected);
  return proof.error().message();
}

std::string json_rejection(std::string_view text) {
  auto proof = parse_proof_json(text);
  REQUIRE_FALSE(proof.has_value());
  CHECK(proof.error().code() == Code::kRejected);
  return proof.error().message();
}

Hash flip_bit(Hash h, size_t bit) {
  h[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  return h;
}

// ---- tlog-proof ----------------------------------------------------------------------------

TEST_CASE("a tlog-proof is the header, the index, the hashes, a blank line and the checkpoint",
          "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(5);
  InclusionProofDoc proof = inclusion(store, 2, 5, key);
  REQUIRE(proof.hashes.size() == 3);
  std::string expected = "c2sp.org/tlog-proof@v1\nindex 2\n" + base64_encode(proof.hashes[0]) +
                         "\n" + base64_encode(proof.hashes[1]) + "\n" +
                         base64_encode(proof.hashes[2]) + "\n\n" + proof.checkpoint_note;
  CHECK(format_tlog_proof(proof) == expected);
  CHECK(proof.checkpoint_note.starts_with(kOrigin + "\n5\n"));
}

TEST_CASE("a tlog-proof round-trips through format and parse", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(13);
  for (uint64_t index : {0, 1, 6, 12}) {
    InclusionProofDoc proof = inclusion(store, index, 13, key);
    if (index == 6) proof.extra = to_bytes("opaque context");
    std::string text = format_tlog_proof(proof);
    auto parsed = parse_tlog_proof(text);
    REQUIRE_OK(parsed);
    CHECK(*parsed == proof);
    CHECK(format_tlog_proof(*parsed) == text);
  }
}

TEST_CASE("a tlog-proof carries its extra data on the second line", "[ledger][proof]") {
  SecretKey key = log_key();
  InclusionProofDoc proof = inclusion(tree(3), 0, 3, key);
  proof.extra = to_bytes("age-v1.2.1");
  std::string text = format_tlog_proof(proof);
  CHECK(text.starts_with("c2sp.org/tlog-proof@v1\nextra YWdlLXYxLjIuMQ==\nindex 0\n"));
}

TEST_CASE("a tlog-proof in a one-entry tree has no hash lines", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(1);
  InclusionProofDoc proof = inclusion(store, 0, 1, key);
  std::string text = format_tlog_proof(proof);
  CHECK(text.starts_with("c2sp.org/tlog-proof@v1\nindex 0\n\n" + kOrigin + "\n1\n"));
  auto parsed = parse_tlog_proof(text);
  REQUIRE_OK(parsed);
  CHECK(parsed->hashes.empty());
  auto verified = verify_inclusion_proof(*parsed, leaf_of(0), key.verifier());
  REQUIRE_OK(verified);
}

TEST_CASE("a tlog-proof without its header is rejected", "[ledger][proof]") {
  std::string text = format_tlog_proof(inclusion(tree(4), 1, 4, log_key()));
  CHECK_THAT(rejection(text.substr(text.find('\n') + 1)),
             Contains("line 1 must be 'c2sp.org/tlog-proof@v1'"));
  CHECK_THAT(rejection(replace_once(text, "@v1", "@v2")), Contains("line 1 must be"));
  CHECK_THAT(rejection(" " + text), Contains("line 1 must be"));
}

TEST_CASE("a tlog-proof with a malformed index line is rejected", "[ledger][proof]") {
  std::string text = format_tlog_proof(inclusion(tree(4), 1, 4, log_key()));
  for (std::string_view bad : {"index 01", "index -1", "index +1", "index  1", "index 1 ",
                               "index", "index ", "Index 1", "index 18446744073709551616",
                               "index 0x1"}) {
    INFO(bad);
    CHECK_THAT(rejection(replace_once(text, "index 1", bad)),
               Contains("line 2: expected 'index N'"));
  }
  std::string no_index = replace_once(text, "index 1\n", "");
  CHECK_THAT(rejection(no_index), Contains("line 2: expected 'index N'"));
  std::string only_header = "c2sp.org/tlog-proof@v1\n\n" + text.substr(text.find("\n\n") + 2);
  CHECK_THAT(rejection(only_header), Contains("no 'index N' line"));
}

TEST_CASE("a tlog-proof hash that is not base64 of 32 bytes is rejected", "[ledger][proof]") {
  InclusionProofDoc proof = inclusion(tree(4), 1, 4, log_key());
  std::string text = format_tlog_proof(proof);
  std::string second = base64_encode(proof.hashes[1]);
  CHECK_THAT(rejection(replace_once(text, second, "not base64!")),
             Contains("line 4 (proof hash 2) is not standard padded base64"));
  CHECK_THAT(rejection(replace_once(text, second, second.substr(0, 43))),
             Contains("proof hash 2) is not standard padded base64"));
  Bytes short_hash(31, 0xab);
  CHECK_THAT(rejection(replace_once(text, second, base64_encode(short_hash))),
             Contains("proof hash 2) is 31 bytes"));
  Bytes long_hash(33, 0xab);
  CHECK_THAT(rejection(replace_once(text, second, base64_encode(long_hash))),
             Contains("proof hash 2) is 33 bytes"));
}

TEST_CASE("a tlog-proof without the blank line before the checkpoint is rejected",
          "[ledger][proof]") {
  std::string text = format_tlog_proof(inclusion(tree(4), 1, 4, log_key()));
  std::string joined = replace_once(text, "=\n\n", "=\n");
  CHECK_THAT(rejection(joined),
             Contains("no blank line between the proof hashes and the checkpoint"));
  CHECK_THAT(rejection(text.substr(0, text.find("\n\n") + 1)), Contains("no blank line"));
  std::string two_blank_lines = replace_once(text, "=\n\n", "=\n\n\n");
  CHECK_THAT(rejection(two_blank_lines), Contains("tlog-proof checkpoint"));
}

TEST_CASE("a tlog-proof with anything after its checkpoint's signatures is rejected",
          "[ledger][proof]") {
  std::string text = format_tlog_proof(inclusion(tree(4), 1, 4, log_key()));
  CHECK_THAT(rejection(text + "trailing garbage\n"), Contains("tlog-proof checkpoint") &&
                                                         Contains("em dash"));
  CHECK_THAT(rejection(text + "x"), Contains("tlog-proof checkpoint"));
  CHECK_THAT(rejection(text + "\n"), Contains("tlog-proof checkpoint"));
  std::string cut = text.substr(0, text.size() - 1);
  CHECK_THAT(rejection(cut), Contains("must end with signature lines"));
}

TEST_CASE("a tlog-proof whose checkpoint part is not a checkpoint is rejected", "[ledger][proof]") {
  std::string text = format_tlog_proof(inclusion(tree(4), 1, 4, log_key()));
  CHECK_THAT(rejection(replace_once(text, "\n4\n", "\nfour\n")),
             Contains("tlog-proof checkpoint: checkpoint tree size"));
  std::string head = text.substr(0, text.find("\n\n") + 2);
  CHECK_THAT(rejection(head), Contains("tlog-proof checkpoint"));
}

TEST_CASE("a tlog-proof with carriage returns, an empty extra line or too many hashes is rejected",
          "[ledger][proof]") {
  InclusionProofDoc proof = inclusion(tree(4), 1, 4, log_key());
  std::string text = format_tlog_proof(proof);
  CHECK_THAT(rejection(replace_once(text, "index 1\n", "index 1\r\n")),
             Contains("line 2 has a carriage return"));
  CHECK_THAT(rejection(replace_once(text, "@v1\n", "@v1\nextra \n")),
             Contains("line 2: the extra line is empty"));
  CHECK_THAT(rejection(replace_once(text, "@v1\n", "@v1\nextra %%%\n")),
             Contains("line 2: the extra data is not standard padded base64"));
  proof.hashes.assign(kMaxProofHashes + 1, proof.hashes[0]);
  CHECK_THAT(rejection(format_tlog_proof(proof)), Contains("more than 64 proof hashes"));
  CHECK_THAT(rejection(std::string(kMaxProofDocumentBytes + 1, 'a')), Contains("at most"));
}

// ---- JSON ----------------------------------------------------------------------------------

TEST_CASE("a JSON inclusion proof round-trips and states its size and leaf hash",
          "[ledger][proof]") {
  InclusionProofDoc proof = inclusion(tree(9), 4, 9, log_key());
  proof.leaf_hash = leaf_of(4);
  std::string text = format_inclusion_proof_json(proof);
  CHECK(text.starts_with("{\"type\":\"inclusion\",\"index\":4,\"size\":9,\"leafHash\":\"" +
                         base64_encode(leaf_of(4)) + "\",\"hashes\":[\""));
  auto parsed = parse_proof(text);
  REQUIRE_OK(parsed);
  REQUIRE(std::holds_alternative<InclusionProofDoc>(*parsed));
  CHECK(std::get<InclusionProofDoc>(*parsed) == proof);

  proof.extra = to_bytes("context");
  auto with_extra = parse_proof_json(format_inclusion_proof_json(proof));
  REQUIRE_OK(with_extra);
  CHECK(std::get<InclusionProofDoc>(*with_extra).extra == to_bytes("context"));
}

TEST_CASE("a JSON consistency proof round-trips", "[ledger][proof]") {
  ConsistencyProofDoc proof = consistency(tree(11), 3, 11, log_key());
  std::string text = format_consistency_proof_json(proof);
  CHECK(text.starts_with("{\"type\":\"consistency\",\"from\":3,\"to\":11,\"hashes\":[\""));
  auto parsed = parse_proof(text);
  REQUIRE_OK(parsed);
  REQUIRE(std::holds_alternative<ConsistencyProofDoc>(*parsed));
  CHECK(std::get<ConsistencyProofDoc>(*parsed) == proof);
}

TEST_CASE("a JSON proof with a wrong, missing or extra member is rejected", "[ledger][proof]") {
  InclusionProofDoc proof = inclusion(tree(9), 4, 9, log_key());
  proof.leaf_hash = leaf_of(4);
  std::string text = format_inclusion_proof_json(proof);
  std::string cons = format_consistency_proof_json(consistency(tree(9), 2, 9, log_key()));

  CHECK_THAT(json_rejection(replace_once(text, "\"size\":9", "\"size\":8")),
             Contains("the checkpoint is of size 9, not the stated 8"));
  CHECK_THAT(json_rejection(replace_once(cons, "\"to\":9", "\"to\":10")),
             Contains("the checkpoint is of size 9, not the stated 10"));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4", "\"index\":4.5")),
             Contains("\"index\" must be an integer"));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4", "\"index\":-4")),
             Contains("\"index\" must be an integer"));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4", "\"index\":\"4\"")),
             Contains("\"index\" must be a number, not string"));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4,", "")),
             Contains("member \"index\" is missing"));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4,", "\"index\":4,\"note\":1,")),
             Contains("unknown member \"note\""));
  CHECK_THAT(json_rejection(replace_once(text, "\"index\":4,", "\"index\":4,\"index\":5,")),
             Contains("duplicate"));
  CHECK_THAT(json_rejection(replace_once(text, "\"inclusion\"", "\"exclusion\"")),
             Contains("neither \"inclusion\" nor \"consistency\""));
  CHECK_THAT(json_rejection(replace_once(text, "\"leafHash\":\"", "\"leafHash\":\"!")),
             Contains("\"leafHash\" is not standard padded base64"));
  CHECK_THAT(json_rejection(replace_once(text, "\"leafHash\":\"", "\"leafHash\":\"AAAA")),
             Contains("\"leafHash\" is 35 bytes"));
  CHECK_THAT(json_rejection(replace_once(text, "\"hashes\":[\"", "\"hashes\":[1,\"")),
             Contains("proof hash 1 must be a string"));
  CHECK_THAT(json_rejection(replace_once(text, "\"hashes\":[\"", "\"hashes\":[\"AAAA\",\"")),
             Contains("proof hash 1 is 3 bytes"));
  CHECK_THAT(json_rejection(text + "x"), Contains("JSON proof"));
  CHECK_THAT(json_rejection("[1]"), Contains("must be an object"));
  CHECK_THAT(json_rejection(replace_once(text, "\\n\\n", "\\n")), Contains("\"checkpoint\""));
}

TEST_CASE("parse_proof tells tlog-proof from JSON and rejects anything else", "[ledger][proof]") {
  InclusionProofDoc proof = inclusion(tree(3), 2, 3, log_key());
  auto tlog = parse_proof(format_tlog_proof(proof));
  REQUIRE_OK(tlog);
  CHECK(std::get<InclusionProofDoc>(*tlog) == proof);
  auto bad = parse_proof("index 2\n");
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message(), Contains("not a proof"));
}

// ---- verification --------------------------------------------------------------------------

TEST_CASE("every inclusion proof of trees up to 17 entries verifies", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(17);
  for (uint64_t size = 1; size <= 17; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      auto parsed = parse_tlog_proof(format_tlog_proof(inclusion(store, index, size, key)));
      REQUIRE_OK(parsed);
      auto verified = verify_inclusion_proof(*parsed, leaf_of(index), key.verifier());
      INFO("index " << index << " size " << size);
      REQUIRE_OK(verified);
      CHECK(verified->index == index);
      CHECK(verified->checkpoint.size == size);
      CHECK(verified->checkpoint.origin == kOrigin);
    }
  }
}

TEST_CASE("an inclusion proof with a flipped bit in any hash fails", "[ledger][proof]") {
  SecretKey key = log_key();
  InclusionProofDoc proof = inclusion(tree(21), 13, 21, key);
  REQUIRE(proof.hashes.size() == 5);
  for (size_t i = 0; i < proof.hashes.size(); ++i) {
    for (size_t bit : {0, 77, 255}) {
      InclusionProofDoc tampered = proof;
      tampered.hashes[i] = flip_bit(tampered.hashes[i], bit);
      auto verified = verify_inclusion_proof(tampered, leaf_of(13), key.verifier());
      REQUIRE_FALSE(verified.has_value());
      CHECK(verified.error().code() == Code::kRejected);
      CHECK_THAT(
          verified.error().message(),
          Contains("inclusion proof of record 13 in the tree of size 21: the proof leads to root"));
    }
  }
  InclusionProofDoc short_proof = proof;
  short_proof.hashes.pop_back();
  auto verified = verify_inclusion_proof(short_proof, leaf_of(13), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("expected 5 hashes, found 4"));
}

TEST_CASE("an inclusion proof with a wrong index fails", "[ledger][proof]") {
  SecretKey key = log_key();
  InclusionProofDoc proof = inclusion(tree(21), 13, 21, key);
  proof.index = 12;
  auto verified = verify_inclusion_proof(proof, leaf_of(13), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("record 12 in the tree of size 21") &&
                                             Contains("leads to root"));
  proof.index = 21;
  verified = verify_inclusion_proof(proof, leaf_of(13), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(),
             Contains("index 21 is not in the checkpoint's tree of size 21"));
}

TEST_CASE("an inclusion proof of another leaf fails", "[ledger][proof]") {
  SecretKey key = log_key();
  InclusionProofDoc proof = inclusion(tree(21), 13, 21, key);
  auto verified = verify_inclusion_proof(proof, leaf_of(14), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("leads to root"));
  CHECK_FALSE(verify_inclusion_proof(proof, flip_bit(leaf_of(13), 3), key.verifier()).has_value());

  proof.leaf_hash = leaf_of(13);  // a JSON proof names its leaf: a mismatch is said as such
  verified = verify_inclusion_proof(proof, leaf_of(14), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("it proves another entry"));
}

TEST_CASE("an inclusion proof under a checkpoint not signed by the log key fails",
          "[ledger][proof]") {
  SecretKey key = log_key();
  SecretKey impostor = impostor_key();
  MemoryHashStore store = tree(8);
  InclusionProofDoc forged = inclusion(store, 3, 8, impostor);
  auto verified = verify_inclusion_proof(forged, leaf_of(3), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().code() == Code::kRejected);
  CHECK_THAT(verified.error().message(), Contains("no signature by a known key"));

  SecretKey other_log = test::test_key("other.example.org/log", 0x23);
  InclusionProofDoc other = inclusion(store, 3, 8, other_log);
  CHECK_FALSE(verify_inclusion_proof(other, leaf_of(3), key.verifier()).has_value());
  REQUIRE_OK(verify_inclusion_proof(other, leaf_of(3), other_log.verifier()));
}

TEST_CASE("an inclusion proof whose checkpoint was altered fails", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(8);
  InclusionProofDoc proof = inclusion(store, 3, 8, key);
  // A checkpoint claiming another root (a flipped bit in it) keeps its old signature.
  auto note = parse_note(proof.checkpoint_note);
  REQUIRE_OK(note);
  auto body = parse_checkpoint_body(note->text);
  REQUIRE_OK(body);
  std::string altered_root = base64_encode(flip_bit(body->root, 9));
  proof.checkpoint_note =
      replace_once(proof.checkpoint_note, base64_encode(body->root), altered_root);
  auto verified = verify_inclusion_proof(proof, leaf_of(3), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("does not verify"));
}

TEST_CASE("every consistency proof of trees up to 12 entries verifies", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(12);
  for (uint64_t to = 1; to <= 12; ++to) {
    for (uint64_t from = 1; from <= to; ++from) {
      auto parsed =
          parse_proof_json(format_consistency_proof_json(consistency(store, from, to, key)));
      REQUIRE_OK(parsed);
      auto verified = verify_consistency_proof(std::get<ConsistencyProofDoc>(*parsed),
                                               checkpoint_note(store, from, key), key.verifier());
      INFO("from " << from << " to " << to);
      REQUIRE_OK(verified);
      CHECK(verified->old_checkpoint.size == from);
      CHECK(verified->new_checkpoint.size == to);
    }
  }
}

TEST_CASE("a consistency proof with a flipped bit, a wrong size or another key fails",
          "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore store = tree(12);
  ConsistencyProofDoc proof = consistency(store, 5, 12, key);
  std::string old_note = checkpoint_note(store, 5, key);
  REQUIRE(proof.hashes.size() == 5);
  for (size_t i = 0; i < proof.hashes.size(); ++i) {
    ConsistencyProofDoc tampered = proof;
    tampered.hashes[i] = flip_bit(tampered.hashes[i], 100);
    auto verified = verify_consistency_proof(tampered, old_note, key.verifier());
    REQUIRE_FALSE(verified.has_value());
    CHECK_THAT(verified.error().message(), Contains("consistency proof from size 5 to size 12: "
                                                    "the proof leads to"));
  }
  auto wrong_old = verify_consistency_proof(proof, checkpoint_note(store, 6, key), key.verifier());
  REQUIRE_FALSE(wrong_old.has_value());
  CHECK_THAT(
      wrong_old.error().message(),
      Contains("it is from size 5 but the old checkpoint is of size 6; ask for a proof from 6"));

  auto forged_old = verify_consistency_proof(proof, checkpoint_note(store, 5, impostor_key()),
                                             key.verifier());
  REQUIRE_FALSE(forged_old.has_value());
  CHECK_THAT(forged_old.error().message(), Contains("old checkpoint") &&
                                               Contains("no signature by a known key"));

  ConsistencyProofDoc forged_new = consistency(store, 5, 12, impostor_key());
  auto forged = verify_consistency_proof(forged_new, old_note, key.verifier());
  REQUIRE_FALSE(forged.has_value());
  CHECK_THAT(forged.error().message(), Contains("the proof's checkpoint"));

  ConsistencyProofDoc wrong_to = proof;
  wrong_to.to = 11;
  auto to_mismatch = verify_consistency_proof(wrong_to, old_note, key.verifier());
  REQUIRE_FALSE(to_mismatch.has_value());
  CHECK_THAT(to_mismatch.error().message(),
             Contains("it is to size 11 but its checkpoint is of size 12"));
}

TEST_CASE("a consistency proof between two forks of a log fails", "[ledger][proof]") {
  SecretKey key = log_key();
  MemoryHashStore honest = tree(12);
  MemoryHashStore fork = tree(5, /*salt=*/1);
  auto verified = verify_consistency_proof(consistency(honest, 5, 12, key),
                                           checkpoint_note(fork, 5, key), key.verifier());
  REQUIRE_FALSE(verified.has_value());
  CHECK_THAT(verified.error().message(), Contains("leads to old root") &&
                                             Contains("one append-only history"));
}

}  // namespace
}  // namespace evl
