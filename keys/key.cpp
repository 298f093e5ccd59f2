#include "keys/key.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "events/file_read.h"
#include "events/sha256.h"
#include "keys/note.h"

namespace evl {

namespace {

constexpr size_t kSeedBytes = crypto_sign_SEEDBYTES;
constexpr std::string_view kSecretPrefix = "PRIVATE+KEY+";

// Splits "a+b+c" at the first two '+': names cannot hold '+', but base64 can.
bool split3(std::string_view text, std::string_view& a, std::string_view& b, std::string_view& c) {
  size_t p1 = text.find('+');
  if (p1 == std::string_view::npos) return false;
  size_t p2 = text.find('+', p1 + 1);
  if (p2 == std::string_view::npos) return false;
  a = text.substr(0, p1);
  b = text.substr(p1 + 1, p2 - p1 - 1);
  c = text.substr(p2 + 1);
  return true;
}

// Drops one line ending, LF or CR LF: key files edited on Windows end in CR LF, and a CR can be
// part of neither a key name (no control characters) nor base64, so nothing else is meant.
std::string strip_newline(std::string_view text) {
  if (text.ends_with("\r\n")) text.remove_suffix(2);
  else if (text.ends_with('\n')) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

Status check_key_name(std::string_view name) {
  if (name.empty()) return rejected("a key name must not be empty");
  for (unsigned char c : name) {
    if (c <= 0x20 || c == 0x7f || c == '+') {
      return rejected("key name '" + std::string(name) +
                      "' has a space, a control character or '+', which C2SP notes forbid");
    }
  }
  if (!is_valid_note_key_name(name)) {
    return rejected("key name '" + std::string(name) +
                    "' is not UTF-8 or has a Unicode space, which C2SP notes forbid");
  }
  return Status::ok();
}

KeyId key_id(std::string_view name, const PublicKey& public_key) {
  Sha256 h;
  h.update(name).update(std::string_view("\n"));
  const uint8_t alg = kEd25519Algorithm;
  h.update(ByteView(&alg, 1)).update(ByteView(public_key));
  Digest d = h.finish();
  KeyId id;
  std::memcpy(id.data(), d.data(), id.size());
  return id;
}

VerifierKey VerifierKey::of(std::string name, const PublicKey& public_key) {
  VerifierKey key;
  key.id = key_id(name, public_key);
  key.name = std::move(name);
  key.public_key = public_key;
  return key;
}

Result<VerifierKey> VerifierKey::parse(std::string_view text) {
  text = std::string_view(text.data(), strip_newline(text).size());
  std::string_view name, id_hex, key_b64;
  if (!split3(text, name, id_hex, key_b64)) {
    return rejected("'" + std::string(text) + "' is not a verifier key <name>+<hex id>+<base64>");
  }
  EVL_RETURN_IF_ERROR(check_key_name(name));
  auto id = hex_decode(id_hex);
  if (!id || id->size() != 4) {
    return rejected("verifier key '" + std::string(name) + "': key id must be 8 hex digits");
  }
  auto raw = base64_decode(key_b64);
  if (!raw || raw->size() != 33 || (*raw)[0] != kEd25519Algorithm) {
    return rejected("verifier key '" + std::string(name) +
                    "': key must be base64 of 0x01 followed by a 32-byte Ed25519 public key");
  }
  PublicKey pk;
  std::memcpy(pk.data(), raw->data() + 1, pk.size());
  VerifierKey key = of(std::string(name), pk);
  if (!std::equal(key.id.begin(), key.id.end(), id->begin())) {
    return rejected("verifier key '" + std::string(name) + "': key id " + std::string(id_hex) +
                    " does not match the name and key (expected " + hex_encode(key.id) + ")");
  }
  return key;
}

std::string VerifierKey::to_string() const {
  Bytes raw{kEd25519Algorithm};
  raw.insert(raw.end(), public_key.begin(), public_key.end());
  return name + "+" + hex_encode(id) + "+" + base64_encode(raw);
}

SecretKey::SecretKey(SecretKey&& other) noexcept
    : name_(std::move(other.name_)), public_key_(other.public_key_), secret_(other.secret_) {
  other.secret_ = nullptr;
}

SecretKey& SecretKey::operator=(SecretKey&& other) noexcept {
  if (this != &other) {
    if (secret_ != nullptr) sodium_free(secret_);
    name_ = std::move(other.name_);
    public_key_ = other.public_key_;
    secret_ = other.secret_;
    other.secret_ = nullptr;
  }
  return *this;
}

SecretKey::~SecretKey() {
  if (secret_ != nullptr) sodium_free(secret_);  // sodium_free zeroes before freeing
}

Result<SecretKey> SecretKey::from_seed(std::string name, ByteView seed) {
  EVL_RETURN_IF_ERROR(check_key_name(name));
  if (seed.size() != kSeedBytes) return rejected("an Ed25519 seed is 32 bytes");
  SecretKey key;
  key.secret_ = static_cast<uint8_t*>(sodium_malloc(crypto_sign_SECRETKEYBYTES));
  if (key.secret_ == nullptr) return io_error("sodium_malloc failed for a secret key");
  crypto_sign_seed_keypair(key.public_key_.data(), key.secret_, seed.data());
  key.name_ = std::move(name);
  return key;
}

Result<SecretKey> SecretKey::generate(std::string name) {
  uint8_t* seed = static_cast<uint8_t*>(sodium_malloc(kSeedBytes));
  if (seed == nullptr) return io_error("sodium_malloc failed for a seed");
  randombytes_buf(seed, kSeedBytes);
  auto key = from_seed(std::move(name), ByteView(seed, kSeedBytes));
  sodium_free(seed);
  return key;
}

Result<SecretKey> SecretKey::parse(std::string_view text) {
  std::string line = strip_newline(text);
  std::string_view rest(line);
  if (rest.substr(0, kSecretPrefix.size()) != kSecretPrefix) {
    return rejected("a secret key file must start with PRIVATE+KEY+");
  }
  rest.remove_prefix(kSecretPrefix.size());
  std::string_view name, id_hex, seed_b64;
  if (!split3(rest, name, id_hex, seed_b64)) {
    return rejected("a secret key file reads PRIVATE+KEY+<name>+<hex id>+<base64 seed>");
  }
  auto raw = base64_decode(seed_b64);
  if (!raw || raw->size() != 1 + kSeedBytes || (*raw)[0] != kEd25519Algorithm) {
    if (raw) sodium_memzero(raw->data(), raw->size());
    return rejected("secret key '" + std::string(name) +
                    "': key must be base64 of 0x01 followed by a 32-byte Ed25519 seed");
  }
  auto key = from_seed(std::string(name), ByteView(raw->data() + 1, kSeedBytes));
  sodium_memzero(raw->data(), raw->size());
  // Zero only the seed's text: name and id_hex point into `line` and are read below.
  sodium_memzero(line.data() + (seed_b64.data() - line.data()), seed_b64.size());
  if (!key) return key;
  if (hex_encode(key->id()) != id_hex) {
    return rejected("secret key '" + std::string(name) + "': key id " + std::string(id_hex) +
                    " does not match the key (expected " + hex_encode(key->id()) + ")");
  }
  return key;
}

Result<SecretKey> SecretKey::load(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return io_error("cannot open secret key file " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return rejected("secret key file " + path + " has mode " + mode +
                    ": group or others may read it; run 'chmod 600 " + path + "'");
  }
  auto text = read_file(path, ReadLimit{"secret key file", kMaxKeyFileBytes});
  if (!text) return text.error();
  auto key = parse(*text);
  sodium_memzero(text->data(), text->size());
  if (!key) return key.error().with_context(path);
  return key;
}

std::string SecretKey::file_text() const {
  Bytes raw{kEd25519Algorithm};
  raw.insert(raw.end(), secret_, secret_ + kSeedBytes);  // libsodium's sk starts with the seed
  std::string text = std::string(kSecretPrefix) + name_ + "+" + hex_encode(id()) + "+" +
                     base64_encode(raw) + "\n";
  sodium_memzero(raw.data(), raw.size());
  return text;
}

Status SecretKey::save(const std::string& path) const {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return io_error("cannot create secret key file " + path + ": " + std::strerror(errno) +
                    (errno == EEXIST ? " (refusing to overwrite a key)" : ""));
  }
  std::string text = file_text();
  ssize_t n = ::write(fd, text.data(), text.size());
  sodium_memzero(text.data(), text.size());
  bool ok = n == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return io_error("cannot write secret key file " + path + ": " + std::strerror(errno));
  return Status::ok();
}

Signature64 SecretKey::sign(ByteView message) const {
  EVL_ASSERT(secret_ != nullptr);
  Signature64 sig;
  crypto_sign_detached(sig.data(), nullptr, message.data(), message.size(), secret_);
  return sig;
}

Result<VerifierKey> load_verifier_key(const std::string& text_or_path) {
  struct stat st;
  if (::stat(text_or_path.c_str(), &st) == 0) {
    auto text = read_file(text_or_path, ReadLimit{"verifier key file", kMaxKeyFileBytes});
    if (!text) return text.error();
    size_t end = text->find('\n');
    auto key = VerifierKey::parse(text->substr(0, end == std::string::npos ? end : end + 1));
    if (!key) return key.error().with_context(text_or_path);
    return key;
  }
  const int stat_errno = errno;
  std::string_view name, id, key;
  if (!split3(text_or_path, name, id, key)) {
    // Neither a file nor shaped like a key: most likely a mistyped path.
    return io_error("cannot read verifier key file " + text_or_path + ": " +
                    std::strerror(stat_errno) +
                    " (nor is it a verifier key <name>+<hex id>+<base64>)");
  }
  return VerifierKey::parse(text_or_path);
}

}  // namespace evl
