#include "tests/support/fixtures.h"

#include <stdexcept>
#include <utility>

#include "events/sha256.h"
#include "keys/signer.h"

namespace evl::test {

namespace {

EventBody body_by(const SecretKey& author, Payload payload, int64_t claimed_time_ms) {
  EventBody body;
  body.author = author.public_key();
  body.claimed_time_ms = claimed_time_ms;
  body.payload = std::move(payload);
  return body;
}

ManifestText manifest_text(std::string canonical, std::string metadata = {}) {
  ManifestText m;
  m.canonical = std::move(canonical);
  m.metadata = std::move(metadata);
  return m;
}

}  // namespace

SecretKey test_key(std::string name, uint8_t seed_byte) {
  Bytes seed(32, seed_byte);
  auto key = SecretKey::from_seed(std::move(name), seed);
  if (!key) throw std::runtime_error("test_key: " + key.error().message());
  return std::move(key).value();
}

KeyRef key_ref(const SecretKey& key) { return KeyRef{key.public_key(), key.name()}; }

EventBody genesis_body(const SecretKey& admin, const PublicKey& log_key,
                       std::vector<KeyRef> more_admins, std::string origin,
                       int64_t claimed_time_ms) {
  Genesis g;
  g.origin = std::move(origin);
  g.log_key = log_key;
  g.admins.push_back(key_ref(admin));
  for (auto& k : more_admins) g.admins.push_back(std::move(k));
  g.rerun_tolerance_milli = 50;
  return body_by(admin, std::move(g), claimed_time_ms);
}

EventBody grant_body(const SecretKey& admin, const KeyRef& key, std::vector<Role> roles,
                     std::vector<std::string> scope, int64_t claimed_time_ms) {
  KeyGrant g;
  g.key = key;
  g.roles = std::move(roles);
  g.scope = std::move(scope);
  return body_by(admin, std::move(g), claimed_time_ms);
}

EventBody revoke_body(const SecretKey& admin, const PublicKey& key, RevokeReason reason,
                      uint64_t void_from, int64_t claimed_time_ms) {
  KeyRevoke r;
  r.public_key = key;
  r.reason = reason;
  r.void_from = void_from;
  return body_by(admin, r, claimed_time_ms);
}

EventBody manifest_body(const SecretKey& author, std::string canonical, std::string metadata,
                        int64_t claimed_time_ms) {
  return body_by(author, ManifestEvent{manifest_text(std::move(canonical), std::move(metadata))},
                 claimed_time_ms);
}

std::string environment_manifest_text(std::string_view vendor) {
  return R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ExecutionEnvironment","spec":)"
         R"({"hardware":{"architecture":"sm_100","product":"NVIDIA B200","vendor":")" +
         std::string(vendor) + R"("}}})";
}

std::string run_manifest_text(std::string_view source, std::string_view external_id,
                              uint64_t mean_ns) {
  // Members in JCS order: apiVersion, kind, spec{environmentDigest, implementationDigest,
  // observedAt, protocolDigest, sourceNative, status, timing, workloadDigest}.
  std::string out =
      R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkRun","spec":{)"
      R"("environmentDigest":")" + digest_text(test_digest("environment")) + R"(",)"
      R"("implementationDigest":")" + digest_text(test_digest(external_id)) + R"(",)"
      R"("observedAt":"2026-07-07T02:26:56.362Z",)"
      R"("protocolDigest":")" + digest_text(test_digest("protocol")) + R"(",)";
  if (!source.empty()) {
    out += R"("sourceNative":{"externalId":")" + std::string(external_id) +
           R"(","source":")" + std::string(source) + R"("},)";
  }
  out += R"("status":"passed","timing":{"latencyNs":{"mean":)" + std::to_string(mean_ns) +
         R"(},"primaryStatistic":"mean"},)"
         R"("workloadDigest":")" + digest_text(test_digest("workload")) + R"("}})";
  return out;
}

EventBody observation_body(const SecretKey& importer, std::string_view source,
                           std::string_view external_id, int64_t claimed_time_ms) {
  return body_by(importer,
                 Observation{manifest_text(run_manifest_text(source, external_id),
                                           R"({"name":"run-)" + std::string(external_id) +
                                               R"("})")},
                 claimed_time_ms);
}

EventBody rerun_body(const SecretKey& runner, const Digest& target, uint64_t mean_ns,
                     std::string cases, int64_t claimed_time_ms) {
  Rerun r;
  r.target = target;
  r.run = manifest_text(run_manifest_text("", "rerun", mean_ns));
  r.cases = std::move(cases);
  return body_by(runner, std::move(r), claimed_time_ms);
}

EventBody attestation_body(const SecretKey& author, const Digest& target, AttestationType type,
                           std::string text, std::string evidence_url, uint64_t observed_ns,
                           std::string environment, int64_t claimed_time_ms) {
  Attestation a;
  a.target = target;
  a.type = type;
  a.text = std::move(text);
  a.evidence_url = std::move(evidence_url);
  a.observed_ns = observed_ns;
  a.environment = std::move(environment);
  return body_by(author, std::move(a), claimed_time_ms);
}

EventBody retract_body(const SecretKey& curator, const Digest& target, std::string reason,
                       int64_t claimed_time_ms) {
  Correction c;
  c.kind = Correction::Kind::kRetract;
  c.reason = std::move(reason);
  c.target = target;
  return body_by(curator, std::move(c), claimed_time_ms);
}

EventBody supersede_body(const SecretKey& curator, const Digest& target,
                         const Digest& replacement, std::string reason,
                         int64_t claimed_time_ms) {
  Correction c;
  c.kind = Correction::Kind::kSupersede;
  c.reason = std::move(reason);
  c.target = target;
  c.replacement = replacement;
  return body_by(curator, std::move(c), claimed_time_ms);
}

EventBody disqualify_body(const SecretKey& author, std::string source, const Digest& target,
                          int64_t at_ms, std::string reason, int64_t claimed_time_ms) {
  Correction c;
  c.kind = Correction::Kind::kDisqualify;
  c.reason = std::move(reason);
  c.source = std::move(source);
  c.target = target;
  c.at_ms = at_ms;
  return body_by(author, std::move(c), claimed_time_ms);
}

Digest test_digest(std::string_view label) { return sha256(as_bytes(label)); }

Bytes signed_entry(const SecretKey& key, const EventBody& body) {
  auto entry = sign_event(key, body);
  if (!entry) throw std::runtime_error("signed_entry: " + entry.error().message());
  return std::move(entry).value();
}

Bytes cosigned_entry(const SecretKey& author, const std::vector<const SecretKey*>& cosigners,
                     const EventBody& body) {
  Bytes entry = signed_entry(author, body);
  for (const SecretKey* key : cosigners) {
    auto more = add_signature(*key, entry);
    if (!more) throw std::runtime_error("cosigned_entry: " + more.error().message());
    entry = std::move(more).value();
  }
  return entry;
}

std::vector<EventBody> Cast::prologue_bodies() const {
  return {
      genesis_body(admin, log.public_key()),
      grant_body(admin, key_ref(importer), {Role::kImporter}, {"gpumode", "sol-execbench"}),
      grant_body(admin, key_ref(runner), {Role::kRunner}, {"host-a", "owner-a"}),
      grant_body(admin, key_ref(curator), {Role::kCurator}),
      grant_body(admin, key_ref(attestor), {Role::kAttestor}),
  };
}

std::vector<Bytes> Cast::prologue_entries() const {
  std::vector<Bytes> out;
  for (const auto& body : prologue_bodies()) out.push_back(signed_entry(admin, body));
  return out;
}

std::shared_ptr<const SecretKey> test_log_key() {
  return std::make_shared<const SecretKey>(std::move(Cast().log));
}

}  // namespace evl::test
