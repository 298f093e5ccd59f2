// The server's router and log handlers, called as plain functions: no socket, a real ledger.
#include <catch2/catch.hpp>

#include <filesystem>
#include <future>

#include "events/json.h"
#include "ledger/append_queue.h"
#include "ledger/proof_format.h"
#include "ledger/tile_path.h"
#include "ledger/tiles.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"
#include "tests/tools/served_ledger.h"

namespace evl {
namespace {

namespace fs = std::filesystem;
using test::Cast;
using test::observation;
using test::ServedLedger;
using test::TempDir;
using server::Request;
using server::Response;

std::string body_of(const Response& r) { return r.body ? *r.body : std::string(); }

TEST_CASE("the router refuses paths outside what the server has, before any handler",
          "[server][router]") {
  ServedLedger s(0);
  for (const char* target :
       {"/tile/../../db/data.mdb", "/tile/%2e%2e/%2e%2e/db/data.mdb", "/tile//0/000",
        "/tile/./0/000", "/../checkpoint", "checkpoint", "/tile/0/000%00", "/tile/0/0 00"}) {
    INFO(target);
    Response r = s.call("GET", target);
    CHECK(r.status == 400);
    CHECK(r.content_type == "application/problem+json");
  }
  CHECK(s.call("GET", "/db/data.mdb").status == 404);
  CHECK(s.call("GET", "/nothing-here").status == 404);
  Response wrong = s.call("DELETE", "/checkpoint");
  CHECK(wrong.status == 405);
  CHECK(wrong.header("Allow").value_or("") == "GET, HEAD");
  CHECK(s.call("GET", "/add-event").status == 405);
  CHECK(s.call("HEAD", "/checkpoint").status == 200);
  // The query is not part of the path.
  CHECK(s.call("GET", "/checkpoint?x=%2e%2e").status == 200);
}

TEST_CASE("a prefix mounts every route under it and nothing outside it", "[server][router]") {
  ServedLedger s(0);
  server::Router prefixed("/log/", false);
  server::add_log_routes(prefixed);
  auto call = [&](const char* target) {
    Request request;
    request.method = "GET";
    request.target = target;
    Response out;
    prefixed.handle(request, *s.context, [&](Response r) { out = std::move(r); });
    return out;
  };
  CHECK(call("/log/checkpoint").status == 200);
  CHECK(call("/checkpoint").status == 404);
  CHECK(call("/logcheckpoint").status == 404);
  CHECK(call("/log/../checkpoint").status == 400);
}

TEST_CASE("tiles and bundles served from the ledger are byte for byte the export",
          "[server][tiles]") {
  ServedLedger s(600);  // 605 entries in commits: full and partial tiles at levels 0 and 1
  TempDir out;
  auto report = export_tiles(*s.ledger, out.str());
  REQUIRE(report);
  size_t compared = 0;
  for (const auto& file : fs::recursive_directory_iterator(out.path())) {
    if (!file.is_regular_file()) continue;
    const std::string rel = fs::relative(file.path(), out.path()).string();
    if (rel.rfind(".", 0) == 0) continue;  // the export's lock or temporary files
    INFO(rel);
    Response r = s.call("GET", "/" + rel);
    REQUIRE(r.status == 200);
    CHECK(body_of(r) == test::read_file(file.path()));
    if (rel != "checkpoint") {
      CHECK(r.content_type == "application/octet-stream");
      const bool partial = rel.find(".p/") != std::string::npos;
      CHECK(r.header("Cache-Control").value_or("") ==
            (partial ? "public, max-age=3600" : "public, max-age=31536000, immutable"));
    }
    ++compared;
  }
  CHECK(compared >= 6);
  // ServedLedger again from the cache: the same bytes.
  CHECK(body_of(s.call("GET", "/tile/entries/000")) ==
        test::read_file(out.path() / "tile/entries/000"));
  // A partial tile of an older size is still served (its bytes never change).
  CHECK(s.call("GET", "/tile/entries/000.p/5").status == 200);
}

TEST_CASE("tiles beyond the tree are 404 and malformed tile paths 400", "[server][tiles]") {
  ServedLedger s(10);  // 15 entries
  CHECK(s.call("GET", "/tile/0/000.p/15").status == 200);
  CHECK(s.call("GET", "/tile/0/000.p/16").status == 404);  // wider than the tree
  CHECK(s.call("GET", "/tile/0/000").status == 404);       // the full tile does not exist yet
  CHECK(s.call("GET", "/tile/entries/x001/x000/x000/x000/x000/x000/000").status == 404);
  CHECK(s.call("GET", "/tile/63/x018/x446/x744/x073/x709/x551/615").status == 404);
  CHECK(s.call("GET", "/tile/64/000").status == 400);
  CHECK(s.call("GET", "/tile/0/000.p/256").status == 400);
  CHECK(s.call("GET", "/tile/0/000.p/0").status == 400);
  CHECK(s.call("GET", "/tile/0/0000").status == 400);
  CHECK(s.call("GET", "/tile/entries/000.p/01").status == 400);
}

TEST_CASE("the checkpoint carries an ETag and answers If-None-Match with 304",
          "[server][checkpoint]") {
  ServedLedger s(3);
  Response r = s.call("GET", "/checkpoint");
  REQUIRE(r.status == 200);
  CHECK(body_of(r) == s.ledger->checkpoint().value());
  CHECK(r.content_type == "text/plain; charset=utf-8");
  const std::string etag(r.header("ETag").value_or(""));
  REQUIRE(etag.size() == 34);
  Response same = s.call("GET", "/checkpoint", {}, {{"If-None-Match", etag}});
  CHECK(same.status == 304);
  CHECK(same.body_size() == 0);
  test::append_all(*s.ledger, {observation(s.cast, "gpumode", 1000)});
  Response moved = s.call("GET", "/checkpoint", {}, {{"If-None-Match", etag}});
  CHECK(moved.status == 200);
  CHECK(moved.header("ETag").value_or("") != etag);
}

TEST_CASE("add-event stores an entry after the commit and hands back a receipt that verifies",
          "[server][append]") {
  ServedLedger s(2);
  const Bytes entry = observation(s.cast, "gpumode", 77);
  Response r = s.call("POST", "/add-event", std::string(as_chars(entry)),
                      {{"Content-Type", "application/octet-stream"}});
  REQUIRE(r.status == 200);
  auto answer = parse_json(body_of(r));
  REQUIRE(answer);
  const Json& result = answer->find("results")->as_array().at(0);
  const uint64_t index = static_cast<uint64_t>(result.find("index")->as_number());
  CHECK(index == 7);
  CHECK(result.find("present")->as_bool() == false);
  CHECK(s.ledger->entry(index).value() == entry);
  auto receipt = parse_tlog_proof(result.find("receipt")->as_string());
  REQUIRE(receipt);
  auto verified = verify_inclusion_proof(*receipt, leaf_hash(entry), s.ledger->log_verifier().value());
  REQUIRE(verified);
  CHECK(verified->checkpoint.size == 8);

  // The same entry again: 200, its first index, nothing written.
  Response again = s.call("POST", "/add-event", std::string(as_chars(entry)),
                          {{"Content-Type", "application/octet-stream"}});
  REQUIRE(again.status == 200);
  auto second = parse_json(body_of(again));
  const Json& r2 = second->find("results")->as_array().at(0);
  CHECK(r2.find("present")->as_bool() == true);
  CHECK(static_cast<uint64_t>(r2.find("index")->as_number()) == index);
  CHECK(s.ledger->size() == 8);
}

TEST_CASE("a framed batch answers each entry: stored, present or refused with its status",
          "[server][append]") {
  ServedLedger s(2);
  Bytes bad_sig = observation(s.cast, "gpumode", 3);
  bad_sig.back() ^= 1;
  const std::vector<Bytes> batch = {observation(s.cast, "gpumode", 1),  // present
                                    observation(s.cast, "gpumode", 10),
                                    observation(s.cast, "flashinfer", 11),  // out of scope
                                    bad_sig, observation(s.cast, "gpumode", 12)};
  Response r = s.post_entries(batch);
  REQUIRE(r.status == 200);
  auto answer = parse_json(body_of(r));
  REQUIRE(answer);
  const auto& results = answer->find("results")->as_array();
  REQUIRE(results.size() == 5);
  CHECK(results[0].find("present")->as_bool());
  CHECK(results[1].find("present")->as_bool() == false);
  CHECK(results[2].find("status")->as_number() == 403);
  CHECK_THAT(results[2].find("detail")->as_string(), Catch::Contains("flashinfer"));
  CHECK(results[3].find("status")->as_number() == 400);
  CHECK(results[4].find("receipt") != nullptr);
  CHECK(answer->find("added")->as_number() == 2);
  CHECK(answer->find("present")->as_number() == 1);
  CHECK(answer->find("rejected")->as_number() == 2);

  // One entry refused on its own is answered with its status.
  Response alone = s.call("POST", "/add-event",
                          std::string(as_chars(observation(s.cast, "flashinfer", 20))),
                          {{"Content-Type", "application/octet-stream"}});
  CHECK(alone.status == 403);
  CHECK(alone.content_type == "application/problem+json");
}

TEST_CASE("add-event refuses bodies that are not entries and changes nothing",
          "[server][append]") {
  ServedLedger s(2);
  const uint64_t size = s.ledger->size();
  const std::string one(as_chars(observation(s.cast, "gpumode", 5)));
  CHECK(s.call("POST", "/add-event", one, {{"Content-Type", "text/plain"}}).status == 415);
  CHECK(s.call("POST", "/add-event", one).status == 415);
  CHECK(s.call("POST", "/add-event", "", {{"Content-Type", "application/octet-stream"}}).status ==
        400);
  CHECK(s.call("POST", "/add-event", std::string(65536, 'x'),
               {{"Content-Type", "application/octet-stream"}})
            .status == 413);
  const server::Header framed{"Content-Type", "application/vnd.evledger.entries"};
  CHECK(s.call("POST", "/add-event", std::string("\x00\x05", 2) + "abc", {framed}).status == 400);
  CHECK(s.call("POST", "/add-event", std::string("\x00\x00", 2), {framed}).status == 400);
  CHECK(s.call("POST", "/add-event", std::string("\x01", 1), {framed}).status == 400);
  CHECK(s.call("POST", "/add-event", "", {framed}).status == 400);
  std::string many;
  for (int i = 0; i < 1001; ++i) append_entry_frame(many, as_bytes("x"));
  CHECK(s.call("POST", "/add-event", many, {framed}).status == 413);
  CHECK(s.call("POST", "/add-event", "garbage", {{"Content-Type", "application/octet-stream"}})
            .status == 400);
  CHECK(s.ledger->size() == size);
}

TEST_CASE("a read-only server answers add-event with 405", "[server][append]") {
  ServedLedger s(1, true);
  Response r = s.call("POST", "/add-event", "x", {{"Content-Type", "application/octet-stream"}});
  CHECK(r.status == 405);
  CHECK_THAT(body_of(r), Catch::Contains("read-only"));
  CHECK(s.call("GET", "/checkpoint").status == 200);
}

TEST_CASE("a full append queue answers 503 with Retry-After at once", "[server][append]") {
  ServedLedger s(0);
  AppendQueueOptions small;
  small.max_entries = 10;
  AppendQueue queue(*s.ledger, small);
  s.context->appends = &queue;
  // A batch larger than the bound still enters an empty queue; while its 1,000 signatures are
  // checked, the next request finds the queue full.
  std::vector<Bytes> big;
  for (int i = 0; i < 1000; ++i) big.push_back(observation(s.cast, "gpumode", 2000 + i));
  std::promise<void> first_done;
  REQUIRE(queue.submit(big, [&](std::vector<QueuedOutcome>) { first_done.set_value(); }) ==
          AppendQueue::Admission::kQueued);
  Response r = s.post_entries({observation(s.cast, "gpumode", 5000)});
  CHECK(r.status == 503);
  CHECK(r.header("Retry-After").value_or("") == "1");
  first_done.get_future().wait();
  queue.close();
  Response closed = s.post_entries({observation(s.cast, "gpumode", 5000)});
  CHECK(closed.status == 503);
  CHECK_THAT(body_of(closed), Catch::Contains("shutting down"));
  s.context->appends = s.queue.get();
}

TEST_CASE("healthz and metrics report the log and the requests", "[server][metrics]") {
  ServedLedger s(1);
  CHECK_THAT(body_of(s.call("GET", "/healthz")), Catch::Contains("\"size\":6"));
  // Requests are counted by the connection; here the metrics only show what they were given.
  s.metrics->record_request(0, 200, std::chrono::milliseconds(3));
  std::string text = body_of(s.call("GET", "/metrics"));
  CHECK_THAT(text, Catch::Contains("evledger_http_requests_total{route=\"checkpoint\",status=\"200\"} 1"));
  CHECK_THAT(text, Catch::Contains("evledger_log_size 6"));
  CHECK_THAT(text, Catch::Contains("evledger_append_queue_capacity 65536"));
}

}  // namespace
}  // namespace evl
