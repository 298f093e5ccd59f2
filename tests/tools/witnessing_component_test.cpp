// The log's side of witnessing (ledger/witnessing.h) against real witnesses behind the
// HttpServer on loopback, in this process: quorum publication, waiting, durability, refusals.
#include <catch2/catch.hpp>

#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "keys/tlog_policy.h"
#include "ledger/proof_format.h"
#include "ledger/witnessing.h"
#include "tests/support/fixtures.h"
#include "tests/support/foreign_log.h"
#include "tests/support/ledger_support.h"
#include "tools/server/metrics.h"
#include "tools/server/witness_handlers.h"

namespace evl {
namespace {

using namespace std::chrono_literals;

// A witness on loopback: `key` cosigns, `trusted` is the log it accepts.
struct Running {
  Running(SecretKey key, const VerifierKey& trusted) {
    WitnessOptions options;
    options.dir = dir.str();
    options.key = std::make_shared<const SecretKey>(std::move(key));
    options.logs = {trusted};
    auto opened = Witness::open(options);
    REQUIRE_OK(opened);
    witness = std::move(*opened);
    server::ServerOptions so;
    so.port = "0";
    so.threads = 1;
    auto served = server::serve_witness(*witness, so);
    REQUIRE_OK(served);
    server = std::move(*served);
  }
  test::TempDir dir;
  std::unique_ptr<Witness> witness;
  std::unique_ptr<server::WitnessServer> server;
};

// A ledger with the cast's prologue, three witness keys, and a policy of quorum 2 whose URLs
// are given (a closed port for a witness that is down).
struct Log {
  test::Cast cast;
  test::TempDir dir;
  std::unique_ptr<Ledger> ledger;

  Log() {
    OpenOptions create;
    create.create = true;
    ledger = test::open_test_ledger(dir, create);
    test::append_all(*ledger, cast.prologue_entries());
  }

  // Witness i's key (0, 1, 2), and its cosigner key.
  static SecretKey key(size_t i) {
    return test::witness_key("w" + std::to_string(i + 1) + ".example", static_cast<uint8_t>(i + 1));
  }
  static CosignerKey cosigner(size_t i) {
    SecretKey k = key(i);
    return CosignerKey::of(k.name(), k.public_key());
  }

  TlogPolicy policy(const std::vector<std::string>& urls) const {
    std::string text = "log " + cast.log.verifier().to_string() + "\n";
    for (size_t i = 0; i < 3; ++i) {
      text += "witness w" + std::to_string(i + 1) + " " + cosigner(i).to_string() + " " + urls[i] + "\n";
    }
    auto parsed = TlogPolicy::parse(text + "group two 2 w1 w2 w3\nquorum two\n");
    REQUIRE_OK(parsed);
    return *parsed;
  }

  WitnessingOptions options(const std::vector<std::string>& urls) const {
    WitnessingOptions o;
    o.policy = policy(urls);
    o.dir = witnessing_dir(dir.str());
    o.http.timeout = 2000ms;
    o.min_backoff = 20ms;
    o.max_backoff = 200ms;
    return o;
  }
};

std::string closed_url() { return "http://127.0.0.1:9/"; }

Result<std::shared_ptr<const Publication>> wait_published(Witnessing& w, uint64_t size,
                                                          std::chrono::milliseconds timeout) {
  std::promise<Result<std::shared_ptr<const Publication>>> done;
  w.when_published(size, timeout, [&](auto p) { done.set_value(std::move(p)); });
  return done.get_future().get();
}

TEST_CASE("a log publishes a checkpoint once its quorum cosigned it, with their lines",
          "[server][witnessing]") {
  Log log;
  const VerifierKey vkey = log.cast.log.verifier();
  Running w1(Log::key(0), vkey), w2(Log::key(1), vkey);
  auto started = Witnessing::start(*log.ledger, log.options({w1.server->url, w2.server->url, closed_url()}));
  REQUIRE_OK(started);
  Witnessing& witnessing = **started;
  witnessing.committed({log.ledger->size(), 0, {}});
  auto published = wait_published(witnessing, log.ledger->size(), 20s);
  REQUIRE_OK(published);
  const Publication& p = **published;
  CHECK(p.checkpoint.size == log.ledger->size());
  CHECK(p.witnesses == std::vector<std::string>{"w1", "w2"});
  const VerifierKey keys[] = {vkey};
  REQUIRE_OK(witnessing.policy().verify(p.note, keys));
  CHECK(witnessing.published() == *published);

  // A receipt in it carries the cosigned note and proves the entry.
  const uint64_t indexes[] = {3};
  auto receipts = witnessed_receipts(*log.ledger, indexes, p);
  REQUIRE_OK(receipts);
  auto doc = parse_tlog_proof((*receipts)[0]);
  REQUIRE_OK(doc);
  CHECK(doc->checkpoint_note == p.note);
  auto entry = log.ledger->entry(3);
  REQUIRE_OK(entry);
  REQUIRE_OK(verify_inclusion_proof(*doc, leaf_hash(*entry), vkey));

  const auto progress = witnessing.progress();
  REQUIRE(progress.size() == 3);
  CHECK(progress[0].known_size == log.ledger->size());
  CHECK(progress[2].cosigned == 0);
  CHECK_FALSE(progress[2].last_error.empty());
}

TEST_CASE("without a quorum nothing is published and a waiter hears whom it waits for",
          "[server][witnessing]") {
  Log log;
  Running w1(Log::key(0), log.cast.log.verifier());
  auto started = Witnessing::start(*log.ledger, log.options({w1.server->url, closed_url(), closed_url()}));
  REQUIRE_OK(started);
  auto published = wait_published(**started, log.ledger->size(), 1500ms);
  REQUIRE_FALSE(published.has_value());
  CHECK(published.error().code() == Code::kIo);
  CHECK_THAT(published.error().message(), Catch::Contains("waiting for w2") &&
                                              Catch::Contains("w3") && Catch::Contains("quorum two"));
  CHECK((*started)->published() == nullptr);
}

TEST_CASE("the publication is stored and served again after a restart, and no other ledger's",
          "[server][witnessing]") {
  Log log;
  const VerifierKey vkey = log.cast.log.verifier();
  Running w1(Log::key(0), vkey), w2(Log::key(1), vkey), w3(Log::key(2), vkey);
  const std::vector<std::string> urls{w1.server->url, w2.server->url, w3.server->url};
  std::string note;
  {
    auto started = Witnessing::start(*log.ledger, log.options(urls));
    REQUIRE_OK(started);
    auto published = wait_published(**started, log.ledger->size(), 20s);
    REQUIRE_OK(published);
    // All three lines in, so that no later one amends it while the component stops.
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while ((*started)->published()->witnesses.size() < 3 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    REQUIRE((*started)->published()->witnesses.size() == 3);
    note = (*started)->published()->note;
  }
  auto stored = read_witnessed_checkpoint(witnessing_dir(log.dir.str()));
  REQUIRE_OK(stored);
  CHECK(*stored == note);
  {
    // Witnesses down: the stored publication is served at once.
    auto again = Witnessing::start(*log.ledger, log.options({closed_url(), closed_url(), closed_url()}));
    REQUIRE_OK(again);
    REQUIRE((*again)->published() != nullptr);
    CHECK((*again)->published()->note == note);
  }
  // The same file beside a ledger of another tree at that size: the prologue's last two
  // grants in the other order.
  test::TempDir other;
  OpenOptions create;
  create.create = true;
  auto ledger = test::open_test_ledger(other, create);
  auto prologue = log.cast.prologue_entries();
  std::swap(prologue[3], prologue[4]);
  test::append_all(*ledger, prologue);
  std::filesystem::create_directories(witnessing_dir(other.str()));
  std::filesystem::copy_file(witnessed_checkpoint_path(witnessing_dir(log.dir.str())),
                             witnessed_checkpoint_path(witnessing_dir(other.str())));
  auto refused = Witnessing::start(*ledger, log.options(urls));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Code::kCorrupt);
  CHECK_THAT(refused.error().message(), Catch::Contains("remove the file"));
}

TEST_CASE("a witness answering with another key's cosignature is refused, never counted",
          "[server][witnessing]") {
  Log log;
  const VerifierKey vkey = log.cast.log.verifier();
  Running w1(Log::key(0), vkey), impostor(test::witness_key("w2.example", 99), vkey);
  std::mutex mu;
  std::vector<std::pair<size_t, SubmissionOutcome>> outcomes;
  WitnessingOptions options = log.options({w1.server->url, impostor.server->url, closed_url()});
  options.on_submission = [&](size_t w, SubmissionOutcome o) {
    std::lock_guard lock(mu);
    outcomes.emplace_back(w, o);
  };
  auto started = Witnessing::start(*log.ledger, std::move(options));
  REQUIRE_OK(started);
  auto published = wait_published(**started, log.ledger->size(), 1500ms);
  CHECK_FALSE(published.has_value());
  {
    // Released before progress(): the component calls on_submission under its own lock, so
    // holding `mu` into it is a lock-order inversion (ThreadSanitizer).
    std::lock_guard lock(mu);
    CHECK(std::count(outcomes.begin(), outcomes.end(), std::pair(size_t{1}, SubmissionOutcome::kRefused)) >= 1);
    CHECK(std::count(outcomes.begin(), outcomes.end(), std::pair(size_t{1}, SubmissionOutcome::kCosigned)) == 0);
    CHECK(std::count(outcomes.begin(), outcomes.end(), std::pair(size_t{0}, SubmissionOutcome::kCosigned)) >= 1);
  }
  const auto progress = (*started)->progress();
  CHECK_THAT(progress[1].last_error, Catch::Contains("without a valid cosignature"));
}

TEST_CASE("a policy the log cannot use is refused before anything starts", "[server][witnessing]") {
  Log log;
  WitnessingOptions options = log.options({closed_url(), closed_url(), ""});
  auto no_url = Witnessing::start(*log.ledger, options);
  REQUIRE_FALSE(no_url.has_value());
  CHECK(no_url.error().code() == Code::kUsage);
  CHECK_THAT(no_url.error().message(), Catch::Contains("witness w3") && Catch::Contains("no submission URL"));

  auto other_log = TlogPolicy::parse("log " + test::test_key("other.example/log", 7).verifier().to_string() +
                                     "\nwitness w1 " +
                                     Log::cosigner(0).to_string() +
                                     " " + closed_url() + "\nquorum w1\n");
  REQUIRE_OK(other_log);
  options.policy = *other_log;
  auto wrong = Witnessing::start(*log.ledger, options);
  REQUIRE_FALSE(wrong.has_value());
  CHECK_THAT(wrong.error().message(), Catch::Contains("do not name this log's key"));
}

TEST_CASE("metrics count submissions by witness and outcome, with escaped names",
          "[server][witnessing]") {
  server::Metrics metrics({"checkpoint"}, {"w1", "odd\"name"});
  metrics.record_submission(0, SubmissionOutcome::kCosigned);
  metrics.record_submission(1, SubmissionOutcome::kFailed);
  metrics.record_submission(1, SubmissionOutcome::kFailed);
  metrics.record_publication_delay(30ms);
  server::Gauges gauges;
  gauges.witnessed_size = 12;
  const std::string text = metrics.render(gauges);
  CHECK_THAT(text, Catch::Contains("evledger_witness_submissions_total{witness=\"w1\",outcome=\"cosigned\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("evledger_witness_submissions_total{witness=\"odd\\\"name\",outcome=\"failed\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("evledger_witness_publication_delay_seconds_bucket{le=\"0.05\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("evledger_witnessed_size 12\n"));
  gauges.log = false;
  CHECK_THAT(metrics.render(gauges), !Catch::Contains("evledger_witness_submissions_total"));
}

}  // namespace
}  // namespace evl
