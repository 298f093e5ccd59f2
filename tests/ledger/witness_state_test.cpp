// The witness's state machine: the compare of compare-and-store as a pure rule, the LMDB state
// (atomic, durable, across restarts, under racing updates), and the witness's checks in front
// of it (ledger/witness.h), against a log that is not evledger's.
#include "ledger/witness_state.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "keys/witness_format.h"
#include "ledger/proofs.h"
#include "ledger/split_view.h"
#include "ledger/witness.h"
#include "tests/support/fixtures.h"
#include "tests/support/foreign_log.h"
#include "tests/support/ledger_support.h"
#include "tests/support/raw_lmdb.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::ForeignLog;
using test::TempDir;

CheckpointUpdate update_of(const ForeignLog& log, uint64_t old) {
  CheckpointUpdate u;
  u.old_size = old;
  u.proof = log.proof_from(old);
  u.checkpoint = log.checkpoint();
  u.log_signatures.push_back(sign_note_text(checkpoint_body(u.checkpoint), log.key()));
  return u;
}

struct State {
  explicit State(const TempDir& dir, uint64_t* now = nullptr) {
    WitnessStateOptions options;
    options.dir = dir.str();
    options.cosigner = key;
    if (now != nullptr) options.clock = [now] { return *now; };
    auto opened = WitnessState::open(options);
    REQUIRE_OK(opened);
    state = std::move(*opened);
  }
  std::shared_ptr<const SecretKey> key =
      std::make_shared<const SecretKey>(test::witness_key("witness.example/w1"));
  std::unique_ptr<WitnessState> state;
};

TEST_CASE("decide_update follows tlog-witness: old > size, 409, proofs from 0 and roots at "
          "one size",
          "[ledger][witness]") {
  ForeignLog log("foreign.example/log");
  log.grow(10);
  const Checkpoint at10 = log.checkpoint();
  // Nothing cosigned yet: only old 0 and an empty proof.
  CHECK(decide_update(std::nullopt, update_of(log, 0)).verdict == UpdateVerdict::kCosigned);
  auto conflict = decide_update(std::nullopt, update_of(log, 4));
  CHECK(conflict.verdict == UpdateVerdict::kConflict);
  CHECK(conflict.latest_size == 0);
  CheckpointUpdate proof_from_zero = update_of(log, 0);
  proof_from_zero.proof = log.proof_from(4);
  CHECK(decide_update(std::nullopt, proof_from_zero).verdict == UpdateVerdict::kInconsistent);
  CheckpointUpdate too_large = update_of(log, 0);
  too_large.old_size = 11;
  CHECK(decide_update(at10, too_large).verdict == UpdateVerdict::kOldTooLarge);

  log.grow(7);
  CHECK(decide_update(at10, update_of(log, 10)).verdict == UpdateVerdict::kCosigned);
  auto stale = decide_update(at10, update_of(log, 0));
  CHECK(stale.verdict == UpdateVerdict::kConflict);
  CHECK(stale.latest_size == 10);
  CheckpointUpdate bad_proof = update_of(log, 10);
  bad_proof.proof[0][0] ^= 1;
  auto failed = decide_update(at10, bad_proof);
  CHECK(failed.verdict == UpdateVerdict::kInconsistent);
  CHECK_THAT(failed.status.message(), Catch::Contains("does not verify"));
  CheckpointUpdate short_proof = update_of(log, 10);
  short_proof.proof.pop_back();
  CHECK(decide_update(at10, short_proof).verdict == UpdateVerdict::kInconsistent);

  // The same size: the same root again is fine (cosigned anew), another root is a fork.
  CheckpointUpdate same = update_of(log, 10);
  same.checkpoint = at10;
  same.proof.clear();
  CHECK(decide_update(at10, same).verdict == UpdateVerdict::kCosigned);
  same.checkpoint.root[0] ^= 1;
  auto fork = decide_update(at10, same);
  CHECK(fork.verdict == UpdateVerdict::kInconsistent);
  CHECK_THAT(fork.status.message(), Catch::Contains("another root at this size"));
  same.checkpoint = at10;
  same.proof = log.proof_from(3);  // a proof where none belongs
  CHECK(decide_update(at10, same).verdict == UpdateVerdict::kInconsistent);

  // An empty tree has exactly one root.
  ForeignLog empty("empty.example/log");
  CHECK(decide_update(std::nullopt, update_of(empty, 0)).verdict == UpdateVerdict::kCosigned);
  CheckpointUpdate wrong_empty = update_of(empty, 0);
  wrong_empty.checkpoint.root[5] ^= 1;
  CHECK(decide_update(std::nullopt, wrong_empty).verdict == UpdateVerdict::kInconsistent);
}

TEST_CASE("cosignature times are never 0 and never before the origin's last",
          "[ledger][witness]") {
  CHECK(next_cosignature_time(0, std::nullopt) == 1);
  CHECK(next_cosignature_time(1700000000, std::nullopt) == 1700000000);
  CHECK(next_cosignature_time(1600000000, 1700000000) == 1700000000);
  CHECK(next_cosignature_time(1800000000, 1700000000) == 1800000000);
  CHECK(next_cosignature_time(UINT64_MAX, std::nullopt) == kMaxCosignatureTime);
}

TEST_CASE("the witness state stores a cosigned checkpoint durably and keeps it across a "
          "restart",
          "[ledger][witness]") {
  TempDir dir;
  ForeignLog log("foreign.example/log");
  log.grow(5);
  uint64_t now = 1700000000;
  const CosignerKey cosigner =
      CosignerKey::of("witness.example/w1", test::witness_key("witness.example/w1").public_key());
  {
    State s(dir, &now);
    UpdateOutcome first = s.state->update(update_of(log, 0));
    REQUIRE(first.verdict == UpdateVerdict::kCosigned);
    CHECK(first.time == now);
    auto time = verify_cosignature(log.checkpoint(), first.cosignature, cosigner);
    REQUIRE_OK(time);
    CHECK(*time == now);
    auto latest = s.state->latest(log.key().name());
    REQUIRE_OK(latest);
    REQUIRE(latest->has_value());
    CHECK((*latest)->checkpoint == log.checkpoint());
    // The stored note: the log's signature and the witness's cosignature, both valid.
    const CosignerKey cosigners[] = {cosigner};
    auto opened = open_cosigned_checkpoint((*latest)->note, log.vkey(), cosigners);
    REQUIRE_OK(opened);
    REQUIRE(opened->cosignatures.size() == 1);
    CHECK(opened->cosignatures[0].time == now);
    CHECK(s.state->stats().stored == 1);
  }
  {
    // A restart, with the clock stepped back: the state is there, and time does not go back.
    now = 1600000000;
    State s(dir, &now);
    auto latest = s.state->latest_by_hash(sha256(as_bytes(log.key().name())));
    REQUIRE_OK(latest);
    REQUIRE(latest->has_value());
    CHECK((*latest)->checkpoint.size == 5);
    UpdateOutcome stale = s.state->update(update_of(log, 0));
    CHECK(stale.verdict == UpdateVerdict::kConflict);
    CHECK(stale.latest_size == 5);
    log.grow(3);
    UpdateOutcome next = s.state->update(update_of(log, 5));
    REQUIRE(next.verdict == UpdateVerdict::kCosigned);
    CHECK(next.time == 1700000000);
    CHECK(s.state->latest(log.key().name())->value().time == 1700000000);
    // Nothing smaller is ever cosigned again: the old size must be 8 now.
    CHECK(s.state->update(update_of(log, 5)).verdict == UpdateVerdict::kConflict);
  }
  auto absent = State(dir).state->latest("nobody.example/log");
  REQUIRE_OK(absent);
  CHECK_FALSE(absent->has_value());
}

TEST_CASE("of racing updates from the same old size exactly one is cosigned",
          "[ledger][witness]") {
  TempDir dir;
  State s(dir);
  ForeignLog log("race.example/log");
  log.grow(4);
  REQUIRE(s.state->update(update_of(log, 0)).verdict == UpdateVerdict::kCosigned);
  // Sixteen checkpoints of sizes 5..20, each with a proof from 4, all sent at once.
  std::vector<CheckpointUpdate> updates;
  for (int i = 0; i < 16; ++i) {
    log.grow(1);
    updates.push_back(update_of(log, 4));
  }
  std::vector<UpdateOutcome> outcomes(updates.size());
  std::vector<std::thread> threads;
  std::atomic<bool> go{false};
  for (size_t i = 0; i < updates.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      outcomes[i] = s.state->update(updates[i]);
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  auto winner = std::find_if(outcomes.begin(), outcomes.end(), [](const UpdateOutcome& o) {
    return o.verdict == UpdateVerdict::kCosigned;
  });
  REQUIRE(winner != outcomes.end());
  const uint64_t won = updates[static_cast<size_t>(winner - outcomes.begin())].checkpoint.size;
  size_t cosigned = 0;
  for (const UpdateOutcome& o : outcomes) {
    if (o.verdict == UpdateVerdict::kCosigned) {
      ++cosigned;
    } else {
      CHECK(o.verdict == UpdateVerdict::kConflict);
      CHECK(o.latest_size == won);
    }
  }
  CHECK(cosigned == 1);
  CHECK(s.state->latest(log.key().name())->value().checkpoint.size == won);
}

TEST_CASE("updates of many logs share durable commits", "[ledger][witness]") {
  TempDir dir;
  State s(dir);
  std::vector<std::unique_ptr<ForeignLog>> logs;
  for (int i = 0; i < 200; ++i) {
    logs.push_back(std::make_unique<ForeignLog>("log" + std::to_string(i) + ".example",
                                                static_cast<uint8_t>(i)));
    logs.back()->grow(static_cast<uint64_t>(i + 1));
  }
  std::atomic<int> cosigned{0}, answered{0};
  std::promise<void> all;
  for (auto& log : logs) {
    s.state->submit(update_of(*log, 0), [&](UpdateOutcome o) {
      if (o.verdict == UpdateVerdict::kCosigned) ++cosigned;
      if (++answered == 200) all.set_value();
    });
  }
  all.get_future().wait();
  CHECK(cosigned == 200);
  const WitnessStateStats stats = s.state->stats();
  CHECK(stats.stored == 200);
  CHECK(stats.commits < stats.stored);  // the writer took what queued during each fsync
  for (auto& log : logs) {
    CHECK(s.state->latest(log->key().name())->value().checkpoint == log->checkpoint());
  }
}

TEST_CASE("the witness state refuses a foreign format, a second process and a damaged record",
          "[ledger][witness]") {
  TempDir dir;
  ForeignLog log("foreign.example/log"), other("other.example/log", 9);
  log.grow(3);
  other.grow(2);
  {
    State s(dir);
    REQUIRE(s.state->update(update_of(log, 0)).verdict == UpdateVerdict::kCosigned);
    WitnessStateOptions again;
    again.dir = dir.str();
    again.cosigner = s.key;
    auto second = WitnessState::open(again);
    REQUIRE_FALSE(second.has_value());
    CHECK_THAT(second.error().message(), Catch::Contains("in use by another witness"));
  }
  const Digest key = sha256(as_bytes(log.key().name()));
  test::with_raw_db(dir, "latest", [&](MDB_txn* txn, MDB_dbi dbi) {
    const std::string damaged("\x01\0\0\0\0\0\0\0\x01garbage", 16);  // a header, no note
    test::put_raw(txn, dbi, ByteView(key), as_bytes(damaged));
  });
  {
    State s(dir);
    auto latest = s.state->latest(log.key().name());
    REQUIRE_FALSE(latest.has_value());
    CHECK(latest.error().code() == Code::kCorrupt);
    UpdateOutcome refused = s.state->update(update_of(log, 3));
    CHECK(refused.verdict == UpdateVerdict::kFailed);
    // Another log's updates go on.
    CHECK(s.state->update(update_of(other, 0)).verdict == UpdateVerdict::kCosigned);
  }
  test::with_raw_db(dir, "meta", [&](MDB_txn* txn, MDB_dbi dbi) {
    test::put_raw(txn, dbi, std::string_view("format"), std::string_view("evledger-witness-v9"));
  });
  WitnessStateOptions options;
  options.dir = dir.str();
  options.cosigner = std::make_shared<const SecretKey>(test::witness_key("w"));
  auto foreign = WitnessState::open(options);
  REQUIRE_FALSE(foreign.has_value());
  CHECK(foreign.error().code() == Code::kCorrupt);
}

struct WitnessFixture {
  WitnessFixture() : log("foreign.example/log") {
    WitnessOptions options;
    options.dir = dir.str();
    options.key = std::make_shared<const SecretKey>(test::witness_key("witness.example/w1"));
    options.logs = {log.vkey(), rotated.vkey()};
    options.clock = [] { return uint64_t{1700000000}; };
    auto opened = Witness::open(options);
    REQUIRE_OK(opened);
    witness = std::move(*opened);
  }
  TempDir dir;
  ForeignLog log;
  ForeignLog rotated{"foreign.example/log", 8};  // a second key of the same origin
  std::unique_ptr<Witness> witness;
};

TEST_CASE("the witness answers each add-checkpoint rule with its verdict", "[ledger][witness]") {
  WitnessFixture f;
  f.log.grow(6);
  auto verdict = [&](const std::string& body) { return f.witness->add_checkpoint(body).verdict; };
  CHECK(verdict("old 0\n") == WitnessVerdict::kMalformed);
  CHECK(verdict("old 0\n\nnot a note\n") == WitnessVerdict::kMalformed);
  ForeignLog stranger("stranger.example/log", 3);
  stranger.grow(2);
  WitnessAnswer unknown = f.witness->add_checkpoint(stranger.request(0));
  CHECK(unknown.verdict == WitnessVerdict::kUnknownLog);
  CHECK_THAT(unknown.message, Catch::Contains("stranger.example/log"));
  // Signed by a key the witness does not trust for the origin: no trusted signature.
  ForeignLog impostor("foreign.example/log", 99);
  impostor.grow(6);
  CHECK(verdict(impostor.request(0)) == WitnessVerdict::kForbidden);
  // A trusted key's line that does not verify.
  std::string body = f.log.request(0);
  body[body.size() - 10] = body[body.size() - 10] == 'A' ? 'B' : 'A';
  CHECK(verdict(body) == WitnessVerdict::kForbidden);
  CHECK(verdict(format_add_checkpoint_request({7, {}, f.log.signed_checkpoint()})) ==
        WitnessVerdict::kMalformed);  // old > size

  WitnessAnswer first = f.witness->add_checkpoint(f.log.request(0));
  REQUIRE(first.verdict == WitnessVerdict::kCosigned);
  auto lines = parse_cosignature_lines(first.body);
  REQUIRE_OK(lines);
  CHECK(verify_cosignature(f.log.checkpoint(), (*lines)[0], f.witness->cosigner()).has_value());
  WitnessAnswer again = f.witness->add_checkpoint(f.log.request(0));
  CHECK(again.verdict == WitnessVerdict::kConflict);
  CHECK(again.body == "6\n");
  f.log.grow(4);
  AddCheckpointRequest bad{6, f.log.proof_from(6), f.log.signed_checkpoint()};
  bad.proof.back()[3] ^= 0x40;
  CHECK(verdict(format_add_checkpoint_request(bad)) == WitnessVerdict::kInconsistent);
  CHECK(verdict(format_add_checkpoint_request({6, {}, f.log.signed_checkpoint()})) ==
        WitnessVerdict::kInconsistent);
  // The rotated key signs the next checkpoint of the same origin: trusted too.
  const std::string by_rotated = sign_checkpoint(f.log.checkpoint(), f.rotated.key());
  WitnessAnswer rotated = f.witness->add_checkpoint(
      format_add_checkpoint_request({6, f.log.proof_from(6), by_rotated}));
  CHECK(rotated.verdict == WitnessVerdict::kCosigned);
}

TEST_CASE("another root at the cosigned size leaves evidence of the split view that anyone "
          "checks with the log key",
          "[ledger][witness][split-view]") {
  TempDir dir;
  ForeignLog log("foreign.example/log");
  std::vector<std::pair<std::string, std::string>> reported;
  WitnessOptions options;
  options.dir = dir.str();
  options.key = std::make_shared<const SecretKey>(test::witness_key("witness.example/w1"));
  options.logs = {log.vkey()};
  options.on_split_view = [&](const std::string& origin, const std::string& path) {
    reported.emplace_back(origin, path);
  };
  auto witness = Witness::open(options);
  REQUIRE_OK(witness);
  log.grow(5);
  REQUIRE((*witness)->add_checkpoint(log.request(0)).verdict == WitnessVerdict::kCosigned);
  // The same log key signs another tree of size 5 (a fork: other leaves).
  ForeignLog fork("foreign.example/log");
  fork.grow(4);
  fork.append_leaf("another leaf");
  REQUIRE(fork.checkpoint().root != log.checkpoint().root);
  WitnessAnswer split = (*witness)->add_checkpoint(
      format_add_checkpoint_request({5, {}, fork.signed_checkpoint()}));
  CHECK(split.verdict == WitnessVerdict::kInconsistent);
  REQUIRE(reported.size() == 1);
  CHECK(reported[0].first == "foreign.example/log");
  const std::string path = reported[0].second;
  CHECK_THAT(split.message, Catch::Contains("a fork") && Catch::Contains(path));
  CHECK(path.rfind(dir.str() + "/evidence/split-view-5-5-", 0) == 0);
  // What the file proves, with the log's key alone.
  auto text = test::read_file(path);
  auto evidence = parse_split_view(text);
  REQUIRE_OK(evidence);
  auto finding = check_split_view(*evidence, log.vkey());
  REQUIRE_OK(finding);
  CHECK(finding->older.root != finding->newer.root);
  CHECK(finding->older.size == 5);
  // The witness still holds what it cosigned, and other failures leave no evidence.
  auto note = (*witness)->checkpoint_note(sha256(as_bytes(log.key().name())));
  REQUIRE_OK(note);
  CHECK(note->rfind(log.signed_checkpoint(), 0) == 0);
  log.grow(2);
  AddCheckpointRequest bad{5, log.proof_from(5), log.signed_checkpoint()};
  bad.proof.back()[0] ^= 1;
  CHECK((*witness)->add_checkpoint(format_add_checkpoint_request(bad)).verdict ==
        WitnessVerdict::kInconsistent);
  CHECK(reported.size() == 1);
}

TEST_CASE("the witness's monitoring note keeps the log's signatures and its own, not "
          "strangers'",
          "[ledger][witness]") {
  WitnessFixture f;
  f.log.grow(3);
  const Digest origin_hash = sha256(as_bytes(f.log.key().name()));
  auto none = f.witness->checkpoint_note(origin_hash);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code() == Code::kNotFound);
  // The submitted note carries another witness's cosignature and an unknown key's line.
  SecretKey other = test::witness_key("other.example/w", 77);
  std::string note = f.log.signed_checkpoint() +
                     note_signature_line(cosign_checkpoint(f.log.checkpoint(), other, 5));
  WitnessAnswer a = f.witness->add_checkpoint(format_add_checkpoint_request({0, {}, note}));
  REQUIRE(a.verdict == WitnessVerdict::kCosigned);
  auto stored = f.witness->checkpoint_note(origin_hash);
  REQUIRE_OK(stored);
  CHECK(*stored == f.log.signed_checkpoint() + a.body);
}

TEST_CASE("the witness cosigns an evledger ledger's checkpoints with the ledger's own "
          "consistency proofs",
          "[ledger][witness]") {
  TempDir ledger_dir, witness_dir;
  test::Cast cast;
  OpenOptions open;
  open.create = true;
  auto ledger = test::open_test_ledger(ledger_dir, open);
  test::append_all(*ledger, cast.prologue_entries());
  WitnessOptions options;
  options.dir = witness_dir.str();
  options.key = std::make_shared<const SecretKey>(test::witness_key("witness.example/w1"));
  options.logs = {cast.log.verifier()};
  auto witness = Witness::open(options);
  REQUIRE_OK(witness);
  auto first = stored_checkpoint(*ledger);
  REQUIRE_OK(first);
  WitnessAnswer a = (*witness)->add_checkpoint(format_add_checkpoint_request({0, {}, first->note}));
  REQUIRE(a.verdict == WitnessVerdict::kCosigned);
  uint64_t cosigned = first->checkpoint.size;
  for (int commit = 0; commit < 3; ++commit) {
    std::vector<Bytes> batch;
    for (int i = 0; i < 7 + commit; ++i) {
      batch.push_back(test::signed_entry(
          cast.importer, test::observation_body(cast.importer, "gpumode",
                                                std::to_string(commit * 100 + i))));
    }
    test::append_all(*ledger, std::move(batch));
    auto proof = prove_consistency(*ledger, cosigned);
    REQUIRE_OK(proof);
    WitnessAnswer next = (*witness)->add_checkpoint(
        format_add_checkpoint_request({cosigned, proof->hashes, proof->checkpoint_note}));
    INFO(next.message);
    REQUIRE(next.verdict == WitnessVerdict::kCosigned);
    cosigned = proof->to;
  }
  auto latest = (*witness)->state().latest(cast.log.name());
  REQUIRE_OK(latest);
  CHECK((*latest)->checkpoint.size == ledger->size());
}

}  // namespace
}  // namespace evl
