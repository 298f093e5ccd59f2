// keys/key.h — Ed25519 keys in C2SP signed-note format: verifier keys, secret key files, key ids.
//
//   verifier key     <name>+<8 hex key id>+<base64(0x01 ‖ 32-byte public key)>
//   secret key file  PRIVATE+KEY+<name>+<8 hex key id>+<base64(0x01 ‖ 32-byte seed)>
//   key id           first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key)
//
// This is Go's golang.org/x/mod/sumdb/note key format, so keys made here work with `note` tools.
// Secret keys live in sodium_malloc'd memory, are move-only and are zeroed when dropped.
//
// Thread safety: VerifierKey is a value type. A SecretKey may be shared for signing (sign is
// const and touches no mutable state); moving it while another thread signs is a bug.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "events/bytes.h"
#include "events/dsse.h"
#include "events/status.h"

namespace evl {

using KeyId = std::array<uint8_t, 4>;

constexpr uint8_t kEd25519Algorithm = 0x01;  // C2SP signed-note signature type for Ed25519
// Security limit: a key file (one line of a name, an id and 44 base64 characters) larger than
// this is not a key file, and is refused before it is read.
inline constexpr size_t kMaxKeyFileBytes = 4096;

// A key name must be non-empty, have no Unicode spaces (we allow printable ASCII and UTF-8
// above U+007F but no ASCII space or control) and no '+'.
Status check_key_name(std::string_view name);

KeyId key_id(std::string_view name, const PublicKey& public_key);

struct VerifierKey {
  std::string name;
  KeyId id{};
  PublicKey public_key{};

  static VerifierKey of(std::string name, const PublicKey& public_key);
  // Parses "<name>+<hex id>+<base64>"; checks the name, the algorithm byte and the key id.
  static Result<VerifierKey> parse(std::string_view text);
  std::string to_string() const;

  [[nodiscard]] bool verify(ByteView message, ByteView signature) const {
    return ed25519_verify(public_key, message, signature);
  }
  friend bool operator==(const VerifierKey&, const VerifierKey&) = default;
};

class SecretKey {
 public:
  SecretKey(SecretKey&& other) noexcept;
  SecretKey& operator=(SecretKey&& other) noexcept;
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;
  ~SecretKey();

  static Result<SecretKey> generate(std::string name);
  static Result<SecretKey> from_seed(std::string name, ByteView seed);
  // Parses the text of a secret key file (one line; a trailing LF or CR LF is allowed).
  static Result<SecretKey> parse(std::string_view text);
  // Loads a secret key file. kRejected if group or others may read it (mode must be 0600 or
  // stricter), kIo if it cannot be read.
  static Result<SecretKey> load(const std::string& path);
  // Writes the secret key file with mode 0600; refuses to overwrite an existing file.
  Status save(const std::string& path) const;

  const std::string& name() const { return name_; }
  const PublicKey& public_key() const { return public_key_; }
  KeyId id() const { return key_id(name_, public_key_); }
  VerifierKey verifier() const { return VerifierKey::of(name_, public_key_); }

  Signature64 sign(ByteView message) const;

 private:
  SecretKey() = default;
  std::string file_text() const;

  std::string name_;
  PublicKey public_key_{};
  uint8_t* secret_ = nullptr;  // 64-byte libsodium secret key (seed ‖ public key), sodium_malloc
};

// Reads a verifier key from the argument itself or, when it names an existing file, from the
// file's first line (ending in LF or CR LF; at most kMaxKeyFileBytes, events/file_read.h). kIo
// for an argument that is neither an existing file nor shaped like a key (a mistyped path).
Result<VerifierKey> load_verifier_key(const std::string& text_or_path);

}  // namespace evl
