// The ledger's signed projection statements: one per checkpoint, by the log key, stating the
// digest of the projections at exactly that size; older ledgers, ledgers without projections,
// compromise refolds, rebuilds, and tampering.
#include <lmdb.h>

#include <catch2/catch.hpp>
#include <map>

#include "keys/note.h"
#include "ledger/ledger.h"
#include "projections/digest.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "projections/statement_audit.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/raw_lmdb.h"
#include "tests/support/test_support.h"
#include "tools/commands.h"

namespace evl {
namespace {

using test::Cast;
using test::TempDir;
using test::append_all;

using test::open_read_only;
using test::put_raw;
using test::read_raw;
using test::with_raw_db;
using test::write_raw;

std::unique_ptr<Ledger> open_ledger(const TempDir& dir, bool with_projections = true,
                                    uint64_t map_size = 64ull << 30) {
  OpenOptions options;
  options.create = true;
  options.map_size = map_size;
  if (with_projections) options.hook = make_projection_hook();
  return test::open_test_ledger(dir, options);
}

Bytes observation(const Cast& cast, int n, const char* source = "gpumode") {
  return test::signed_entry(cast.importer,
                            test::observation_body(cast.importer, source, std::to_string(n)));
}

// A few commits of different kinds: manifests, observations, attestations.
void append_activity(Ledger& ledger, const Cast& cast, int first, int commits) {
  for (int c = first; c < first + commits; ++c) {
    std::vector<Bytes> batch;
    for (int i = 0; i <= c % 3; ++i) batch.push_back(observation(cast, 10 * c + i));
    if (c % 2 == 0) {
      batch.push_back(test::signed_entry(
          cast.importer, test::manifest_body(cast.importer, test::environment_manifest_text(
                                                                "vendor-" + std::to_string(c)))));
    }
    append_all(ledger, std::move(batch));
  }
}

// The full-scan digest of the ledger's stored projections and the size they cover.
std::pair<Digest, uint64_t> stored_state_digest(const Ledger& ledger) {
  std::pair<Digest, uint64_t> out{};
  REQUIRE(ledger.read_state([&](const KeyValueStore& state, uint64_t size) -> Status {
                  auto digest = projection_digest(state);
                  if (!digest) return digest.error();
                  REQUIRE(projected_size(state).value() == size);
                  out = {*digest, size};
                  return Status::ok();
                })
              .is_ok());
  return out;
}

ProjectionStatement open_statement(const Ledger& ledger, std::optional<uint64_t> size) {
  auto note = ledger.statement(size);
  INFO((note ? std::string() : note.error().message()));
  REQUIRE(note.has_value());
  auto opened = open_projection_statement(*note, ledger.log_verifier().value());
  INFO((opened ? std::string() : opened.error().message()));
  REQUIRE(opened.has_value());
  return *opened;
}

std::vector<uint64_t> checkpoint_sizes(const Ledger& ledger) {
  std::vector<uint64_t> sizes;
  REQUIRE(ledger.scan_checkpoints([&](uint64_t size, std::string_view) -> Status {
                  sizes.push_back(size);
                  return Status::ok();
                })
              .is_ok());
  return sizes;
}

std::map<uint64_t, Digest> folded_digests(const Ledger& ledger, std::vector<uint64_t> sizes) {
  std::map<uint64_t, Digest> out;
  Status s = fold_projection_digests(ledger, sizes, [&](uint64_t size, const Digest& digest) {
    out[size] = digest;
    return Status::ok();
  });
  INFO(s.message());
  REQUIRE(s.is_ok());
  return out;
}

// Every checkpoint has a statement whose digest is a fresh fold of the log at its size.
void check_every_checkpoint_stated(const Ledger& ledger) {
  auto sizes = checkpoint_sizes(ledger);
  REQUIRE_FALSE(sizes.empty());
  auto folded = folded_digests(ledger, sizes);
  for (uint64_t size : sizes) {
    INFO("checkpoint " << size);
    ProjectionStatement statement = open_statement(ledger, size);
    CHECK(statement.size == size);
    CHECK(statement.origin == std::string(test::kTestOrigin));
    CHECK(statement.digest == folded.at(size));
  }
}

// A ledger with the prologue and `commits` commits of activity: its size and stated digest.
std::pair<uint64_t, Digest> stated_ledger(const TempDir& dir, const Cast& cast, int commits) {
  auto ledger = open_ledger(dir);
  append_all(*ledger, cast.prologue_entries());
  append_activity(*ledger, cast, 0, commits);
  return {ledger->size(), open_statement(*ledger, std::nullopt).digest};
}

TEST_CASE("every commit with projections stores a statement by the log key about its state",
          "[projections][statement]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_all(*ledger, cast.prologue_entries());
  for (int c = 0; c < 8; ++c) {
    append_activity(*ledger, cast, c, 1);
    // The newest statement states exactly what a full scan of the stored state gives.
    auto [digest, size] = stored_state_digest(*ledger);
    ProjectionStatement newest = open_statement(*ledger, std::nullopt);
    CHECK(newest.size == size);
    CHECK(newest.digest == digest);
  }
  check_every_checkpoint_stated(*ledger);
  uint64_t statements = 0;
  REQUIRE(ledger->scan_statements([&](uint64_t, std::string_view) -> Status {
                  ++statements;
                  return Status::ok();
                })
              .is_ok());
  CHECK(statements == checkpoint_sizes(*ledger).size());
  // Reopened read-only, the statements read the same.
  ledger.reset();
  auto reader = open_read_only(dir);
  check_every_checkpoint_stated(*reader);
  CHECK(reader->statement(3).error().code() == Code::kNotFound);
}

TEST_CASE("a ledger written without projections has no statements until a writer with them "
          "opens it",
          "[projections][statement]") {
  TempDir dir;
  Cast cast;
  {
    auto ledger = open_ledger(dir, false);
    append_all(*ledger, cast.prologue_entries());
    append_activity(*ledger, cast, 0, 3);
    CHECK(ledger->statement().error().code() == Code::kNotFound);
    CHECK(checkpoint_sizes(*ledger).size() == 4);
  }
  auto ledger = open_ledger(dir);  // catches the projections up and states the newest size
  ProjectionStatement newest = open_statement(*ledger, std::nullopt);
  CHECK(newest.size == ledger->size());
  CHECK(newest.digest == stored_state_digest(*ledger).first);
  CHECK(ledger->statement(5).error().code() == Code::kNotFound);
  append_activity(*ledger, cast, 3, 2);
  ProjectionStatement later = open_statement(*ledger, std::nullopt);
  CHECK(later.size == ledger->size());
  CHECK(later.digest == stored_state_digest(*ledger).first);
  auto folded = folded_digests(*ledger, {newest.size, later.size});
  CHECK(folded.at(newest.size) == newest.digest);
  CHECK(folded.at(later.size) == later.digest);
}

// Drops the named databases of a closed ledger, as a ledger from before them lacks them.
void drop_databases(const TempDir& dir, std::initializer_list<const char*> names) {
  test::with_raw_txn(dir, [&](MDB_txn* txn) {
    for (const char* name : names) {
      MDB_dbi dbi;
      REQUIRE(mdb_dbi_open(txn, name, 0, &dbi) == 0);
      REQUIRE(mdb_drop(txn, dbi, 1) == 0);
    }
  });
}

TEST_CASE("a ledger from before statements opens read-only and gains them from a writer",
          "[projections][statement][upgrade]") {
  TempDir dir;
  Cast cast;
  {
    auto ledger = open_ledger(dir);
    append_all(*ledger, cast.prologue_entries());
    append_activity(*ledger, cast, 0, 3);
  }
  drop_databases(dir, {"statements", "projection_sums"});
  {
    auto reader = open_read_only(dir);
    auto missing = reader->statement();
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code() == Code::kNotFound);
    CHECK_THAT(missing.error().message(), Catch::Contains("before them"));
    uint64_t seen = 0;
    CHECK(reader->scan_statements([&](uint64_t, std::string_view) -> Status {
                    ++seen;
                    return Status::ok();
                  })
              .is_ok());
    CHECK(seen == 0);
    CHECK(reader->checkpoint().has_value());
  }
  // A writer recreates the databases, recomputes the sums by one scan and states the newest.
  auto ledger = open_ledger(dir);
  ProjectionStatement newest = open_statement(*ledger, std::nullopt);
  CHECK(newest.size == ledger->size());
  CHECK(newest.digest == stored_state_digest(*ledger).first);
  append_activity(*ledger, cast, 3, 3);
  ProjectionStatement later = open_statement(*ledger, std::nullopt);
  CHECK(later.digest == stored_state_digest(*ledger).first);
  CHECK(folded_digests(*ledger, {later.size}).at(later.size) == later.digest);
}

TEST_CASE("damaged or stale sums are recomputed, never trusted", "[projections][statement]") {
  TempDir dir;
  Cast cast;
  {
    auto ledger = open_ledger(dir);
    append_all(*ledger, cast.prologue_entries());
    append_activity(*ledger, cast, 0, 2);
  }
  with_raw_db(dir, "projection_sums", [](MDB_txn* txn, MDB_dbi dbi) {
    put_raw(txn, dbi, "sums", std::string(2064, '\x07'));  // right length, wrong size and sums
  });
  auto ledger = open_ledger(dir);
  append_activity(*ledger, cast, 2, 2);
  check_every_checkpoint_stated(*ledger);
  CHECK(open_statement(*ledger, std::nullopt).digest == stored_state_digest(*ledger).first);
}

TEST_CASE("a rebuild that meets a damaged entry stops, names it and keeps the state it had",
          "[projections][statement][tamper]") {
  TempDir dir;
  Cast cast;
  Digest stated{};
  {
    auto ledger = open_ledger(dir);
    append_all(*ledger, cast.prologue_entries());
    std::vector<Bytes> batch;
    for (int i = 0; i < 1500; ++i) batch.push_back(observation(cast, i));
    append_all(*ledger, std::move(batch));
    stated = open_statement(*ledger, std::nullopt).digest;
  }
  // Entry 1000, several decoding chunks into the log, loses its last word.
  with_raw_db(dir, "entries", [](MDB_txn* txn, MDB_dbi dbi) {
    Bytes entry = read_raw(txn, dbi, 1000);
    entry.resize(entry.size() - 8);
    write_raw(txn, dbi, 1000, entry);
  });
  auto ledger = open_ledger(dir);
  Status rebuilt = ledger->rebuild_state();
  REQUIRE_FALSE(rebuilt.is_ok());
  CHECK(rebuilt.code() == Code::kCorrupt);
  CHECK_THAT(rebuilt.message(), Catch::Contains("entry 1000"));
  CHECK(stored_state_digest(*ledger).first == stated);
}

TEST_CASE("a compromise that refolds the projections gets a statement of the refolded state",
          "[projections][statement][policy]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_all(*ledger, cast.prologue_entries());
  append_activity(*ledger, cast, 0, 4);
  const uint64_t first_void = ledger->size() - 3;
  const Digest before = open_statement(*ledger, std::nullopt).digest;
  // The revoke and an observation by another source after it, in one commit.
  append_all(*ledger, {test::signed_entry(cast.admin,
                                          test::revoke_body(cast.admin, cast.importer.public_key(),
                                                            RevokeReason::kCompromised,
                                                            first_void))});
  ProjectionStatement after = open_statement(*ledger, std::nullopt);
  CHECK(after.size == ledger->size());
  CHECK(after.digest != before);
  CHECK(after.digest == stored_state_digest(*ledger).first);
  auto voided = ledger->read_state([](const KeyValueStore& state, uint64_t) -> Status {
    auto events = list_void_events(state);
    REQUIRE(events.has_value());
    CHECK(events->size() == 3);
    return Status::ok();
  });
  CHECK(voided.is_ok());
  check_every_checkpoint_stated(*ledger);
}

TEST_CASE("sums stay right when the map fills and a commit is staged again",
          "[projections][statement]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir, true, 1 << 20);  // 1 MiB: full after a few hundred entries
  append_all(*ledger, cast.prologue_entries());
  std::vector<Bytes> batch;
  for (int i = 0; i < 1500; ++i) batch.push_back(observation(cast, i));
  append_all(*ledger, std::move(batch));
  append_activity(*ledger, cast, 0, 2);
  check_every_checkpoint_stated(*ledger);
  const Digest stated = open_statement(*ledger, std::nullopt).digest;
  CHECK(stated == stored_state_digest(*ledger).first);
  // A rebuild writes a second copy of the state in one transaction: the map fills again, and
  // the rebuild's threads stop and start over in a bigger map.
  REQUIRE(ledger->rebuild_state().is_ok());
  CHECK(stored_state_digest(*ledger).first == stated);
  CHECK(open_statement(*ledger, std::nullopt).digest == stated);
}

TEST_CASE("a changed projection record or a forged statement is caught",
          "[projections][statement][tamper]") {
  TempDir dir;
  Cast cast;
  const auto [size, stated] = stated_ledger(dir, cast, 4);
  SECTION("a changed record: the stored state no longer matches its statement; a rebuild "
          "restores it") {
    with_raw_db(dir, "projections", [](MDB_txn* txn, MDB_dbi dbi) {
      MDB_cursor* cursor = nullptr;
      REQUIRE(mdb_cursor_open(txn, dbi, &cursor) == 0);
      MDB_val k, v;
      std::string key;
      for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
           rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        key.assign(static_cast<const char*>(k.mv_data), k.mv_size);
        if (key.rfind("r/", 0) == 0) break;
      }
      mdb_cursor_close(cursor);
      REQUIRE(key.rfind("r/", 0) == 0);
      put_raw(txn, dbi, key, "{\"tampered\":true}");
    });
    {
      auto reader = open_read_only(dir);
      CHECK(stored_state_digest(*reader).first != stated);
      CHECK(folded_digests(*reader, {size}).at(size) == stated);
    }
    auto ledger = open_ledger(dir);  // the state covers the log: opening does not refold
    CHECK(stored_state_digest(*ledger).first != stated);
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(stored_state_digest(*ledger).first == stated);
  }
  SECTION("a statement re-signed by the log key with another digest: the fold and a rebuild "
          "refuse it") {
    Digest wrong = sha256(as_bytes(std::string_view("not the state")));
    auto forged = sign_note(projection_statement(test::kTestOrigin, size, wrong), Cast().log);
    REQUIRE(forged.has_value());
    auto key = u64_be(size);
    with_raw_db(dir, "statements", [&](MDB_txn* txn, MDB_dbi dbi) {
      put_raw(txn, dbi, as_chars(ByteView(key)), *forged);
    });
    auto ledger = open_ledger(dir);
    CHECK(open_statement(*ledger, size).digest == wrong);  // its signature is good
    CHECK(folded_digests(*ledger, {size}).at(size) == stated);
    Status rebuilt = ledger->rebuild_state();
    CHECK(rebuilt.code() == Code::kCorrupt);
    CHECK_THAT(rebuilt.message(), Catch::Contains("statement"));
    CHECK_THAT(rebuilt.message(), Catch::Contains(base64_encode(wrong)));
    CHECK(stored_state_digest(*ledger).first == stated);  // the rebuild changed nothing
  }
  SECTION("a statement signed by another key does not open") {
    SecretKey impostor = test::test_key(std::string(test::kTestOrigin), 0x77);
    auto forged = sign_note(projection_statement(test::kTestOrigin, size, stated), impostor);
    REQUIRE(forged.has_value());
    auto key = u64_be(size);
    with_raw_db(dir, "statements", [&](MDB_txn* txn, MDB_dbi dbi) {
      put_raw(txn, dbi, as_chars(ByteView(key)), *forged);
    });
    auto reader = open_read_only(dir);
    auto note = reader->statement(size);
    REQUIRE(note.has_value());
    auto opened = open_projection_statement(*note, reader->log_verifier().value());
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code() == Code::kRejected);
  }
}

// The text of a statement of another projection format: the same lines under another first.
std::string other_format_statement(std::string_view format, uint64_t size, const Digest& digest) {
  std::string text = projection_statement(test::kTestOrigin, size, digest);
  return std::string(format) + text.substr(text.find('\n'));
}

TEST_CASE("statements of another projection format are kept, counted and replaced by a rebuild",
          "[projections][statement]") {
  TempDir dir;
  Cast cast;
  uint64_t older = 0, newest = 0;
  Digest stated{};
  {
    auto ledger = open_ledger(dir);
    append_all(*ledger, cast.prologue_entries());
    older = ledger->size();
    append_activity(*ledger, cast, 0, 3);
    newest = ledger->size();
    stated = open_statement(*ledger, newest).digest;
  }
  const Digest other_digest = sha256(as_bytes(std::string_view("another fold of the log")));
  auto store = [&](uint64_t size, const std::string& text, const SecretKey& key) {
    auto note = sign_note(text, key);
    REQUIRE(note.has_value());
    auto k = u64_be(size);
    with_raw_db(dir, "statements", [&](MDB_txn* txn, MDB_dbi dbi) {
      put_raw(txn, dbi, as_chars(ByteView(k)), *note);
    });
    return *note;
  };

  CHECK(other_projection_format(other_format_statement("evledger/projections/v1", 3, stated)) ==
        "evledger/projections/v1");
  CHECK(other_projection_format(other_format_statement("evledger/projections/v77", 3, stated)) ==
        "evledger/projections/v77");
  CHECK_FALSE(other_projection_format(projection_statement("o", 3, stated)).has_value());
  for (const char* not_a_format : {"evledger/projections/v", "evledger/projections/v01",
                                   "evledger/projections/vx", "evledger/other/v1", ""}) {
    INFO(not_a_format);
    CHECK_FALSE(
        other_projection_format(other_format_statement(not_a_format, 3, stated)).has_value());
  }
  auto parsed =
      parse_projection_statement(other_format_statement("evledger/projections/v1", 3, stated));
  REQUIRE_FALSE(parsed.has_value());
  CHECK_THAT(parsed.error().message(), Catch::Contains("'evledger/projections/v1'"));

  SECTION("at an earlier checkpoint: the audit checks its signature, counts it and passes") {
    const std::string note =
        store(older, other_format_statement("evledger/projections/v1", older, other_digest),
              Cast().log);
    auto reader = open_read_only(dir);
    StatementAudit report = audit_projection_statements(*reader, reader->log_verifier().value());
    INFO(report.status.message());
    CHECK(report.status.is_ok());
    REQUIRE(report.other_format.size() == 1);
    CHECK(report.other_format[0] ==
          std::pair<uint64_t, std::string>(older, "evledger/projections/v1"));
    CHECK(report.statements.back().first == newest);
    CHECK(report.unstated.empty());  // a statement of another format is a statement
    CHECK(cli::cmd_rebuild({"--ledger", dir.str(), "--check"}) == 0);
    // The statement command prints it as it is.
    CHECK(cli::cmd_statement({"--ledger", dir.str(), "--size", std::to_string(older)}) == 0);
    CHECK(reader->statement(older).value() == note);
  }
  SECTION("one that does not verify still fails the audit") {
    store(older, other_format_statement("evledger/projections/v1", older, other_digest),
          test::test_key(std::string(test::kTestOrigin), 0x77));
    auto reader = open_read_only(dir);
    StatementAudit report = audit_projection_statements(*reader, reader->log_verifier().value());
    CHECK(report.status.code() == Code::kRejected);
    CHECK_THAT(report.status.message(), Catch::Contains("does not verify"));
    CHECK(cli::cmd_statement({"--ledger", dir.str(), "--size", std::to_string(older)}) == 1);
  }
  SECTION("at the log's size: a rebuild replaces it with one of this format") {
    store(newest, other_format_statement("evledger/projections/v1", newest, other_digest),
          Cast().log);
    {
      auto reader = open_read_only(dir);
      StatementAudit report =
          audit_projection_statements(*reader, reader->log_verifier().value());
      CHECK(report.status.is_ok());  // the older statements are of this format
      CHECK(report.other_format.size() == 1);
    }
    auto ledger = open_ledger(dir);
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(open_statement(*ledger, newest).digest == stated);
    check_every_checkpoint_stated(*ledger);
  }
  SECTION("a statement of this format that differs is still refused") {
    store(newest, projection_statement(test::kTestOrigin, newest, other_digest), Cast().log);
    auto ledger = open_ledger(dir);
    CHECK(ledger->rebuild_state().code() == Code::kCorrupt);
  }
  SECTION("only statements of another format: nothing to check") {
    auto sizes = checkpoint_sizes(*open_read_only(dir));
    for (uint64_t size : sizes) {
      store(size, other_format_statement("evledger/projections/v1", size, other_digest),
            Cast().log);
    }
    auto reader = open_read_only(dir);
    StatementAudit report = audit_projection_statements(*reader, reader->log_verifier().value());
    CHECK(report.status.code() == Code::kNotFound);
    CHECK_THAT(report.status.message(), Catch::Contains("evledger/projections/v1"));
    CHECK(report.other_format.size() == sizes.size());
  }
}

TEST_CASE("a state of another projection format is refolded by the next writer, and its "
          "statement replaced", "[projections][statement]") {
  TempDir dir;
  Cast cast;
  const auto [size, stated] = stated_ledger(dir, cast, 3);
  {
    // v3 keeps no manifest records, and names its format.
    std::vector<std::string> manifest_records;
    std::optional<std::string> version;
    REQUIRE(open_read_only(dir)->read_state([&](const KeyValueStore& state, uint64_t) -> Status {
                    EVL_RETURN_IF_ERROR(state.scan("m/", [&](std::string_view k, std::string_view) {
                      manifest_records.emplace_back(k);
                      return true;
                    }));
                    auto v = state.get("#/version");
                    if (!v) return v.error();
                    version = *v;
                    return Status::ok();
                  })
                .is_ok());
    CHECK(manifest_records.empty());
    CHECK(version == std::string(kProjectionFormat));
  }
  // What an evledger of format v2 left: no #/version, a manifest record, a v2 statement.
  const Digest v2_digest = sha256(as_bytes(std::string_view("the v2 fold")));
  with_raw_db(dir, "projections", [](MDB_txn* txn, MDB_dbi dbi) {
    MDB_val k{9, const_cast<char*>("#/version")};
    REQUIRE(mdb_del(txn, dbi, &k, nullptr) == 0);
    put_raw(txn, dbi, "m/" + std::string(64, 'a'), "{\"index\":1}");
  });
  std::string text = projection_statement(test::kTestOrigin, size, v2_digest);
  text = "evledger/projections/v2" + text.substr(text.find('\n'));
  auto v2_note = sign_note(text, Cast().log);
  REQUIRE(v2_note.has_value());
  auto key = u64_be(size);
  with_raw_db(dir, "statements", [&](MDB_txn* txn, MDB_dbi dbi) {
    put_raw(txn, dbi, as_chars(ByteView(key)), *v2_note);
  });
  {
    // A reader sees the old state, and cannot check the v2 statement.
    auto reader = open_read_only(dir);
    CHECK(stored_state_digest(*reader).first != stated);
    StatementAudit report = audit_projection_statements(*reader, reader->log_verifier().value());
    CHECK(report.other_format.size() == 1);
  }
  auto ledger = open_ledger(dir);  // a writer refolds what it cannot continue
  CHECK(stored_state_digest(*ledger).first == stated);
  CHECK(open_statement(*ledger, size).digest == stated);
  check_every_checkpoint_stated(*ledger);
  append_activity(*ledger, cast, 3, 2);  // and continues it
  check_every_checkpoint_stated(*ledger);
}

TEST_CASE("the statement and rebuild --check commands on checkpoints without a statement",
          "[projections][statement][cli]") {
  TempDir dir;
  Cast cast;
  const std::vector<std::string> statement = {"--ledger", dir.str()};
  const std::vector<std::string> check = {"--ledger", dir.str(), "--check"};
  {
    auto ledger = open_ledger(dir, false);  // no projections: checkpoints, no statements
    append_all(*ledger, cast.prologue_entries());
  }
  CHECK(cli::cmd_statement(statement) == 1);
  CHECK(cli::cmd_rebuild(check) == 1);  // nothing to check is not a pass
  uint64_t stated = 0;
  {
    auto ledger = open_ledger(dir);  // a writer with projections states the newest checkpoint
    stated = ledger->size();
  }
  CHECK(cli::cmd_statement(statement) == 0);
  CHECK(cli::cmd_rebuild(check) == 0);
  {
    auto ledger = open_ledger(dir, false);
    append_activity(*ledger, cast, 0, 1);
  }
  // The newest checkpoint has none; the one before has; the check passes on what there is.
  CHECK(cli::cmd_statement(statement) == 1);
  CHECK(cli::cmd_statement({"--ledger", dir.str(), "--size", std::to_string(stated)}) == 0);
  CHECK(cli::cmd_rebuild(check) == 0);
  CHECK(cli::cmd_statement({"--ledger", dir.str(), "--size", "x"}) == 2);
  CHECK(cli::cmd_statement({"--ledger", dir.str() + "/none"}) == 3);
}

TEST_CASE("the auditor's fold refuses sizes that do not ascend", "[projections][statement]") {
  TempDir dir;
  Cast cast;
  auto ledger = open_ledger(dir);
  append_all(*ledger, cast.prologue_entries());
  std::vector<uint64_t> sizes = {5, 3};
  Status s = fold_projection_digests(*ledger, sizes, [](uint64_t, const Digest&) {
    return Status::ok();
  });
  CHECK(s.code() == Code::kUsage);
  // Size 0 is the empty state.
  auto folded = folded_digests(*ledger, {0, 5});
  CHECK(folded.at(0) == ProjectionAccumulator().digest());
  CHECK(folded.at(5) == open_statement(*ledger, 5).digest);
}

}  // namespace
}  // namespace evl
