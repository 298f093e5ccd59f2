// keys/checkpoint.h — C2SP tlog-checkpoint signed notes and tlog-cosignature v1 (Ed25519).
//
//   checkpoint body   <origin>\n<tree size, decimal>\n<base64 root hash>\n[<extension line>\n]*
//   checkpoint        body, blank line, "— <origin> <base64(key id ‖ Ed25519 sig)>\n", ...
//   cosigner key      <name>+<8 hex key id>+<base64(0x04 ‖ 32-byte Ed25519 public key)>
//   cosigner key id   first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)
//   cosigned message  "cosignature/v1\ntime <unix seconds>\n" ‖ checkpoint body
//   cosignature line  "— <cosigner name> <base64(key id ‖ 8-byte BE time ‖ 64-byte sig)>\n"
//
// An evledger log signs with its log key, whose name is the origin, and writes no extension
// lines. Checkpoints from elsewhere may carry some: parsing keeps them in `extensions` and
// checkpoint_body writes them back, so a body round-trips byte for byte and a cosignature
// covers exactly what the cosigner saw.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/bytes.h"
#include "events/sha256.h"
#include "events/status.h"
#include "keys/key.h"
#include "keys/note.h"

namespace evl {

constexpr uint8_t kCosignatureV1Algorithm = 0x04;  // C2SP signed-note type: Ed25519 cosignature
// Cosignature timestamps must not exceed 2^63 - 1 (tlog-cosignature).
constexpr uint64_t kMaxCosignatureTime = (uint64_t{1} << 63) - 1;

struct Checkpoint {
  std::string origin;  // non-empty, no newline
  uint64_t size = 0;
  Digest root{};
  // Opaque extension lines after the root, without their newlines. Each non-empty. Empty for
  // every checkpoint an evledger log signs.
  std::vector<std::string> extensions;
  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

// "<origin>\n<size>\n<base64 root>\n" then each extension line. The checkpoint must satisfy
// the rules above (a bug otherwise: EVL_ASSERT).
std::string checkpoint_body(const Checkpoint& checkpoint);

// Strict: at least three lines, each ending in "\n"; a non-empty origin; the size in decimal
// without sign or leading zeros ("0" for the empty tree); the root standard padded base64 of
// 32 bytes; any further lines non-empty (kept in `extensions`); valid UTF-8 without control
// characters. kRejected naming the line otherwise.
Result<Checkpoint> parse_checkpoint_body(std::string_view body);

// The signed note of the checkpoint with the log's signature. Precondition: the key's name is
// the origin and the checkpoint satisfies checkpoint_body's rules (EVL_ASSERT).
std::string sign_checkpoint(const Checkpoint& checkpoint, const SecretKey& log_key);

// Opens a signed checkpoint note: the log key's signature must verify (open_note's rules; other
// signatures, such as cosignatures, are ignored here), the body must parse, and the origin must
// equal the log key's name. kRejected with the reason otherwise.
Result<Checkpoint> open_checkpoint(std::string_view note, const VerifierKey& log_key);

// A cosigner's verifier key: an Ed25519 public key under signature type 0x04.
struct CosignerKey {
  std::string name;
  KeyId id{};
  PublicKey public_key{};

  static CosignerKey of(std::string name, const PublicKey& public_key);
  // Parses "<name>+<hex id>+<base64(0x04 ‖ public key)>"; checks the name, type and key id.
  static Result<CosignerKey> parse(std::string_view text);
  std::string to_string() const;
  friend bool operator==(const CosignerKey&, const CosignerKey&) = default;
};

KeyId cosigner_key_id(std::string_view name, const PublicKey& public_key);

// The bytes a cosigner signs: "cosignature/v1\ntime <time>\n" ‖ checkpoint_body(checkpoint).
std::string cosignature_message(const Checkpoint& checkpoint, uint64_t time);

// The cosignature of `cosigner` (any Ed25519 secret key; its id is taken under type 0x04) over
// the checkpoint at `time` (unix seconds, at most kMaxCosignatureTime: EVL_ASSERT). Its
// note_signature_line is what a witness returns; append it to the checkpoint note.
NoteSignature cosign_checkpoint(const Checkpoint& checkpoint, const SecretKey& cosigner,
                                uint64_t time);

// Checks one signature line against a cosigner key; returns the cosignature's time. kRejected
// when the name or key id is not the cosigner's, the signature is not 8 + 64 bytes, the time
// exceeds kMaxCosignatureTime, or the Ed25519 signature fails. A time in the future is not
// rejected here: the caller compares it with its clock if it cares.
[[nodiscard]] Result<uint64_t> verify_cosignature(const Checkpoint& checkpoint,
                                                  const NoteSignature& signature,
                                                  const CosignerKey& cosigner);

struct Cosignature {
  std::string name;  // the cosigner's name
  uint64_t time = 0;
};

struct CosignedCheckpoint {
  Checkpoint checkpoint;
  std::vector<Cosignature> cosignatures;  // verified, in note order, one per known cosigner
};

// open_checkpoint, then every signature line of a known cosigner (same name and id) must
// verify (kRejected naming the cosigner otherwise; as in open_note a cosigner's later lines
// are ignored). Signatures of unknown keys are ignored. The quorum policy is the caller's.
Result<CosignedCheckpoint> open_cosigned_checkpoint(std::string_view note,
                                                    const VerifierKey& log_key,
                                                    std::span<const CosignerKey> cosigners);

}  // namespace evl
