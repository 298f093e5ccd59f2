// The projection digest (LtHash16, projections/FORMAT.md): the worked example's bytes, a naive
// from-scratch reference, and the incremental accumulator of DigestedStore against both over
// random stores and random put/erase sequences.
#include "projections/digest.h"

#include <sodium.h>

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>

#include "keys/note.h"
#include "ledger/thread_pool.h"
#include "projections/digested_store.h"
#include "tests/support/fixtures.h"

namespace evl {
namespace {

// The reference: FORMAT.md's definition written out with nothing shared with digest.cpp but
// SHA-256 and libsodium's ChaCha20. Slow on purpose.
Digest reference_digest(const std::map<std::string, std::string>& records) {
  std::vector<uint32_t> lanes(1024, 0);
  for (const auto& [key, value] : records) {
    std::string preimage = "evledger/projections/v3 record\n";
    auto length = [&](size_t n) {
      for (int shift = 56; shift >= 0; shift -= 8) preimage += static_cast<char>((n >> shift) & 0xff);
    };
    length(key.size());
    preimage += key;
    length(value.size());
    preimage += value;
    Digest seed = sha256(as_bytes(preimage));
    std::vector<uint8_t> stream(2048);
    uint8_t nonce[12] = {};
    REQUIRE(crypto_stream_chacha20_ietf(stream.data(), stream.size(), nonce, seed.data()) == 0);
    for (size_t i = 0; i < 1024; ++i) {
      lanes[i] = (lanes[i] + stream[2 * i] + 256u * stream[2 * i + 1]) % 65536;
    }
  }
  std::string hashed = "evledger/projections/v3\n";
  for (int shift = 56; shift >= 0; shift -= 8) {
    hashed += static_cast<char>((records.size() >> shift) & 0xff);
  }
  for (uint32_t lane : lanes) {
    hashed += static_cast<char>(lane & 0xff);
    hashed += static_cast<char>(lane >> 8);
  }
  return sha256(as_bytes(hashed));
}

Digest digest_of(const ProjectionStore& store) {
  auto digest = projection_digest(store);
  REQUIRE(digest.has_value());
  return *digest;
}

TEST_CASE("the projection digest of FORMAT.md's worked example", "[projections][digest]") {
  MemoryProjectionStore store;
  REQUIRE(store.put("b", "2").is_ok());
  REQUIRE(store.put("a", "1").is_ok());
  CHECK(hex_encode(projection_record_hash("a", "1")) ==
        "cc3a97b42488332dc5b143bf62b707d4e674be287d1abe905f21cee80487e87d");
  CHECK(hex_encode(projection_record_hash("b", "2")) ==
        "33710fad8b681fc72b2c108624340b633fca81b0957c899da61b2451e46060b4");
  ProjectionAccumulator a, b;
  a.add("a", "1");
  b.add("b", "2");
  auto sums = accumulate_projection_store(store);
  REQUIRE(sums.has_value());
  const std::pair<size_t, std::array<uint16_t, 3>> lanes[] = {
      {0, {0x3dec, 0xbd85, 0xfb71}},
      {1, {0x8159, 0x4da6, 0xceff}},
      {2, {0x5855, 0x3e8a, 0x96df}},
      {3, {0x9ec0, 0x2ebd, 0xcd7d}},
      {1023, {0x2c79, 0x373f, 0x63b8}}};
  for (const auto& [i, want] : lanes) {
    INFO("lane " << i);
    CHECK(a.lanes()[i] == want[0]);
    CHECK(b.lanes()[i] == want[1]);
    CHECK(sums->lanes()[i] == want[2]);
  }
  Bytes serialized = sums->serialize();
  REQUIRE(serialized.size() == 2056);
  CHECK(hex_encode(ByteView(serialized.data(), 16)) == "000000000000000271fbffcedf967dcd");
  Digest digest = digest_of(store);
  CHECK(digest_text(digest) ==
        "sha256:e99a5876a556803f604c3cfa439e9910dd34632f387d84e5e2e5a4b4f28e7f2b");
  CHECK(base64_encode(digest) == "6ZpYdqVWgD9gTDz6Q56ZEN00Yy84fYTl4uWktPKOfys=");
  CHECK(digest == reference_digest({{"a", "1"}, {"b", "2"}}));
  CHECK(digest_text(digest_of(MemoryProjectionStore())) ==
        "sha256:8e6ddc36d93991ce7e37ebb772c48246592ad584b1843ccab7f0a9f76da9f1c6");
}

TEST_CASE("the digest changes with any key or value and not with the order of writes",
          "[projections][digest]") {
  MemoryProjectionStore one, other;
  REQUIRE(one.put("a", "1").is_ok());
  REQUIRE(one.put("b", "2").is_ok());
  REQUIRE(other.put("b", "2").is_ok());
  REQUIRE(other.put("a", "1").is_ok());
  const Digest base = digest_of(one);
  CHECK(digest_of(other) == base);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"b", "3"}, {"b", ""}, {"c", "2"}, {"a", "2"}}) {
    MemoryProjectionStore changed = one;
    if (key == "c") {
      REQUIRE(changed.erase("b").is_ok());
    }
    REQUIRE(changed.put(key, value).is_ok());
    INFO(key << " = " << value);
    CHECK(digest_of(changed) != base);
  }
  // Lengths are part of each record: moving a byte from the key to the value is a change.
  MemoryProjectionStore shifted;
  REQUIRE(shifted.put("ab", "").is_ok());
  MemoryProjectionStore unshifted;
  REQUIRE(unshifted.put("a", "b").is_ok());
  CHECK(digest_of(shifted) != digest_of(unshifted));
  // Removing what was added restores the sums exactly, count included.
  ProjectionAccumulator empty;
  ProjectionAccumulator added_and_removed;
  added_and_removed.add("x", "y");
  added_and_removed.remove("x", "y");
  CHECK(added_and_removed == empty);
}

TEST_CASE("records of every key length hash as FORMAT.md defines, short keys and long",
          "[projections][digest]") {
  // Short keys are hashed with what precedes the value in one buffer, longer ones piece by
  // piece: both sides of that bound, and the empty key and value.
  for (size_t length : {0, 1, 66, 255, 256, 257, 300, 4096}) {
    std::map<std::string, std::string> records;
    records[std::string(length, 'k')] = std::string(length % 7 == 0 ? 0 : 100, 'v');
    records[std::string(length, 'k') + "/"] = "x";
    MemoryProjectionStore store;
    for (const auto& [key, value] : records) REQUIRE(store.put(key, value).is_ok());
    INFO("key length " << length);
    CHECK(digest_of(store) == reference_digest(records));
  }
}

TEST_CASE("an accumulator serializes to 2,056 bytes and back, and refuses other lengths",
          "[projections][digest]") {
  ProjectionAccumulator sums;
  sums.add("k", "v");
  sums.add("r/0", std::string(3000, 'x'));
  Bytes bytes = sums.serialize();
  auto parsed = ProjectionAccumulator::parse(bytes);
  REQUIRE(parsed.has_value());
  CHECK(*parsed == sums);
  CHECK(parsed->digest() == sums.digest());
  bytes.pop_back();
  CHECK(ProjectionAccumulator::parse(bytes).error().code() == Code::kCorrupt);
}

// A random key from a small space, so that puts overwrite and erases hit.
std::string random_key(std::mt19937_64& rng) {
  static const char* kPrefixes[] = {"#/next", "r/", "m/", "g/k/r/", "L/"};
  std::string key = kPrefixes[rng() % 5];
  if (key != "#/next") key += std::to_string(rng() % 40);
  return key;
}

std::string random_value(std::mt19937_64& rng) {
  size_t n = rng() % 5 == 0 ? 0 : rng() % 300;
  std::string value(n, '\0');
  for (char& c : value) c = static_cast<char>(rng());
  return value;
}

// Erases `key` (one time in four) or puts a random value under it, in `store` and `model`.
void random_write(std::mt19937_64& rng, KeyValueStore& store, const std::string& key,
                  std::map<std::string, std::string>& model) {
  if (rng() % 4 == 0) {
    REQUIRE(store.erase(key).is_ok());
    model.erase(key);
  } else {
    std::string value = random_value(rng);
    REQUIRE(store.put(key, value).is_ok());
    model[key] = value;
  }
}

TEST_CASE("the incremental digest equals the from-scratch digest over random put and erase "
          "sequences",
          "[projections][digest][property]") {
  ThreadPool pool(3);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    // Even seeds hash on a pool, and update rarely enough for many changes to share out.
    ThreadPool* hashers = seed % 2 == 0 ? &pool : nullptr;
    const uint64_t update_every = seed % 2 == 0 ? 150 : 10;
    MemoryProjectionStore inner;
    std::map<std::string, std::string> model;
    // A random starting store whose sums come from a scan, or are unknown.
    for (int i = rng() % 30; i > 0; --i) {
      std::string key = random_key(rng), value = random_value(rng);
      REQUIRE(inner.put(key, value).is_ok());
      model[key] = value;
    }
    std::optional<ProjectionAccumulator> start;
    if (seed % 3 != 0) start = accumulate_projection_store(inner).value();
    DigestTracker tracker(start);
    DigestedStore store(inner, tracker);
    for (int step = 0; step < 200; ++step) {
      std::string key = random_key(rng);
      if (rng() % 2 == 0) {  // a fold reads before it writes; reads change nothing
        auto read = store.get(rng() % 4 == 0 ? random_key(rng) : key);
        REQUIRE(read.has_value());
      }
      random_write(rng, store, key, model);
      if (rng() % (hashers != nullptr ? 400 : 17) == 0) tracker.forget();
      if (rng() % update_every == 0 || step == 199) {
        INFO("seed " << seed << ", step " << step);
        auto sums = tracker.update(inner, hashers);
        REQUIRE(sums.has_value());
        CHECK(*sums == accumulate_projection_store(inner).value());
        CHECK(sums->count() == model.size());
        CHECK(sums->digest() == reference_digest(model));
        CHECK(tracker.knows_sums());
      }
    }
  }
}

// Forwards the four operations every store has, so that put_replacing and erase_replacing are
// KeyValueStore's defaults (a get before the write).
class PlainStore final : public KeyValueStore {
 public:
  explicit PlainStore(KeyValueStore& inner) : inner_(inner) {}
  Result<std::optional<std::string>> get(std::string_view key) const override {
    return inner_.get(key);
  }
  Status put(std::string_view key, std::string_view value) override {
    return inner_.put(key, value);
  }
  Status erase(std::string_view key) override { return inner_.erase(key); }
  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return inner_.scan(prefix, visit);
  }

 private:
  KeyValueStore& inner_;
};

TEST_CASE("a store summed while it is written has the sums of a full scan over random put and "
          "erase sequences",
          "[projections][digest][property]") {
  ThreadPool pool(3);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    INFO("seed " << seed);
    MemoryProjectionStore inner;
    PlainStore plain(inner);
    // Odd seeds go through KeyValueStore's put_replacing and erase_replacing, even ones
    // through MemoryProjectionStore's own.
    KeyValueStore& target = seed % 2 == 0 ? static_cast<KeyValueStore&>(inner) : plain;
    std::map<std::string, std::string> model;
    // Some stores start with records whose sums the SummingStore is given.
    ProjectionAccumulator start;
    if (seed % 3 == 0) {
      for (int i = rng() % 30; i > 0; --i) {
        std::string key = random_key(rng), value = random_value(rng);
        REQUIRE(inner.put(key, value).is_ok());
        model[key] = value;
      }
      start = accumulate_projection_store(inner).value();
    }
    SummingStore store(target, start);
    // Some records are hashed by the writer (put_summed), into sums handed in now and then.
    ProjectionAccumulator summed;
    for (int step = 0; step < 300; ++step) {
      if (rng() % 4 == 0) {
        std::string key = random_key(rng), value = random_value(rng);
        REQUIRE(store.put_summed(key, value).is_ok());
        summed.add(key, value);
        model[key] = value;
      } else {
        random_write(rng, store, random_key(rng), model);
      }
      if (rng() % 23 == 0) store.hand_over();
      const bool check = rng() % 61 == 0 || step == 299;
      if (rng() % 7 == 0 || check) {
        store.add_summed(summed);
        summed = ProjectionAccumulator();
      }
      if (check) {
        INFO("step " << step);
        ProjectionAccumulator sums = store.sums(rng() % 2 == 0 ? &pool : nullptr);
        CHECK(sums == accumulate_projection_store(inner).value());
        CHECK(sums.count() == model.size());
        CHECK(sums.digest() == reference_digest(model));
      }
    }
  }
}

TEST_CASE("batches handed over while the worker still hashes the last one are hashed by the "
          "writer, to the same sums",
          "[projections][digest]") {
  // Each batch is a few milliseconds of hashing: the next hand-over, right after, finds the
  // worker busy and hashes its batch on this thread. Some records replace others, so that
  // both what was added and what was removed are summed there.
  MemoryProjectionStore inner;
  std::map<std::string, std::string> model;
  SummingStore store(inner);
  for (int batch = 0; batch < 8; ++batch) {
    for (int i = 0; i < 1500; ++i) {
      std::string key = "r/" + std::to_string((batch * 1500 + i) % 5000);
      std::string value(64 + i % 300, static_cast<char>('a' + batch));
      REQUIRE(store.put(key, value).is_ok());
      model[key] = value;
    }
    store.hand_over();
  }
  ProjectionAccumulator sums = store.sums();
  CHECK(sums.count() == model.size());
  CHECK(sums.digest() == reference_digest(model));
}

TEST_CASE("a commit's many changed records hashed on a pool give the sums of one thread and of "
          "a full scan",
          "[projections][digest]") {
  MemoryProjectionStore inner;
  for (int i = 0; i < 500; ++i) {
    REQUIRE(inner.put("r/" + std::to_string(i), std::string(i % 97, 'a' + i % 26)).is_ok());
  }
  ThreadPool pool(2);
  for (ThreadPool* hashers : {static_cast<ThreadPool*>(nullptr), &pool}) {
    MemoryProjectionStore copy = inner;
    DigestTracker tracker(accumulate_projection_store(copy).value());
    DigestedStore store(copy, tracker);
    for (int i = 0; i < 500; i += 2) REQUIRE(store.put("r/" + std::to_string(i), "new").is_ok());
    for (int i = 1; i < 200; i += 6) REQUIRE(store.erase("r/" + std::to_string(i)).is_ok());
    for (int i = 0; i < 100; ++i) REQUIRE(store.put("w/" + std::to_string(i), "added").is_ok());
    auto sums = tracker.update(copy, hashers);
    REQUIRE(sums.has_value());
    CHECK(*sums == accumulate_projection_store(copy).value());
    CHECK(sums->count() == copy.size());
  }
}

TEST_CASE("writing a value back to what it was leaves the digest unchanged",
          "[projections][digest]") {
  MemoryProjectionStore inner;
  REQUIRE(inner.put("r/1", "view").is_ok());
  DigestTracker tracker(accumulate_projection_store(inner).value());
  const Digest before = tracker.update(inner).value().digest();
  DigestedStore store(inner, tracker);
  REQUIRE(store.put("r/1", "view").is_ok());  // the same value: nothing to track
  REQUIRE(store.erase("r/3").is_ok());        // absent, and stays absent
  CHECK(tracker.update(inner).value().digest() == before);
  REQUIRE(store.put("r/1", "changed").is_ok());
  REQUIRE(store.put("r/2", "new").is_ok());
  REQUIRE(store.erase("r/2").is_ok());
  REQUIRE(store.put("r/1", "view").is_ok());
  CHECK(tracker.update(inner).value().digest() == before);
  REQUIRE(store.put("r/1", "view").is_ok());
  REQUIRE(store.put("r/1", "other").is_ok());
  MemoryProjectionStore expected;
  REQUIRE(expected.put("r/1", "other").is_ok());
  CHECK(tracker.update(inner).value().digest() == digest_of(expected));
  REQUIRE(store.erase("r/1").is_ok());
  CHECK(tracker.update(inner).value().digest() == digest_of(MemoryProjectionStore()));
}

TEST_CASE("the projection statement is the documented note body and parses back strictly",
          "[projections][digest]") {
  Digest d{};
  d.fill(0xab);
  const std::string text = projection_statement("example.org/log", 42, d);
  CHECK(text == "evledger/projections/v3\nexample.org/log\n42\n" + base64_encode(d) + "\n");
  auto parsed = parse_projection_statement(text);
  REQUIRE(parsed.has_value());
  CHECK(parsed->origin == "example.org/log");
  CHECK(parsed->size == 42);
  CHECK(parsed->digest == d);
  for (const std::string& bad :
       {std::string("evledger/projections/v1\nexample.org/log\n42\n") + base64_encode(d) + "\n",
        "evledger/projections/v3\nexample.org/log\n042\n" + base64_encode(d) + "\n",
        "evledger/projections/v3\n\n42\n" + base64_encode(d) + "\n",
        "evledger/projections/v3\nexample.org/log\n42\n" + base64_encode(d),
        "evledger/projections/v3\nexample.org/log\n42\n" + base64_encode(d) + "\nmore\n",
        std::string("evledger/projections/v3\nexample.org/log\n42\nAAAA\n")}) {
    INFO(bad);
    CHECK(parse_projection_statement(bad).error().code() == Code::kRejected);
  }
}

TEST_CASE("a statement opens only with the log key's signature and its origin",
          "[projections][digest]") {
  SecretKey log = test::test_key("example.org/test-log", 0x12);
  SecretKey other = test::test_key("example.org/other-log", 0x21);
  Digest d = sha256(as_bytes(std::string_view("state")));
  auto note = sign_note(projection_statement("example.org/test-log", 7, d), log);
  REQUIRE(note.has_value());
  auto opened = open_projection_statement(*note, log.verifier());
  REQUIRE(opened.has_value());
  CHECK(opened->size == 7);
  CHECK(opened->digest == d);
  CHECK(open_projection_statement(*note, other.verifier()).error().code() == Code::kRejected);
  // A changed digest line breaks the signature.
  std::string forged = *note;
  forged.replace(forged.find(base64_encode(d)), 4, "AAAA");
  CHECK(open_projection_statement(forged, log.verifier()).error().code() == Code::kRejected);
  // Signed by the right key about another log: the origin must be the key's name.
  auto elsewhere = sign_note(projection_statement("example.org/other-log", 7, d), log);
  REQUIRE(elsewhere.has_value());
  CHECK(open_projection_statement(*elsewhere, log.verifier()).error().code() ==
        Code::kRejected);
}

}  // namespace
}  // namespace evl
