// A mirror's library parts: consistency paths to a prefix, split-view evidence (format, what it
// proves, what it refuses) and Ledger::append_upstream against a log ledger.
#include <catch2/catch.hpp>

#include <random>

#include "keys/checkpoint.h"
#include "ledger/ledger.h"
#include "ledger/merkle.h"
#include "ledger/mirror.h"
#include "ledger/split_view.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::Cast;
using test::TempDir;

Hash leaf_of(uint64_t i, uint8_t branch = 0) {
  Bytes entry{static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8), branch};
  return leaf_hash(entry);
}

MemoryHashStore tree_of(uint64_t size, uint64_t fork_at = UINT64_MAX) {
  MemoryHashStore tree;
  for (uint64_t i = 0; i < size; ++i) tree.append(leaf_of(i, i >= fork_at ? 1 : 0));
  return tree;
}

std::string signed_checkpoint(const MemoryHashStore& tree, const SecretKey& key) {
  return sign_checkpoint(Checkpoint{key.name(), tree.size(), tree.root(), {}}, key);
}

TEST_CASE("a prefix path leads to the new root and gives the prefix's root", "[mirror][merkle]") {
  MemoryHashStore tree = tree_of(300);
  for (uint64_t n : {1, 2, 3, 7, 8, 64, 255, 256, 257, 299}) {
    auto path = prove_prefix_path(300, n, tree);
    REQUIRE(path);
    auto prefix = prefix_root_from_path(n, 300, *path, tree.root());
    REQUIRE(prefix);
    CHECK(*prefix == tree_of(n).root());
    // Every hash enters the new root: changing any one breaks the path.
    for (size_t i = 0; i < path->size(); ++i) {
      auto bent = *path;
      bent[i][0] ^= 1;
      CHECK_FALSE(prefix_root_from_path(n, 300, bent, tree.root()));
    }
  }
  CHECK_FALSE(prefix_root_from_path(0, 300, {}, tree.root()));
  CHECK_FALSE(prefix_root_from_path(300, 300, {}, tree.root()));
}

TEST_CASE("split-view evidence of two roots at one size and of a forked prefix is proven",
          "[mirror][split-view]") {
  Cast cast;
  for (auto [older, newer] : {std::pair<uint64_t, uint64_t>{20, 20}, {20, 37}, {16, 37}, {1, 5}}) {
    INFO(older << " -> " << newer);
    MemoryHashStore a = tree_of(older, 0), b = tree_of(newer);  // a differs from entry 0
    auto compared = compare_checkpoints(signed_checkpoint(b, cast.log),
                                        signed_checkpoint(a, cast.log), cast.log.verifier(), b);
    REQUIRE(compared);
    REQUIRE(compared->has_value());
    const SplitView& evidence = **compared;
    auto parsed = parse_split_view(format_split_view(evidence));
    REQUIRE(parsed);
    CHECK(parsed->older == evidence.older);
    CHECK(parsed->newer == evidence.newer);
    CHECK(parsed->path == evidence.path);
    auto finding = check_split_view(*parsed, cast.log.verifier());
    REQUIRE(finding);
    CHECK(finding->older.size == older);
    CHECK(finding->newer.size == newer);
    if (older < newer) CHECK(finding->older_in_newer == tree_of(older).root());
    CHECK_FALSE(check_split_view(*parsed, cast.admin.verifier()));
  }
}

TEST_CASE("consistent checkpoints give no evidence, and a tree that is not the signed one no "
          "proof either way", "[mirror][split-view]") {
  Cast cast;
  MemoryHashStore a = tree_of(20), b = tree_of(37);
  auto compared = compare_checkpoints(signed_checkpoint(a, cast.log),
                                      signed_checkpoint(b, cast.log), cast.log.verifier(), b);
  REQUIRE(compared);
  CHECK_FALSE(compared->has_value());
  MemoryHashStore other = tree_of(37, 30);
  auto wrong = compare_checkpoints(signed_checkpoint(tree_of(20, 0), cast.log),
                                   signed_checkpoint(b, cast.log), cast.log.verifier(), other);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code() == Code::kCorrupt);
}

TEST_CASE("doctored or incomplete split-view evidence is refused with a reason",
          "[mirror][split-view]") {
  Cast cast;
  MemoryHashStore a = tree_of(20, 3), b = tree_of(37);
  SplitView evidence{signed_checkpoint(a, cast.log), signed_checkpoint(b, cast.log), {}};
  auto path = prove_prefix_path(37, 20, b);
  REQUIRE(path);
  evidence.path = *path;
  REQUIRE(check_split_view(evidence, cast.log.verifier()));
  SECTION("a bent path proves nothing") {
    evidence.path[1][5] ^= 0x40;
    auto r = check_split_view(evidence, cast.log.verifier());
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message(), Catch::Contains("proves nothing"));
  }
  SECTION("a path for a consistent pair is no split view") {
    evidence.older = signed_checkpoint(tree_of(20), cast.log);
    CHECK_FALSE(check_split_view(evidence, cast.log.verifier()));
  }
  SECTION("a checkpoint signed by another key") {
    evidence.older = sign_checkpoint(Checkpoint{cast.log.name(), 20, a.root(), {}},
                                     test::test_key(cast.log.name(), 0x77));
    CHECK_FALSE(check_split_view(evidence, cast.log.verifier()));
  }
  SECTION("a truncated file") {
    std::string text = format_split_view(evidence);
    for (size_t cut : {size_t{10}, text.size() / 2, text.find("\n\n") + 1}) {
      auto parsed = parse_split_view(text.substr(0, cut));
      CHECK((!parsed || !check_split_view(*parsed, cast.log.verifier())));
    }
  }
  SECTION("a sizes line that is not the checkpoints' sizes (found by fuzzing)") {
    std::string text = format_split_view(evidence);
    REQUIRE(text.find("\nsizes 20 37\n") != std::string::npos);
    text.replace(text.find("sizes 20 37"), 11, "sizes 21 37");
    auto parsed = parse_split_view(text);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.error().message(),
               Catch::Contains("the sizes line gives the older checkpoint size 21, but it is of "
                               "size 20"));
  }
  SECTION("two equal roots") {
    evidence.older = evidence.newer;
    evidence.path.clear();
    CHECK_FALSE(check_split_view(evidence, cast.log.verifier()));
  }
}

// ---- Ledger::append_upstream ----------------------------------------------------------------

struct Upstreamed {
  TempDir log_dir, mirror_dir;
  Cast cast;
  std::unique_ptr<Ledger> log;
  std::vector<Bytes> entries;

  Upstreamed() {
    log = test::open_test_ledger(log_dir, [] {
      OpenOptions o;
      o.create = true;
      return o;
    }());
    test::append_all(*log, cast.prologue_entries());
    std::vector<Bytes> batch;
    for (int i = 0; i < 40; ++i) {
      batch.push_back(test::signed_entry(
          cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
    }
    test::append_all(*log, batch);
    for (uint64_t i = 0; i < log->size(); ++i) entries.push_back(log->entry(i).value());
  }

  std::unique_ptr<Ledger> open_mirror() {
    OpenOptions o;
    o.dir = mirror_dir.str();
    o.create = true;
    o.mirror_of = cast.log.verifier();
    auto m = Ledger::open(o);
    if (!m) FAIL(m.error().message());
    return std::move(*m);
  }

  std::vector<Hash> path_to(uint64_t end) {
    std::vector<Hash> path;
    REQUIRE(log->read_tree([&](const HashReader& h, uint64_t size) {
      auto p = prove_prefix_path(size, end, h);
      REQUIRE(p);
      path = *p;
      return Status::ok();
    }));
    return path;
  }
};

TEST_CASE("a mirror stores upstream entries in proved batches and ends with the log's checkpoint",
          "[mirror][ledger]") {
  Upstreamed up;
  auto mirror = up.open_mirror();
  const std::string note = up.log->checkpoint().value();
  std::span<const Bytes> all(up.entries);
  UpstreamBatch first{0, all.subspan(0, 17), note, up.path_to(17), std::nullopt, nullptr};
  REQUIRE(mirror->append_upstream(first));
  CHECK(mirror->size() == 17);
  CHECK(mirror->mirror_target().value() == note);
  CHECK_FALSE(mirror->checkpoint());  // none yet: the tree of 17 is no checkpoint the log signed
  UpstreamBatch rest{17, all.subspan(17), note, {}, std::nullopt, nullptr};
  REQUIRE(mirror->append_upstream(rest));
  CHECK(mirror->size() == up.entries.size());
  CHECK(mirror->checkpoint().value() == note);
  CHECK_FALSE(mirror->mirror_target());
  CHECK(mirror->root(up.entries.size()).value() == up.log->root(up.entries.size()).value());
  auto refused = mirror->append(std::vector<Bytes>{up.entries[5]});
  CHECK_THAT(refused.at(0).status.message(), Catch::Contains("is a mirror of"));
}

TEST_CASE("a mirror's batches take what keeps their transaction within its dirty pages",
          "[mirror][ledger]") {
  Upstreamed up;
  auto mirror = up.open_mirror();
  // An empty mirror counts a page per entry (2 KiB entries overflow one each) and a page of
  // each index: a batch takes the budget's pages less those few.
  CHECK(mirror->upstream_batch_entries(0) == 0);
  CHECK(mirror->upstream_batch_entries(1) == 1);
  CHECK(mirror->upstream_batch_entries(kMirrorChunkEntries) == kMirrorChunkEntries);
  const size_t empty = mirror->upstream_batch_entries(1000000);
  CHECK(empty < kUpstreamDirtyPages);
  CHECK(empty >= kUpstreamDirtyPages - 3);
  // The test's entries are small (many to a page): once the mirror holds some, a batch of
  // them may take more.
  const std::string note = up.log->checkpoint().value();
  REQUIRE(mirror->append_upstream({0, up.entries, note, {}, std::nullopt, nullptr}));
  CHECK(mirror->upstream_batch_entries(1000000) > 2 * empty);
  CHECK(mirror->upstream_batch_entries(kMirrorChunkEntries) == kMirrorChunkEntries);
}

TEST_CASE("a mirror stores nothing of a batch with a tampered entry, a repeated event, a wrong "
          "path or a forged checkpoint", "[mirror][ledger]") {
  Upstreamed up;
  auto mirror = up.open_mirror();
  const std::string note = up.log->checkpoint().value();
  std::vector<Bytes> entries = up.entries;
  const uint64_t n = entries.size();
  SECTION("a tampered entry") {
    entries[9].back() ^= 1;
    Status s = mirror->append_upstream({0, entries, note, {}, std::nullopt, nullptr});
    CHECK_THAT(s.message(), Catch::Contains("entry 9 of the upstream"));
  }
  SECTION("a repeated event") {
    entries[n - 1] = entries[n - 2];
    Status s = mirror->append_upstream({0, entries, note, {}, std::nullopt, nullptr});
    CHECK_THAT(s.message(), Catch::Contains("repeats the event"));
  }
  SECTION("entries in another order") {
    std::swap(entries[20], entries[21]);
    Status s = mirror->append_upstream({0, entries, note, {}, std::nullopt, nullptr});
    CHECK_THAT(s.message(), Catch::Contains("give the root"));
  }
  SECTION("a wrong path") {
    auto path = up.path_to(17);
    path[0][0] ^= 1;
    Status s = mirror->append_upstream(
        {0, std::span<const Bytes>(entries).subspan(0, 17), note, path, std::nullopt, nullptr});
    CHECK_THAT(s.message(), Catch::Contains("does not match its checkpoint"));
  }
  SECTION("a checkpoint signed by another key") {
    Checkpoint forged{up.cast.log.name(), n, up.log->root(n).value(), {}};
    std::string other = sign_checkpoint(forged, test::test_key(up.cast.log.name(), 0x55));
    Status s = mirror->append_upstream({0, entries, other, {}, std::nullopt, nullptr});
    CHECK_THAT(s.message(), Catch::Contains("checkpoint"));
  }
  CHECK(mirror->size() == 0);
  CHECK_FALSE(mirror->checkpoint());
}

TEST_CASE("a mirror opens only as the mirror of its key, and a log never as a mirror",
          "[mirror][ledger]") {
  Upstreamed up;
  { auto mirror = up.open_mirror(); }
  OpenOptions as_log;
  as_log.dir = up.mirror_dir.str();
  as_log.log_key = test::test_log_key();
  auto opened = Ledger::open(as_log);
  REQUIRE_FALSE(opened);
  CHECK_THAT(opened.error().message(), Catch::Contains("is a mirror of"));
  OpenOptions own;  // a writer of entries of its own, naming no log key (import, serve)
  own.dir = up.mirror_dir.str();
  own.own_entries = true;
  auto refused = Ledger::open(own);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == Code::kUsage);
  CHECK_THAT(refused.error().message(), Catch::Contains("takes no entries of its own") &&
                                            Catch::Contains("--to URL"));
  own.own_entries = false;  // a rebuild opens it as the mirror it is
  CHECK(Ledger::open(own));
  OpenOptions other = as_log;
  other.mirror_of = up.cast.admin.verifier();
  CHECK_FALSE(Ledger::open(other));
  up.log.reset();
  OpenOptions log_as_mirror;
  log_as_mirror.dir = up.log_dir.str();
  log_as_mirror.mirror_of = up.cast.log.verifier();
  CHECK_FALSE(Ledger::open(log_as_mirror));
}

}  // namespace
}  // namespace evl
