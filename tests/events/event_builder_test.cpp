// The rules that build event bodies (events/event_builder.h): the claimed-time rule, the
// classification of catalog documents and rerun manifests, self-targets, and the budgets.
#include "events/event_builder.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/fixtures.h"

namespace evl {
namespace {

constexpr int64_t kClock = 1790000000000;  // what the "author's clock" says in these tests
// run_manifest_text's spec.observedAt, 2026-07-07T02:26:56.362Z, in ms.
constexpr int64_t kObservedAtMs = 1783391216362;

const SecretKey& author() {
  static const SecretKey key = test::test_key("builder.example.org", 0x21);
  return key;
}

// A manifest document: the JCS text of {apiVersion, kind, spec} with metadata beside it.
CheckedManifest checked(const std::string& canonical, const std::string& name = "doc") {
  auto doc = parse_json(canonical);
  REQUIRE(doc.has_value());
  Json metadata = Json::object();
  metadata.set("name", name);
  doc->set("metadata", metadata);
  return check_manifest(*doc, 1);
}

// An ExecutionEnvironment, as a catalog carries one.
constexpr const char* kEnvironment =
    R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":{)"
    R"("hardware":{"architecture":"sm_100","product":"NVIDIA B200","vendor":"nvidia"},)"
    R"("software":{"driver":"580.65.06"}}})";

// `body` signed by the author and co-signed up to kMaxSignatures signatures (throws when the
// signer refuses, so a body over the entry limit fails the test).
Bytes signed_to_the_limit(const EventBody& body) {
  std::vector<SecretKey> cosigners;
  std::vector<const SecretKey*> pointers;
  for (uint8_t i = 0; i + 1 < kMaxSignatures; ++i) {
    cosigners.push_back(test::test_key("cosigner" + std::to_string(i), 0x40 + i));
  }
  for (const auto& k : cosigners) pointers.push_back(&k);
  Bytes entry = test::cosigned_entry(author(), pointers, body);
  CHECK(entry.size() <= kMaxEntryBytes);
  return entry;
}

Attestation reproduced() {
  Attestation a;
  a.target = test::test_digest("observed run");
  a.text = "reproduced";
  return a;
}

CheckedManifest source_run(const std::string& id = "17") {
  return checked(test::run_manifest_text("sol-execbench", id), "run-" + id);
}
CheckedManifest rerun_run(uint64_t mean_ns = 160000) {
  return checked(test::run_manifest_text("", "rerun", mean_ns), "rerun");
}

TEST_CASE("a catalog run is an observation claimed at its observedAt, never the clock",
          "[events][builder]") {
  CheckedManifest run = source_run();
  const Digest digest = run.digest;
  auto body = catalog_event(author().public_key(), std::move(run));
  REQUIRE(body.has_value());
  CHECK(body->kind() == EventKind::kObservation);
  CHECK(body->author == author().public_key());
  CHECK(body->claimed_time_ms == kObservedAtMs);
  CHECK(sha256(as_bytes(std::get<Observation>(body->payload).manifest.canonical)) == digest);
  // The same document gives the same bytes, so a re-import is the same event.
  auto again = catalog_event(author().public_key(), source_run());
  REQUIRE(again.has_value());
  CHECK(encode_body(*again) == encode_body(*body));
}

TEST_CASE("an event may claim at most a year after the log's clock", "[events][builder]") {
  const int64_t clock = 1790000000000;
  CHECK(check_claimed_time(0, clock));
  CHECK(check_claimed_time(-1, clock));
  CHECK(check_claimed_time(clock, clock));
  CHECK(check_claimed_time(clock + kMaxClaimAheadMs, clock));
  const Status late = check_claimed_time(clock + kMaxClaimAheadMs + 1, clock);
  CHECK(late.code() == Code::kRejected);
  CHECK_THAT(late.message(), Catch::Contains("366 days and 0 hours after the log's clock") &&
                                 Catch::Contains("at most 366 days ahead"));
  const Status far = check_claimed_time(INT64_MAX, clock);
  CHECK(far.code() == Code::kRejected);
  CHECK_THAT(far.message(), Catch::Contains("observedAt"));
}

TEST_CASE("a catalog document of another kind is a manifest event that claims no time",
          "[events][builder]") {
  auto body = catalog_event(author().public_key(), checked(kEnvironment));
  INFO(body.status().message());
  REQUIRE(body.has_value());
  CHECK(body->kind() == EventKind::kManifest);
  CHECK(body->claimed_time_ms == 0);
}

TEST_CASE("a catalog run without sourceNative is refused as a rerun's manifest",
          "[events][builder]") {
  CheckedManifest run = rerun_run();
  auto body = catalog_event(author().public_key(), std::move(run));
  REQUIRE_FALSE(body.has_value());
  CHECK(body.error().code() == Code::kRejected);
  CHECK(body.error().message().find("[rerun-only]") != std::string::npos);
  CHECK(body.error().message().find("add spec.sourceNative") != std::string::npos);
  CHECK(!run.text.canonical.empty());  // a refusal leaves the document as it was
}

TEST_CASE("a catalog document with problems is refused with every problem",
          "[events][builder]") {
  auto doc = parse_json(test::environment_manifest_text());
  REQUIRE(doc.has_value());
  CheckedManifest bad = check_manifest(*doc, 3);  // no metadata
  REQUIRE_FALSE(bad.ok());
  auto body = catalog_event(author().public_key(), std::move(bad));
  REQUIRE_FALSE(body.has_value());
  CHECK(body.error().message().find("[metadata") != std::string::npos);
}

TEST_CASE("a rerun claims its own manifest's observedAt", "[events][builder]") {
  const Digest target = test::test_digest("observed run");
  auto body = rerun_event(author().public_key(), target, rerun_run(), "[{\"case\":\"0\"}]");
  REQUIRE(body.has_value());
  CHECK(body->kind() == EventKind::kRerun);
  CHECK(body->claimed_time_ms == kObservedAtMs);
  const auto& rerun = std::get<Rerun>(body->payload);
  CHECK(rerun.target == target);
  CHECK(rerun.cases == "[{\"case\":\"0\"}]");
  auto again = rerun_event(author().public_key(), target, rerun_run(), "[{\"case\":\"0\"}]");
  REQUIRE(again.has_value());
  CHECK(encode_body(*again) == encode_body(*body));
}

TEST_CASE("a rerun's manifest is a BenchmarkRun without sourceNative", "[events][builder]") {
  const Digest target = test::test_digest("observed run");
  auto observation = rerun_event(author().public_key(), target, source_run(), "");
  REQUIRE_FALSE(observation.has_value());
  CHECK(observation.error().message().find("remove spec.sourceNative") != std::string::npos);
  CHECK(observation.error().message().find("[rerun-only]") != std::string::npos);

  auto environment =
      rerun_event(author().public_key(), target, checked(kEnvironment), "");
  REQUIRE_FALSE(environment.has_value());
  CHECK(environment.error().message().find("is a ExecutionEnvironment [rerun-only]") !=
        std::string::npos);
}

TEST_CASE("a rerun of its own manifest is a usage error", "[events][builder]") {
  CheckedManifest run = rerun_run();
  const Digest own = run.digest;
  auto body = rerun_event(author().public_key(), own, std::move(run), "");
  REQUIRE_FALSE(body.has_value());
  CHECK(body.error().code() == Code::kUsage);
  CHECK(body.error().message().find("own digest") != std::string::npos);
}

TEST_CASE("a rerun whose manifest and cases pass the manifest budget is refused",
          "[events][builder]") {
  CheckedManifest run = rerun_run();
  const size_t room = kMaxManifestTextBytes - run.text.canonical.size() - run.text.metadata.size();
  const std::string fits = "[\"" + std::string(room - 4, 'x') + "\"]";
  const std::string over = "[\"" + std::string(room - 3, 'x') + "\"]";
  const Digest target = test::test_digest("observed run");
  auto ok = rerun_event(author().public_key(), target, rerun_run(), fits);
  REQUIRE(ok.has_value());
  // What passes can be signed and co-signed to the signature limit.
  CHECK(check_entry(signed_to_the_limit(*ok)).has_value());
  auto refused = rerun_event(author().public_key(), target, rerun_run(), over);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message().find("an entry holds at most") != std::string::npos);
}

TEST_CASE("an attestation and a retraction claim the author's clock", "[events][builder]") {
  Attestation a = reproduced();
  auto attestation = attestation_event(author().public_key(), a, kClock);
  REQUIRE(attestation.has_value());
  CHECK(attestation->claimed_time_ms == kClock);
  Correction c;
  c.kind = Correction::Kind::kRetract;
  c.target = a.target;
  c.reason = "withdrawn";
  auto retraction = correction_event(author().public_key(), c, kClock);
  REQUIRE(retraction.has_value());
  CHECK(retraction->claimed_time_ms == kClock);
}

TEST_CASE("a disqualification claims the time the source withdrew the run",
          "[events][builder]") {
  Correction c;
  c.kind = Correction::Kind::kDisqualify;
  c.target = test::test_digest("observed run");
  c.source = "sol-execbench";
  c.reason = "the source disqualified it";
  c.at_ms = kObservedAtMs + 1000;
  auto body = correction_event(author().public_key(), c, kClock);
  REQUIRE(body.has_value());
  CHECK(body->claimed_time_ms == kObservedAtMs + 1000);
  auto later = correction_event(author().public_key(), c, kClock + 5000);
  REQUIRE(later.has_value());
  CHECK(encode_body(*later) == encode_body(*body));  // the same input, the same event
}

TEST_CASE("a run cannot supersede itself", "[events][builder]") {
  Correction c;
  c.kind = Correction::Kind::kSupersede;
  c.target = c.replacement = test::test_digest("observed run");
  c.reason = "resubmitted";
  auto body = correction_event(author().public_key(), c, kClock);
  REQUIRE_FALSE(body.has_value());
  CHECK(body.error().code() == Code::kUsage);
}

TEST_CASE("a key grant lists its roles and scope in order, each once", "[events][builder]") {
  KeyGrant g;
  g.key = test::key_ref(test::test_key("runner.example.org", 0x22));
  g.roles = {Role::kAttestor, Role::kRunner, Role::kAttestor};
  g.scope = {"owner:b", "host:a", "owner:b"};
  auto body = key_grant_event(author().public_key(), g, kClock);
  REQUIRE(body.has_value());
  const auto& grant = std::get<KeyGrant>(body->payload);
  CHECK(grant.roles == std::vector<Role>{Role::kRunner, Role::kAttestor});
  CHECK(grant.scope == std::vector<std::string>{"host:a", "owner:b"});
  CHECK(body->claimed_time_ms == kClock);
  CHECK(check_body_fields(*body));
}

TEST_CASE("a revocation follows the field rules of voidFrom", "[events][builder]") {
  const PublicKey key = test::test_key("runner.example.org", 0x22).public_key();
  CHECK(key_revoke_event(author().public_key(), {key, RevokeReason::kRetired, 0}, kClock));
  auto compromised = key_revoke_event(author().public_key(), {key, RevokeReason::kCompromised, 0},
                                      kClock);
  REQUIRE_FALSE(compromised.has_value());
  CHECK(compromised.error().message().find("voidFrom") != std::string::npos);
}

TEST_CASE("a body over the budget is refused before anything is signed", "[events][builder]") {
  Attestation a = reproduced();
  // The environment summary has no limit of its own: the budget is what bounds it.
  a.environment = std::string(kMaxBodyBytes, 'e');
  auto body = attestation_event(author().public_key(), a, kClock);
  REQUIRE_FALSE(body.has_value());
  CHECK(body.error().message().find("a body is at most " + std::to_string(kMaxBodyBytes)) !=
        std::string::npos);
  // The largest that passes still carries kMaxSignatures signatures within an entry.
  size_t lo = 0, hi = kMaxBodyBytes;
  while (lo + 1 < hi) {
    const size_t mid = (lo + hi) / 2;
    a.environment.assign(mid, 'e');
    (attestation_event(author().public_key(), a, kClock) ? lo : hi) = mid;
  }
  a.environment.assign(lo, 'e');
  auto largest = attestation_event(author().public_key(), a, kClock);
  REQUIRE(largest.has_value());
  CHECK(encode_body(*largest).size() == kMaxBodyBytes);
  CHECK(check_entry(signed_to_the_limit(*largest)).has_value());
}

}  // namespace
}  // namespace evl
