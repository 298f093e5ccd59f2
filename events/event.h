// events/event.h — evledger's events as plain C++ values, and their canonical bytes.
//
// An entry is canonical Cap'n Proto `SignedEvent` bytes (events/event.capnp); its body is
// canonical `EventBody` bytes. Decoding is strict: bytes are accepted only when re-encoding
// the decoded value yields exactly the same bytes, which rejects non-canonical layouts,
// segment tables, unknown fields, unknown enum values and trailing garbage in one rule.
// events/FORMAT.md draws every byte.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "events/bytes.h"
#include "events/dsse.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {

inline constexpr uint16_t kSchemaVersion = 1;
// The C2SP tile bundle prefixes each entry with a big-endian uint16 length.
inline constexpr size_t kMaxEntryBytes = 65535;
// More signatures than this on one entry are rejected (each costs a verify).
inline constexpr size_t kMaxSignatures = 16;
inline constexpr size_t kMaxAttestationText = 2000;
inline constexpr size_t kMaxEvidenceUrl = 2000;  // characters: the KernelIndex schemas' URI limit

enum class Role : uint8_t { kAdmin = 0, kImporter, kRunner, kCurator, kAttestor };
enum class RevokeReason : uint8_t { kRetired = 0, kRotated, kCompromised };
enum class AttestationType : uint8_t {
  kReproduced = 0, kCouldNotReproduce, kEnvironmentNote, kRegressionObserved
};
enum class EventKind : uint8_t {
  kGenesis = 0, kKeyGrant, kKeyRevoke, kManifest, kObservation, kRerun, kAttestation,
  kCorrection
};

const char* role_name(Role role);
std::optional<Role> parse_role(std::string_view name);
const char* revoke_reason_name(RevokeReason reason);
std::optional<RevokeReason> parse_revoke_reason(std::string_view name);
const char* attestation_type_name(AttestationType type);
std::optional<AttestationType> parse_attestation_type(std::string_view name);
const char* event_kind_name(EventKind kind);

struct KeyRef {
  PublicKey public_key{};
  std::string name;
  friend bool operator==(const KeyRef&, const KeyRef&) = default;
};

struct Genesis {
  std::string origin;
  PublicKey log_key{};
  std::vector<KeyRef> admins;  // admins[0] authors the genesis event
  uint32_t rerun_tolerance_milli = 50;
  friend bool operator==(const Genesis&, const Genesis&) = default;
};

struct KeyGrant {
  KeyRef key;
  std::vector<Role> roles;          // strictly increasing, non-empty
  std::vector<std::string> scope;   // strictly increasing
  friend bool operator==(const KeyGrant&, const KeyGrant&) = default;
};

struct KeyRevoke {
  PublicKey public_key{};
  RevokeReason reason = RevokeReason::kRetired;
  uint64_t void_from = 0;  // compromised only, >= 1; 0 otherwise
  friend bool operator==(const KeyRevoke&, const KeyRevoke&) = default;
};

struct ManifestText {
  std::string canonical;  // RFC 8785 JSON of {apiVersion, kind, spec}
  std::string metadata;   // RFC 8785 JSON of metadata, or empty
  friend bool operator==(const ManifestText&, const ManifestText&) = default;
};

struct ManifestEvent {
  ManifestText manifest;
  friend bool operator==(const ManifestEvent&, const ManifestEvent&) = default;
};

struct Observation {
  ManifestText manifest;
  friend bool operator==(const Observation&, const Observation&) = default;
};

struct Rerun {
  Digest target{};
  ManifestText run;
  std::string cases;
  friend bool operator==(const Rerun&, const Rerun&) = default;
};

struct Attestation {
  Digest target{};
  AttestationType type = AttestationType::kReproduced;
  std::string text;
  std::string evidence_url;
  uint64_t observed_ns = 0;
  std::string environment;
  friend bool operator==(const Attestation&, const Attestation&) = default;
};

struct Correction {
  enum class Kind : uint8_t { kRetract = 0, kSupersede, kDisqualify };
  Kind kind = Kind::kRetract;
  std::string reason;
  Digest target{};
  Digest replacement{};  // supersede only
  std::string source;    // disqualify only
  int64_t at_ms = 0;     // disqualify only
  friend bool operator==(const Correction&, const Correction&) = default;
};

using Payload = std::variant<Genesis, KeyGrant, KeyRevoke, ManifestEvent, Observation, Rerun,
                             Attestation, Correction>;

struct EventBody {
  uint16_t schema_version = kSchemaVersion;
  PublicKey author{};
  int64_t claimed_time_ms = 0;
  Payload payload;

  EventKind kind() const { return static_cast<EventKind>(payload.index()); }
  friend bool operator==(const EventBody&, const EventBody&) = default;
};

struct EntrySignature {
  PublicKey public_key{};
  Signature64 signature{};
  friend bool operator==(const EntrySignature&, const EntrySignature&) = default;
};

struct SignedEvent {
  Bytes body;
  std::vector<EntrySignature> signatures;
  friend bool operator==(const SignedEvent&, const SignedEvent&) = default;
};

// Canonical bytes. Encoding never fails for a value that decode_* would accept; values that
// break a field rule (wrong lengths are impossible by type) are still encoded as given.
Bytes encode_body(const EventBody& body);
Bytes encode_entry(const SignedEvent& entry);

// Strict decoders: kRejected with a message naming the rule that the bytes break.
Result<EventBody> decode_body(ByteView bytes);
Result<SignedEvent> decode_entry(ByteView bytes);
// decode_body() of an entry's body, read where it lies in the entry when the entry is in
// canonical layout (no copy of it), and the body's event id in `id`: what a reader of stored
// entries needs (a rebuild decodes the whole log). The errors of decode_entry, then of
// decode_body.
Result<EventBody> decode_entry_body(ByteView entry, Digest& id);
// Whether `entry` is laid out word for word as encode_entry lays out a valid envelope (a body
// and 1 to kMaxSignatures signatures). decode_entry and check_entry read such an envelope in
// place; any other bytes get the full decoding, which accepts them only if they are canonical
// after all and otherwise says what is wrong. For the tests of that fast path.
bool entry_in_canonical_layout(ByteView entry);
// The same for a manifest or observation body, which decode_body and check_entry then read in
// place; any other body gets the full decoding.
bool body_in_canonical_layout(ByteView body);

// Field rules that canonical form cannot express (non-empty roles, sorted scope, text limits,
// voidFrom only for compromise, ...). decode_body applies them; exposed for tools that build
// bodies so they can refuse before signing.
Status check_body_fields(const EventBody& body);

inline Digest event_id(ByteView body) { return sha256(body); }

// An entry that passed every stateless check: size, canonical envelope and body, known schema,
// author = first signer, distinct signers, every signature valid.
struct CheckedEntry {
  Digest id{};
  EventBody body;
  std::vector<PublicKey> signers;
};

// Runs every check that needs no ledger state. Safe to call from many threads at once.
Result<CheckedEntry> check_entry(ByteView entry);

}  // namespace evl
