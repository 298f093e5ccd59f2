// The projections kept by a real ledger (projections/ledger_hook.h): after every append, and
// after rebuild_state, they equal a naive fold of the log with each event's void cause taken
// from the key state of the whole prefix, and its author from the key state at its position.
#include "projections/ledger_hook.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <utility>
#include <string>

#include "ledger/ledger.h"
#include "projections/digest.h"
#include "projections/internal/prepared.h"
#include "projections/projector.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::Cast;
using test::TempDir;
using Contents = std::map<std::string, std::string>;

std::unique_ptr<Ledger> open_with_projections(const TempDir& dir, uint64_t batch_events,
                                              uint64_t batch_events_max = 65536) {
  OpenOptions options;
  options.create = true;
  ProjectionHookOptions hook;
  hook.rebuild_batch_events = batch_events;
  hook.rebuild_batch_events_max = batch_events_max;
  hook.rebuild_one_batch_max = 0;  // the batches asked for, however short the log
  options.hook = make_projection_hook(hook);
  return test::open_test_ledger(dir, options);
}

Contents state_of(const Ledger& ledger) {
  Contents out;
  REQUIRE(ledger
              .read_state([&](const KeyValueStore& state, uint64_t) {
                return state.scan("", [&](std::string_view k, std::string_view v) {
                  out.emplace(k, v);
                  return true;
                });
              })
              .is_ok());
  return out;
}

// The newest statement's digest is the digest of the state, from a full scan: the sums the
// append transactions and the rebuild keep while writing are those of what they wrote.
void check_statement(const Ledger& ledger) {
  auto note = ledger.statement(std::nullopt);
  REQUIRE(note.has_value());
  auto statement = open_projection_statement(*note, ledger.log_verifier().value());
  REQUIRE(statement.has_value());
  CHECK(statement->size == ledger.size());
  REQUIRE(ledger
              .read_state([&](const KeyValueStore& state, uint64_t) -> Status {
                auto digest = projection_digest(state);
                if (!digest) return digest.error();
                CHECK(*digest == statement->digest);
                return Status::ok();
              })
              .is_ok());
}

// Two passes over the log, one Projector::apply per event: the reference.
Contents naive_fold(const Ledger& ledger) {
  std::vector<EventBody> bodies;
  std::vector<Digest> ids;
  REQUIRE(ledger
              .scan(0, ledger.size(),
                    [&](uint64_t, ByteView bytes) -> Status {
                      auto entry = decode_entry(bytes);
                      REQUIRE(entry);
                      auto body = decode_body(entry->body);
                      REQUIRE(body);
                      bodies.push_back(std::move(body).value());
                      ids.push_back(event_id(entry->body));
                      return Status::ok();
                    })
              .is_ok());
  KeyPolicy final_keys;
  for (size_t i = 0; i < bodies.size(); ++i) final_keys.apply(i, bodies[i]);
  KeyPolicy running;
  MemoryProjectionStore store;
  Projector projector;
  EventManifests manifests;
  for (size_t i = 0; i < bodies.size(); ++i) {
    manifests.add(i, bodies[i], final_keys.void_cause(bodies[i].author, i).has_value());
  }
  for (size_t i = 0; i < bodies.size(); ++i) {
    running.apply(i, bodies[i]);
    ProjectedEvent e;
    e.index = i;
    e.id = ids[i];
    e.body = &bodies[i];
    if (const KeyRecord* author = running.find(bodies[i].author)) {
      e.author_name = author->name;
      e.author_roles = author->roles;
      e.author_scope = author->scope;
    } else {
      e.author_name = running.describe(bodies[i].author);
    }
    e.void_cause = final_keys.void_cause(bodies[i].author, i);
    e.rerun_tolerance_milli = final_keys.genesis()->rerun_tolerance_milli;
    e.manifests = &manifests;
    REQUIRE(projector.apply(store, e).is_ok());
  }
  return Contents(store.contents().begin(), store.contents().end());
}

void append_checked(Ledger& ledger, const SecretKey& key, const EventBody& body) {
  Bytes entry = test::signed_entry(key, body);
  auto outcomes = ledger.append(std::span<const Bytes>(&entry, 1));
  REQUIRE(outcomes.at(0).status.is_ok());
  CHECK(state_of(ledger) == naive_fold(ledger));
}

Digest manifest_digest_of(const EventBody& body) {
  return sha256(as_bytes(std::get<Observation>(body.payload).manifest.canonical));
}

TEST_CASE("the ledger's projections equal a naive fold after each append and a rebuild",
          "[projections][hook]") {
  for (auto [compromise, batch_events] : {std::pair<bool, uint64_t>{false, 16384}, {true, 16384},
                                           {false, 3}, {true, 4}, {true, 1}}) {
    INFO((compromise ? "with" : "without") << " a compromise that voids earlier events, "
                                           << "rebuilt in batches of " << batch_events);
    TempDir dir;
    Cast cast;
    auto ledger = open_with_projections(dir, batch_events);
    test::append_all(*ledger, cast.prologue_entries());
    std::vector<Digest> runs;
    uint64_t first_void = 0;
    for (int i = 0; i < 5; ++i) {
      if (i == 2) first_void = ledger->size();
      EventBody obs = test::observation_body(cast.importer, "gpumode", std::to_string(i));
      runs.push_back(manifest_digest_of(obs));
      append_checked(*ledger, cast.importer, obs);
      append_checked(*ledger, cast.runner, test::rerun_body(cast.runner, runs.back(), 150000 + i));
    }
    append_checked(*ledger, cast.attestor, test::attestation_body(cast.attestor, runs[3]));
    append_checked(*ledger, cast.curator, test::retract_body(cast.curator, runs[0]));
    if (compromise) {
      append_checked(*ledger, cast.admin,
                     test::revoke_body(cast.admin, cast.importer.public_key(),
                                       RevokeReason::kCompromised, first_void));
      CHECK(ledger->policy().voids_anything());
    }
    append_checked(*ledger, cast.runner, test::rerun_body(cast.runner, runs[4], 900000));
    const Contents incremental = state_of(*ledger);
    check_statement(*ledger);
    CHECK(incremental.count("v/" + std::string(20 - std::to_string(first_void).size(), '0') +
                            std::to_string(first_void)) == (compromise ? 1u : 0u));
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(state_of(*ledger) == incremental);
    check_statement(*ledger);
  }
}

// `text` with every environmentDigest the fixtures write (test_digest("environment"), which no
// manifest has) replaced by `env`.
void point_at_environment(std::string& text, const Digest& env) {
  const std::string fixture_env = digest_text(test::test_digest("environment"));
  for (size_t at = text.find(fixture_env); at != std::string::npos; at = text.find(fixture_env)) {
    text.replace(at, fixture_env.size(), digest_text(env));
  }
}

TEST_CASE("appends find the manifests that earlier commits registered in the log",
          "[projections][hook]") {
  for (bool compromise : {false, true}) {
    INFO((compromise ? "with" : "without") << " a compromise of the key that registered it");
    TempDir dir;
    Cast cast;
    auto ledger = open_with_projections(dir, 16384);
    test::append_all(*ledger, cast.prologue_entries());
    // Each in a commit of its own: the environment, an observation on it, a rerun on it.
    const uint64_t env_index = ledger->size();
    EventBody env =
        test::manifest_body(cast.importer, test::environment_manifest_text("lookup-vendor"));
    const Digest env_digest =
        sha256(as_bytes(std::get<ManifestEvent>(env.payload).manifest.canonical));
    append_checked(*ledger, cast.importer, env);
    EventBody obs = test::observation_body(cast.importer, "gpumode", "1");
    point_at_environment(std::get<Observation>(obs.payload).manifest.canonical, env_digest);
    const Digest run = manifest_digest_of(obs);
    append_checked(*ledger, cast.importer, obs);
    EventBody rerun = test::rerun_body(cast.runner, run, 150000);
    point_at_environment(std::get<Rerun>(rerun.payload).run.canonical, env_digest);
    append_checked(*ledger, cast.runner, rerun);
    if (compromise) {
      append_checked(*ledger, cast.admin,
                     test::revoke_body(cast.admin, cast.importer.public_key(),
                                       RevokeReason::kCompromised, env_index));
    }
    const Contents incremental = state_of(*ledger);
    auto view = parse_json(incremental.at("r/" + hex_encode(run)));
    REQUIRE(view.has_value());
    if (compromise) {
      CHECK(view->find("void")->is_string());  // the observation is void too
    } else {
      CHECK(json_string(*view, "gpu.vendor") == "lookup-vendor");
      const Json* reruns = view->find("reruns");
      REQUIRE((reruns != nullptr && reruns->is_array() && reruns->as_array().size() == 1));
      CHECK(json_string(reruns->as_array()[0], "hardware.vendor") == "lookup-vendor");
    }
    for (const auto& [key, value] : incremental) CHECK(key.rfind("m/", 0) != 0);
    check_statement(*ledger);
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(state_of(*ledger) == incremental);
  }
}

TEST_CASE("a rebuild tells how far it has folded every 512 entries and after each pass's last",
          "[projections][hook]") {
  for (bool compromise : {false, true}) {
    INFO((compromise ? "with" : "without") << " a compromise: two passes over the log, or one");
    TempDir dir;
    Cast cast;
    std::vector<std::pair<uint64_t, uint64_t>> told;
    ProjectionHookOptions hook;
    hook.rebuild_progress = [&](uint64_t folded, uint64_t total) {
      told.emplace_back(folded, total);
    };
    OpenOptions options;
    options.create = true;
    options.hook = make_projection_hook(hook);
    auto ledger = test::open_test_ledger(dir, options);
    test::append_all(*ledger, cast.prologue_entries());
    std::vector<Bytes> entries;
    for (int i = 0; i < 1100; ++i) {
      entries.push_back(test::signed_entry(
          cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
    }
    test::append_all(*ledger, entries);
    if (compromise) {
      Bytes revoke = test::signed_entry(
          cast.admin, test::revoke_body(cast.admin, cast.importer.public_key(),
                                        RevokeReason::kCompromised, 600));
      REQUIRE(ledger->append(std::span<const Bytes>(&revoke, 1)).at(0).status.is_ok());
    }
    told.clear();  // what the compromise's refold in its append told
    REQUIRE(ledger->rebuild_state().is_ok());
    const uint64_t size = ledger->size();
    std::vector<std::pair<uint64_t, uint64_t>> pass;
    for (uint64_t n = 512; n < size; n += 512) pass.emplace_back(n, size);
    pass.emplace_back(size, size);
    std::vector<std::pair<uint64_t, uint64_t>> expected = pass;
    if (compromise) expected.insert(expected.end(), pass.begin(), pass.end());
    CHECK(told == expected);
  }
}

TEST_CASE("a rebuild of a log many decoding chunks long equals a naive fold",
          "[projections][hook]") {
  // Batches of at least 700 events (more than a sixteenth of the log), then of a sixteenth
  // of it (99) capped at 64.
  const auto [batch_events, batch_events_max] =
      GENERATE(std::pair<uint64_t, uint64_t>{700, 65536}, std::pair<uint64_t, uint64_t>{16, 64});
  INFO("batches of " << batch_events << " to " << batch_events_max << " events");
  TempDir dir;
  Cast cast;
  auto ledger = open_with_projections(dir, batch_events, batch_events_max);
  test::append_all(*ledger, cast.prologue_entries());
  std::vector<Bytes> entries;
  std::vector<Digest> runs;
  for (int i = 0; i < 1300; ++i) {
    EventBody obs = test::observation_body(cast.importer, "gpumode", std::to_string(i));
    runs.push_back(manifest_digest_of(obs));
    entries.push_back(test::signed_entry(cast.importer, obs));
    if (i % 5 == 0) {
      entries.push_back(
          test::signed_entry(cast.runner, test::rerun_body(cast.runner, runs.back(), 150000 + i)));
    }
  }
  // Reruns of runs whose views earlier rebuild batches wrote and forgot.
  for (int i = 1; i < 40; i += 2) {
    entries.push_back(
        test::signed_entry(cast.runner, test::rerun_body(cast.runner, runs[i], 250000 + i)));
  }
  test::append_all(*ledger, entries);
  REQUIRE(ledger->size() == 5 + 1300 + 260 + 20);
  const Contents expected = naive_fold(*ledger);
  CHECK(state_of(*ledger) == expected);
  REQUIRE(ledger->rebuild_state().is_ok());
  CHECK(state_of(*ledger) == expected);
  check_statement(*ledger);
}

TEST_CASE("a rebuild that replaces and removes records written by its earlier batches keeps "
          "the state's digest",
          "[projections][hook]") {
  // Runs wait for an environment manifest that arrives batches later: the rebuild writes their
  // waiting records, then removes them and rewrites the views, and its statement must still
  // be the digest of what it left.
  const std::string environment = test::environment_manifest_text();
  const std::string waited = digest_text(test::test_digest("environment"));
  const std::string arrives = digest_text(sha256(as_bytes(environment)));
  for (uint64_t batch_events : {1, 2, 5, 16384}) {
    INFO("rebuilt in batches of " << batch_events);
    TempDir dir;
    Cast cast;
    auto ledger = open_with_projections(dir, batch_events);
    test::append_all(*ledger, cast.prologue_entries());
    for (int i = 0; i < 6; ++i) {
      EventBody obs = test::observation_body(cast.importer, "gpumode", std::to_string(i));
      std::string& text = std::get<Observation>(obs.payload).manifest.canonical;
      const size_t at = text.find(waited);
      REQUIRE(at != std::string::npos);
      text.replace(at, waited.size(), arrives);
      append_checked(*ledger, cast.importer, obs);
    }
    auto waits_for_it = [&](const auto& record) {
      return record.first.rfind("w/" + arrives.substr(7), 0) == 0;
    };
    const Contents waiting = state_of(*ledger);
    CHECK(std::count_if(waiting.begin(), waiting.end(), waits_for_it) == 6);
    append_checked(*ledger, cast.importer, test::manifest_body(cast.importer, environment));
    const Contents resolved = state_of(*ledger);
    CHECK(std::none_of(resolved.begin(), resolved.end(), waits_for_it));
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(state_of(*ledger) == resolved);
    check_statement(*ledger);
  }
}

TEST_CASE("a rebuild empties projections whose records have LMDB overflow pages of their own",
          "[projections][hook]") {
  // A run view with many attestations outgrows half a page: LMDB keeps it on overflow pages,
  // and emptying the projections then goes record by record instead of mdb_drop.
  TempDir dir;
  Cast cast;
  auto ledger = open_with_projections(dir, 16384);
  test::append_all(*ledger, cast.prologue_entries());
  EventBody obs = test::observation_body(cast.importer, "gpumode", "crowded");
  const Digest run = manifest_digest_of(obs);
  std::vector<Bytes> entries{test::signed_entry(cast.importer, obs)};
  for (int i = 0; i < 12; ++i) {
    entries.push_back(test::signed_entry(
        cast.attestor, test::attestation_body(cast.attestor, run, AttestationType::kReproduced,
                                              "reproduced on rig " + std::to_string(i))));
  }
  test::append_all(*ledger, entries);
  const Contents expected = state_of(*ledger);
  REQUIRE(expected.at("r/" + hex_encode(run)).size() > 4096);
  for (int rebuild = 0; rebuild < 2; ++rebuild) {
    REQUIRE(ledger->rebuild_state().is_ok());
    CHECK(state_of(*ledger) == expected);
    check_statement(*ledger);
  }
}

}  // namespace
}  // namespace evl
