// tests/support/fixtures.h — deterministic keys, event bodies and signed entries for tests.
//
// Every key comes from a fixed seed (32 copies of one byte), every body from fixed values
// (claimed time kTestTimeMs unless given), so two runs build byte-identical entries. Builders
// return plain values; the signing helpers throw std::runtime_error when the code under test
// refuses to sign, which turns a broken fixture into a failed test rather than a silent pass.
//
// Thread safety: pure functions; a SecretKey may sign from several threads (keys/key.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "keys/key.h"

namespace evl::test {

// 2023-11-14T22:13:20Z, the claimed time of every fixture body unless a builder is told otherwise.
inline constexpr int64_t kTestTimeMs = 1700000000000;
inline constexpr std::string_view kTestOrigin = "example.org/test-log";

// A key whose 32-byte seed is `seed_byte` repeated: test_key("example.org/test-author", 0x01)
// is the key of the worked example in events/FORMAT.md.
SecretKey test_key(std::string name, uint8_t seed_byte);

KeyRef key_ref(const SecretKey& key);

// ---- bodies -------------------------------------------------------------------------------
// The author of each body is `author`'s public key.

// The genesis: `admin` is admins[0] and its author; `more_admins` follow it.
EventBody genesis_body(const SecretKey& admin, const PublicKey& log_key,
                       std::vector<KeyRef> more_admins = {},
                       std::string origin = std::string(kTestOrigin),
                       int64_t claimed_time_ms = kTestTimeMs);

EventBody grant_body(const SecretKey& admin, const KeyRef& key, std::vector<Role> roles,
                     std::vector<std::string> scope = {}, int64_t claimed_time_ms = kTestTimeMs);

EventBody revoke_body(const SecretKey& admin, const PublicKey& key, RevokeReason reason,
                      uint64_t void_from = 0, int64_t claimed_time_ms = kTestTimeMs);

// A manifest event for the given JCS text and metadata (empty metadata is left unset).
EventBody manifest_body(const SecretKey& author, std::string canonical,
                        std::string metadata = {}, int64_t claimed_time_ms = kTestTimeMs);

// The JCS text of a small ExecutionEnvironment manifest ("NVIDIA B200", sm_100, `vendor`):
// the manifest of FORMAT.md's worked example with vendor "nvidia".
std::string environment_manifest_text(std::string_view vendor = "nvidia");

// The JCS text of a passed BenchmarkRun reported by `source` (spec.sourceNative.source) with
// the given external id and mean latency. Without a source the run has no sourceNative, as a
// rerun's manifest.
std::string run_manifest_text(std::string_view source, std::string_view external_id,
                              uint64_t mean_ns = 159785);

// An observation whose manifest is run_manifest_text(source, external_id).
EventBody observation_body(const SecretKey& importer, std::string_view source,
                           std::string_view external_id = "17828",
                           int64_t claimed_time_ms = kTestTimeMs);

EventBody rerun_body(const SecretKey& runner, const Digest& target, uint64_t mean_ns = 160000,
                     std::string cases = {}, int64_t claimed_time_ms = kTestTimeMs);

EventBody attestation_body(const SecretKey& author, const Digest& target,
                           AttestationType type = AttestationType::kReproduced,
                           std::string text = "reproduced within 2% on our B200",
                           std::string evidence_url = {}, uint64_t observed_ns = 0,
                           std::string environment = {}, int64_t claimed_time_ms = kTestTimeMs);

EventBody retract_body(const SecretKey& curator, const Digest& target,
                       std::string reason = "the source withdrew this run",
                       int64_t claimed_time_ms = kTestTimeMs);
EventBody supersede_body(const SecretKey& curator, const Digest& target,
                         const Digest& replacement, std::string reason = "re-imported with fixes",
                         int64_t claimed_time_ms = kTestTimeMs);
EventBody disqualify_body(const SecretKey& author, std::string source, const Digest& target,
                          int64_t at_ms = kTestTimeMs - 1000,
                          std::string reason = "the source disqualified this submission",
                          int64_t claimed_time_ms = kTestTimeMs);

// A digest to point at: SHA-256 of `label`.
Digest test_digest(std::string_view label);

// ---- entries ------------------------------------------------------------------------------

// sign_event(key, body); throws std::runtime_error with the rejection message on failure.
Bytes signed_entry(const SecretKey& key, const EventBody& body);
// signed_entry, then add_signature for each co-signer in order.
Bytes cosigned_entry(const SecretKey& author, const std::vector<const SecretKey*>& cosigners,
                     const EventBody& body);

// The Cast's log key (the genesis's log key), shared, as OpenOptions::log_key takes it.
std::shared_ptr<const SecretKey> test_log_key();

// ---- a small ledger cast ------------------------------------------------------------------

// The keys of a typical ledger, each from its own seed byte (0x11..0x16). Importer scope:
// {"gpumode", "sol-execbench"}; runner scope: {"host-a", "owner-a"}.
struct Cast {
  SecretKey admin = test_key("admin.example.org", 0x11);
  SecretKey log = test_key("example.org/test-log", 0x12);
  SecretKey importer = test_key("importer.example.org", 0x13);
  SecretKey runner = test_key("runner.example.org", 0x14);
  SecretKey curator = test_key("curator.example.org", 0x15);
  SecretKey attestor = test_key("attestor.example.org", 0x16);

  // Genesis (index 0) then the grants of importer, runner, curator and attestor (1..4).
  std::vector<EventBody> prologue_bodies() const;
  std::vector<Bytes> prologue_entries() const;
};

}  // namespace evl::test
