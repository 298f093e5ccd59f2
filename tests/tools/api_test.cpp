// The JSON API's handlers, called through the router as plain functions: no socket, a real
// ledger with projections holding a generated catalog. Every answer is compared with what the
// library functions the CLI calls give for the same question.
#include <catch2/catch.hpp>

#include <future>
#include <set>
#include <sstream>

#include "events/jcs.h"
#include "events/json.h"
#include "ledger/proof_format.h"
#include "ledger/proofs.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "projections/statement_audit.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"
#include "tools/gen/sol_catalog.h"
#include "tools/import_reader.h"
#include "tools/importer.h"
#include "tools/render.h"
#include "tools/server/api.h"
#include "tools/server/handlers.h"
#include "tests/support/served_catalog.h"

namespace evl {
namespace {

using server::Request;
using server::Response;
using test::Cast;
using test::Catalog;
using test::Served;
using test::TempDir;
using test::body_of;
using test::json_of;

std::string detail_of(const Response& r) {
  const Json j = json_of(r);
  return json_string(j, "detail").value_or("");
}


std::vector<std::string> texts(const std::vector<Json>& items) {
  std::vector<std::string> out;
  for (const Json& j : items) out.push_back(jcs_serialize(j));
  return out;
}

std::string member(const Json& j, const char* name) { return json_string(j, name).value_or(""); }

// A group with several ranked members and its benchmark.
std::pair<std::string, std::string> big_group(const std::vector<Json>& runs) {
  std::map<std::string, int> sizes;
  for (const Json& r : runs) {
    if (const Json* k = r.find("comparisonKey"); k != nullptr && k->is_string()) ++sizes[k->as_string()];
  }
  std::string key;
  for (const auto& [k, n] : sizes) {
    if (key.empty() || n > sizes[key]) key = k;
  }
  for (const Json& r : runs) {
    if (member(r, "comparisonKey") == key) return {key, member(r, "benchmark")};
  }
  return {};
}

TEST_CASE("the API lists the run views the CLI lists, page by page, in the same order",
          "[server][api]") {
  Catalog c;
  const std::vector<Json> all = c.cli_runs();
  REQUIRE(all.size() == 60);
  size_t pages = 0;
  CHECK(texts(c.all_pages("/api/v1/runs?limit=7", &pages)) == texts(all));
  CHECK(pages == 9);
  CHECK(texts(c.all_pages("/api/v1/runs?limit=1000")) == texts(all));
  // Every member DESIGN.md names, the six digests the summary used to leave out among them.
  for (const char* m : {"run", "event", "index", "title", "benchmark", "source", "externalId",
                        "status", "observedAt", "protocolDigest", "environmentDigest",
                        "workloadDigest", "implementationDigest", "operationDigest",
                        "correctnessKey", "comparisonKey", "primary", "sourceNative", "evidence",
                        "flags", "rank", "tied", "groupSize", "leader", "reruns", "attestations",
                        "corrections", "history"}) {
    INFO(m);
    CHECK(all.front().find(m) != nullptr);
  }

  auto [key, benchmark] = big_group(all);
  REQUIRE(!key.empty());
  RunFilter group;
  group.group = parse_digest_text(key).value();
  const auto in_group = c.cli_runs(group);
  REQUIRE(in_group.size() >= 2);
  // The group named by a start of its key, paged one run at a time: display order.
  CHECK(texts(c.all_pages("/api/v1/runs?limit=1&group=" + key.substr(7, 10))) == texts(in_group));
  RunFilter by_benchmark;
  by_benchmark.benchmark = benchmark;
  CHECK(texts(c.all_pages("/api/v1/runs?limit=3&benchmark=" + benchmark)) ==
        texts(c.cli_runs(by_benchmark)));
  // Both: the group's runs of that benchmark (all of them, as a group is one benchmark's).
  CHECK(texts(c.all_pages("/api/v1/runs?limit=2&benchmark=" + benchmark + "&group=" + key)) ==
        texts(in_group));
  CHECK(c.all_pages("/api/v1/runs?benchmark=no-such-benchmark&group=" + key).empty());
}

TEST_CASE("a run view is named by its digest or a unique start, as evledger show names it",
          "[server][api]") {
  Catalog c;
  const std::vector<Json> all = c.cli_runs();
  const std::string run = member(all.at(3), "run");
  auto manifests = log_manifests(*c.ledger);
  const std::string expected = jcs_serialize(c.read<Json>([&](const ProjectionStore& s) {
    return read_named_run_view(s, *manifests, run.substr(7), "RUN");
  }));
  for (const std::string& name : {run, run.substr(7), run.substr(0, 19)}) {
    Response r = c.get("/api/v1/runs/" + name);
    INFO(name << ": " << body_of(r));
    CHECK(r.status == 200);
    CHECK(body_of(r) == expected);
    CHECK(r.content_type == "application/json");
  }
  // The full view carries the manifests' summaries, which listings leave out.
  const Json view = json_of(c.get("/api/v1/runs/" + run));
  CHECK(view.find("protocol") != nullptr);
  CHECK(all.at(3).find("protocol") == nullptr);

  Response few = c.get("/api/v1/runs/" + run.substr(7, 5));
  CHECK(few.status == 400);
  CHECK(detail_of(few).find("run: '" + run.substr(7, 5) + "' is not a run digest") == 0);
  CHECK(few.content_type == "application/problem+json");
  Response none = c.get("/api/v1/runs/sha256:" + std::string(64, '0'));
  CHECK(none.status == 404);
  CHECK(detail_of(none).find("no observed run in this ledger is sha256:000") == 0);
}

TEST_CASE("listing parameters are checked: each bad one is a 400 naming it and its rule",
          "[server][api]") {
  Catalog c(12);
  struct Case {
    std::string target, says;
  };
  for (const Case& k : std::vector<Case>{
           {"/api/v1/runs?limit=0", "limit=0: a page holds 1 to 1000 items"},
           {"/api/v1/runs?limit=1001", "limit=1001: a page holds 1 to 1000 items"},
           {"/api/v1/runs?limit=ten", "limit=ten"},
           {"/api/v1/runs?cursor=zz", "cursor= 'zz' is not a position in this listing"},
           {"/api/v1/runs?group=zz", "group: 'zz' is not a comparison key"},
           {"/api/v1/runs?grup=x", "'grup' is not a parameter of runs, which takes benchmark, "
                                   "group, limit and cursor"},
           {"/api/v1/runs?limit=1&limit=2", "limit is given twice"},
           {"/api/v1/groups?cursor=" + std::string(64, 'G'), "is not a position"},
           {"/api/v1/leaders?cursor=1/2", "is not a position in this listing (<20 digits>/<64 hex>)"},
           {"/api/v1/benchmarks?cursor=a/b", "is not a position"},
           {"/api/v1/keys?cursor=abc", "cursor=abc is not a position"},
           {"/api/v1/events?from=1&cursor=2", "not both"},
           {"/api/v1/events?from=-1", "from=-1 is not a number"},
           {"/api/v1/events/0?format=xml", "format=xml is not a format of an event"},
           {"/api/v1/events/sha256:00", "sha256:00"},
           {"/api/v1/events/twelve", "'twelve' is neither an event id (sha256:<hex>) nor an index"},
           {"/api/v1/proofs/inclusion?index=1&id=sha256:00", "exactly one of index= and id="},
           {"/api/v1/proofs/inclusion", "exactly one of index= and id="},
           {"/api/v1/proofs/consistency", "from= is required"},
           {"/api/v1/proofs/consistency?from=0", "from must be at least 1"},
           {"/api/v1/runs/sha256:0123456789abcdef?x=1", "'x' is not a parameter of runs/{run}, "
                                                        "which takes none"},
       }) {
    Response r = c.get(k.target);
    INFO(k.target << ": " << body_of(r));
    CHECK(r.status == 400);
    CHECK(r.content_type == "application/problem+json");
    CHECK(r.header("Cache-Control").value_or("") == "no-store");
    CHECK(detail_of(r).find(k.says) != std::string::npos);
  }
}

TEST_CASE("groups, leaders and benchmarks page through the CLI's listings", "[server][api]") {
  Catalog c;
  const auto groups =
      c.read<std::vector<Json>>([](const ProjectionStore& s) { return list_groups(s); });
  REQUIRE(groups.size() > 3);
  CHECK(texts(c.all_pages("/api/v1/groups?limit=2")) == texts(groups));
  const std::string key = member(groups[1], "group");
  Response one = c.get("/api/v1/groups/" + key.substr(0, 20));
  CHECK(one.status == 200);
  CHECK(body_of(one) == jcs_serialize(groups[1]));
  CHECK(c.get("/api/v1/groups/sha256:" + std::string(64, 'f')).status == 404);

  const auto history =
      c.read<std::vector<Json>>([](const ProjectionStore& s) { return leadership_history(s); });
  REQUIRE(history.size() > 3);
  CHECK(texts(c.all_pages("/api/v1/leaders?limit=3")) == texts(history));
  const std::string leader_group = member(history[0], "group");
  const auto of_group = c.read<std::vector<Json>>([&](const ProjectionStore& s) {
    return leadership_history(s, parse_digest_text(leader_group).value());
  });
  CHECK(texts(c.all_pages("/api/v1/leaders?limit=1&group=" + leader_group)) == texts(of_group));

  // Each benchmark once, with as many runs as the runs listing has of it.
  std::map<std::string, double> expected;
  for (const Json& r : c.cli_runs()) {
    if (!member(r, "benchmark").empty()) ++expected[member(r, "benchmark")];
  }
  std::map<std::string, double> listed;
  for (const Json& b : c.all_pages("/api/v1/benchmarks?limit=2")) {
    CHECK(listed.count(member(b, "benchmark")) == 0);
    listed[member(b, "benchmark")] = b.find("runs")->as_number();
  }
  CHECK(listed == expected);
}

TEST_CASE("events come decoded as evledger get prints them, or as their stored bytes",
          "[server][api]") {
  Catalog c(5);
  const KeyPolicy keys = c.ledger->policy();
  auto bytes = c.ledger->entry(3);
  REQUIRE(bytes.has_value());
  const std::string decoded = cli::stored_entry_json(3, *bytes, keys).value();
  const std::string id = member(parse_json(decoded).value(), "id");
  for (const std::string& name : {std::string("3"), id}) {
    Response r = c.get("/api/v1/events/" + name);
    INFO(name);
    CHECK(r.status == 200);
    CHECK(body_of(r) == decoded);
    CHECK(r.header("Cache-Control").value_or("") == "public, max-age=2");
  }
  Response raw = c.get("/api/v1/events/" + id + "?format=raw");
  CHECK(raw.status == 200);
  CHECK(body_of(raw) == std::string(as_chars(*bytes)));
  CHECK(raw.content_type == "application/octet-stream");
  CHECK(raw.header("Cache-Control").value_or("") == "public, max-age=31536000, immutable");

  std::vector<std::string> expected;
  for (uint64_t i = 2; i < 5; ++i) {
    expected.push_back(cli::stored_entry_json(i, c.ledger->entry(i).value(), keys).value());
  }
  Response page = c.get("/api/v1/events?from=2&limit=3");
  CHECK(body_of(page) ==
        "{\"items\":[" + expected[0] + "," + expected[1] + "," + expected[2] + "],\"next\":\"5\"}");
  const size_t size = c.ledger->size();
  CHECK(c.all_pages("/api/v1/events?limit=1000").size() == size);
  CHECK(json_of(c.get("/api/v1/events?from=" + std::to_string(size))).find("items")->as_array().empty());
  Response missing = c.get("/api/v1/events/" + std::to_string(size));
  CHECK(missing.status == 404);
  CHECK(detail_of(missing) == "no entry at index " + std::to_string(size) + " (the log has " +
                                  std::to_string(size) + " entries)");
  CHECK(c.get("/api/v1/events/sha256:" + std::string(64, '0')).status == 404);
}

TEST_CASE("proofs from the API verify with the log key alone", "[server][api]") {
  Catalog c(30);
  const VerifierKey key = c.ledger->log_verifier().value();
  const uint64_t size = c.ledger->size();
  auto entry = c.ledger->entry(17).value();

  Response json = c.get("/api/v1/proofs/inclusion?index=17");
  REQUIRE(json.status == 200);
  CHECK(json.header("Cache-Control").value_or("") == "public, max-age=2");
  auto doc = parse_proof(body_of(json));
  REQUIRE(doc.has_value());
  auto verified = verify_inclusion_proof(std::get<InclusionProofDoc>(*doc), leaf_hash(entry), key);
  REQUIRE(verified.has_value());
  CHECK(verified->checkpoint.size == size);

  // A signed size other than the newest, by id, as tlog-proof: immutable.
  std::vector<uint64_t> sizes;
  REQUIRE(c.ledger->scan_checkpoints([&](uint64_t s, std::string_view) {
    sizes.push_back(s);
    return Status::ok();
  }).is_ok());
  REQUIRE(sizes.size() >= 3);
  const uint64_t older = sizes[sizes.size() - 2];
  const std::string id = digest_text(event_id(decode_entry(entry).value().body));
  Response text = c.get("/api/v1/proofs/inclusion?id=" + id + "&format=tlog-proof&size=" +
                        std::to_string(older));
  REQUIRE(text.status == 200);
  CHECK(text.header("Cache-Control").value_or("") == "public, max-age=31536000, immutable");
  auto tlog = parse_tlog_proof(body_of(text));
  REQUIRE(tlog.has_value());
  auto at_older = verify_inclusion_proof(*tlog, leaf_hash(entry), key);
  REQUIRE(at_older.has_value());
  CHECK(at_older->checkpoint.size == older);

  Response unsigned_size = c.get("/api/v1/proofs/inclusion?index=17&size=" + std::to_string(older - 1));
  CHECK(unsigned_size.status == 404);
  CHECK(detail_of(unsigned_size).find("size=" + std::to_string(older - 1) +
                                      ": the log has no checkpoint of size") == 0);
  CHECK(c.get("/api/v1/proofs/inclusion?index=" + std::to_string(size)).status == 404);

  Response consistency = c.get("/api/v1/proofs/consistency?from=" + std::to_string(sizes[0]) +
                               "&to=" + std::to_string(older));
  REQUIRE(consistency.status == 200);
  CHECK(consistency.header("Cache-Control").value_or("") == "public, max-age=31536000, immutable");
  auto cdoc = parse_proof(body_of(consistency));
  REQUIRE(cdoc.has_value());
  const std::string old_note = c.ledger->checkpoint(sizes[0]).value();
  CHECK(verify_consistency_proof(std::get<ConsistencyProofDoc>(*cdoc), old_note, key).has_value());
  Response backwards = c.get("/api/v1/proofs/consistency?from=" + std::to_string(older) +
                             "&to=" + std::to_string(sizes[0]));
  CHECK(backwards.status == 400);
  CHECK(detail_of(backwards).find("from=" + std::to_string(older) + ": ") == 0);
}

TEST_CASE("checkpoints page through the signed history, oldest first", "[server][api]") {
  Catalog c(30);
  std::vector<std::string> notes;
  std::vector<uint64_t> sizes;
  REQUIRE(c.ledger->scan_checkpoints([&](uint64_t size, std::string_view note) {
    notes.emplace_back(note);
    sizes.push_back(size);
    return Status::ok();
  }).is_ok());
  REQUIRE(notes.size() >= 3);
  std::vector<std::string> listed;
  for (const Json& cp : c.all_pages("/api/v1/checkpoints?limit=2")) listed.push_back(member(cp, "note"));
  CHECK(listed == notes);
  // from= starts at the first checkpoint of at least that size.
  const auto second =
      c.all_pages("/api/v1/checkpoints?limit=1000&from=" + std::to_string(sizes[0] + 1));
  REQUIRE(second.size() == notes.size() - 1);
  const Json newest = second.back();
  CHECK(newest == parse_json(checkpoint_json(stored_checkpoint(*c.ledger).value())).value());
}

TEST_CASE("the key registry and the statement are what the CLI prints", "[server][api]") {
  Catalog c(8);
  std::optional<std::string> next;
  const auto keys = cli::key_registry_json(c.ledger->policy(), "", SIZE_MAX, next);
  REQUIRE(keys.size() == 5);  // admin, importer, runner, curator, attestor
  std::vector<std::string> listed;
  for (const Json& k : c.all_pages("/api/v1/keys?limit=2")) listed.push_back(jcs_serialize(k));
  std::vector<std::string> expected;
  for (const auto& k : keys) expected.push_back(jcs_serialize(parse_json(k).value()));
  CHECK(listed == expected);
  CHECK(json_of(c.get("/api/v1/keys?limit=2")).find("items")->as_array().size() == 2);

  Response statement = c.get("/api/v1/statement");
  REQUIRE(statement.status == 200);
  CHECK(body_of(statement) == statement_json(stored_statement(*c.ledger, std::nullopt).value()));
  Response missing = c.get("/api/v1/statement?size=3");
  CHECK(missing.status == 404);
  CHECK(detail_of(missing).find("no statement was signed at size 3") == 0);
}

TEST_CASE("answers that follow the log carry an ETag and are 304 until the log grows",
          "[server][api]") {
  Catalog c(10);
  Response first = c.get("/api/v1/runs");
  REQUIRE(first.status == 200);
  const std::string etag = std::string(first.header("ETag").value_or(""));
  REQUIRE(etag.size() > 2);
  CHECK(first.header("Cache-Control").value_or("") == "public, max-age=2");
  for (const char* target : {"/api/v1/runs", "/api/v1/groups", "/api/v1/keys",
                             "/api/v1/statement", "/api/v1/checkpoints", "/api/v1/events/2"}) {
    INFO(target);
    Response again = c.get(target, {{"If-None-Match", etag}});
    CHECK(again.status == 304);
    CHECK(again.header("ETag").value_or("") == etag);
    CHECK(!again.body);
  }
  // A new observation: a new checkpoint, a new ETag, the new run listed.
  test::append_all(*c.ledger,
                   {test::signed_entry(c.cast.importer,
                                       test::observation_body(c.cast.importer, "gpumode", "new"))});
  Response after = c.get("/api/v1/runs?limit=1000", {{"If-None-Match", etag}});
  CHECK(after.status == 200);
  CHECK(after.header("ETag").value_or("") != etag);
  CHECK(json_of(after).find("items")->as_array().size() == 11);
}

TEST_CASE("projection reads are 503 with Retry-After while the projections lag the log",
          "[server][api]") {
  TempDir dir;
  Cast cast;
  {
    OpenOptions options;
    options.create = true;
    options.hook = make_projection_hook();
    auto ledger = test::open_test_ledger(dir, options);
    test::append_all(*ledger, cast.prologue_entries());
  }
  auto ledger = test::open_test_ledger(dir);  // a writer without the projections
  test::append_all(*ledger, {test::signed_entry(cast.importer,
                                                test::observation_body(cast.importer, "gpumode"))});
  Served served(*ledger);
  auto get = [&](const char* target) { return served.get(target); };
  for (const char* target : {"/api/v1/runs", "/api/v1/groups", "/api/v1/leaders",
                             "/api/v1/benchmarks", "/api/v1/runs/sha256:abcdef"}) {
    INFO(target);
    Response r = get(target);
    CHECK(r.status == 503);
    CHECK(r.header("Retry-After").value_or("") == "1");
    CHECK(json_string(parse_json(body_of(r)).value(), "detail").value_or("").find(
              "the projections cover 5 of 6 entries") == 0);
  }
  CHECK(get("/api/v1/events/5").status == 200);  // the log itself is served
}

TEST_CASE("the OpenAPI document is served and describes exactly the API's routes",
          "[server][api]") {
  Catalog c(1);
  Response r = c.get("/api/v1/openapi.json");
  REQUIRE(r.status == 200);
  CHECK(r.header("Cache-Control").value_or("") == "public, max-age=3600");
  CHECK(c.get("/api/v1/openapi.json", {{"If-None-Match", std::string(*r.header("ETag"))}}).status ==
        304);
  const Json doc = json_of(r);
  CHECK(member(doc, "openapi") == "3.1.0");
  std::set<std::string> documented;
  for (const auto& [path, item] : doc.find("paths")->as_object()) {
    // "/api/v1/runs/{run}" is the prefix route "/api/v1/runs/".
    documented.insert(path.substr(0, path.find('{')));
  }
  std::set<std::string> routed;
  for (const auto& route : c.served->router.routes()) {
    if (route.pattern.rfind("/api/v1/", 0) == 0) routed.insert(route.pattern);
  }
  CHECK(documented == routed);
}

}  // namespace
}  // namespace evl
