#include "keys/checkpoint.h"

#include <algorithm>
#include <cstring>

#include "events/dsse.h"
#include "events/utf8.h"

namespace evl {

namespace {

constexpr size_t kTimeBytes = 8;

bool is_line(std::string_view s) { return !s.empty() && s.find('\n') == std::string_view::npos; }

std::string cosignature_message_over(std::string_view body, uint64_t time) {
  return "cosignature/v1\ntime " + std::to_string(time) + "\n" + std::string(body);
}

// verify_cosignature over the exact body bytes (those of a note when opening one).
Result<uint64_t> verify_cosignature_over(std::string_view body, const NoteSignature& signature,
                                         const CosignerKey& cosigner) {
  const std::string who = "cosignature by " + cosigner.name + "+" + hex_encode(cosigner.id);
  if (signature.name != cosigner.name || signature.id != cosigner.id) {
    return rejected(who + ": the signature line is by " + signature.name + "+" +
                    hex_encode(signature.id) + ", another key");
  }
  if (signature.signature.size() != kTimeBytes + 64) {
    return rejected(who + ": a cosignature is an 8-byte time and a 64-byte Ed25519 signature, not " +
                    std::to_string(signature.signature.size()) + " bytes");
  }
  uint64_t time = get_u64_be(signature.signature.data());
  if (time > kMaxCosignatureTime) {
    return rejected(who + ": time " + std::to_string(time) + " exceeds 2^63-1");
  }
  std::string message = cosignature_message_over(body, time);
  if (!ed25519_verify(cosigner.public_key, as_bytes(message),
                      ByteView(signature.signature).subspan(kTimeBytes))) {
    return rejected(who + " does not verify: the checkpoint or the time was altered, or another "
                          "key signed it");
  }
  return time;
}

struct OpenedCheckpoint {
  VerifiedNote note;
  Checkpoint checkpoint;
};

Result<OpenedCheckpoint> open_with_log_key(std::string_view note, const VerifierKey& log_key) {
  auto opened = open_note(note, std::span<const VerifierKey>(&log_key, 1));
  if (!opened) return opened.error().with_context("checkpoint");
  auto checkpoint = parse_checkpoint_body(opened->text);
  if (!checkpoint) return checkpoint.error();
  if (checkpoint->origin != log_key.name) {
    return rejected("checkpoint origin '" + checkpoint->origin + "' is not the log key's name '" +
                    log_key.name + "'; the log key names its log: use that log's key");
  }
  return OpenedCheckpoint{std::move(*opened), std::move(*checkpoint)};
}

}  // namespace

std::string checkpoint_body(const Checkpoint& checkpoint) {
  EVL_ASSERT(is_line(checkpoint.origin));
  std::string body = checkpoint.origin + "\n" + std::to_string(checkpoint.size) + "\n" +
                     base64_encode(checkpoint.root) + "\n";
  for (const std::string& line : checkpoint.extensions) {
    EVL_ASSERT(is_line(line));
    body += line + "\n";
  }
  return body;
}

Result<Checkpoint> parse_checkpoint_body(std::string_view body) {
  if (!is_valid_utf8(body)) return rejected("checkpoint body is not valid UTF-8");
  if (std::any_of(body.begin(), body.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\n';
      })) {
    return rejected("checkpoint body has a control character other than newline");
  }
  if (body.empty() || body.back() != '\n') {
    return rejected("checkpoint body must end in a newline");
  }
  std::vector<std::string_view> lines;
  for (std::string_view rest = body; !rest.empty();) {
    size_t end = rest.find('\n');
    lines.push_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  if (lines.size() < 3) {
    return rejected("checkpoint body needs three lines (origin, tree size, root hash), has " +
                    std::to_string(lines.size()));
  }
  Checkpoint checkpoint;
  if (lines[0].empty()) return rejected("checkpoint origin (line 1) must not be empty");
  checkpoint.origin = std::string(lines[0]);
  auto size = parse_u64(lines[1]);
  if (!size) return size.error().with_context("checkpoint tree size (line 2)");
  checkpoint.size = *size;
  auto root = base64_decode(lines[2]);
  if (!root || root->size() != checkpoint.root.size()) {
    return rejected("checkpoint root hash (line 3) must be standard padded base64 of 32 bytes");
  }
  std::memcpy(checkpoint.root.data(), root->data(), checkpoint.root.size());
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      return rejected("checkpoint extension line " + std::to_string(i + 1) + " is empty");
    }
    checkpoint.extensions.emplace_back(lines[i]);
  }
  return checkpoint;
}

std::string sign_checkpoint(const Checkpoint& checkpoint, const SecretKey& log_key) {
  EVL_ASSERT(log_key.name() == checkpoint.origin);
  auto note = sign_note(checkpoint_body(checkpoint), log_key);
  EVL_ASSERT(note.has_value());  // a body of valid lines signed by a valid key name
  return std::move(note).value();
}

Result<Checkpoint> open_checkpoint(std::string_view note, const VerifierKey& log_key) {
  auto opened = open_with_log_key(note, log_key);
  if (!opened) return opened.error();
  return std::move(opened->checkpoint);
}

KeyId cosigner_key_id(std::string_view name, const PublicKey& public_key) {
  Sha256 h;
  const uint8_t type = kCosignatureV1Algorithm;
  h.update(name).update(std::string_view("\n")).update(ByteView(&type, 1));
  Digest d = h.update(ByteView(public_key)).finish();
  KeyId id;
  std::memcpy(id.data(), d.data(), id.size());
  return id;
}

CosignerKey CosignerKey::of(std::string name, const PublicKey& public_key) {
  CosignerKey key;
  key.id = cosigner_key_id(name, public_key);
  key.name = std::move(name);
  key.public_key = public_key;
  return key;
}

Result<CosignerKey> CosignerKey::parse(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  size_t p1 = text.find('+');
  size_t p2 = p1 == std::string_view::npos ? p1 : text.find('+', p1 + 1);
  if (p2 == std::string_view::npos) {
    return rejected("'" + std::string(text) + "' is not a cosigner key <name>+<hex id>+<base64>");
  }
  std::string_view name = text.substr(0, p1);
  std::string_view id_hex = text.substr(p1 + 1, p2 - p1 - 1);
  EVL_RETURN_IF_ERROR(check_key_name(name));
  auto id = hex_decode(id_hex);
  if (!id || id->size() != 4) {
    return rejected("cosigner key '" + std::string(name) + "': key id must be 8 hex digits");
  }
  auto raw = base64_decode(text.substr(p2 + 1));
  if (!raw || raw->size() != 33 || (*raw)[0] != kCosignatureV1Algorithm) {
    return rejected("cosigner key '" + std::string(name) +
                    "': key must be base64 of 0x04 followed by a 32-byte Ed25519 public key "
                    "(a 0x01 note key converts with CosignerKey::of)");
  }
  PublicKey pk;
  std::memcpy(pk.data(), raw->data() + 1, pk.size());
  CosignerKey key = of(std::string(name), pk);
  if (!std::equal(key.id.begin(), key.id.end(), id->begin())) {
    return rejected("cosigner key '" + std::string(name) + "': key id " + std::string(id_hex) +
                    " does not match the name and key (expected " + hex_encode(key.id) + ")");
  }
  return key;
}

std::string CosignerKey::to_string() const {
  Bytes raw{kCosignatureV1Algorithm};
  raw.insert(raw.end(), public_key.begin(), public_key.end());
  return name + "+" + hex_encode(id) + "+" + base64_encode(raw);
}

std::string cosignature_message(const Checkpoint& checkpoint, uint64_t time) {
  return cosignature_message_over(checkpoint_body(checkpoint), time);
}

NoteSignature cosign_checkpoint(const Checkpoint& checkpoint, const SecretKey& cosigner,
                                uint64_t time) {
  EVL_ASSERT(time <= kMaxCosignatureTime);
  Signature64 sig = cosigner.sign(as_bytes(cosignature_message(checkpoint, time)));
  NoteSignature out{cosigner.name(), cosigner_key_id(cosigner.name(), cosigner.public_key()), {}};
  auto be = u64_be(time);
  out.signature.assign(be.begin(), be.end());
  out.signature.insert(out.signature.end(), sig.begin(), sig.end());
  return out;
}

Result<uint64_t> verify_cosignature(const Checkpoint& checkpoint, const NoteSignature& signature,
                                    const CosignerKey& cosigner) {
  return verify_cosignature_over(checkpoint_body(checkpoint), signature, cosigner);
}

Result<CosignedCheckpoint> open_cosigned_checkpoint(std::string_view note,
                                                    const VerifierKey& log_key,
                                                    std::span<const CosignerKey> cosigners) {
  auto opened = open_with_log_key(note, log_key);
  if (!opened) return opened.error();
  CosignedCheckpoint out{std::move(opened->checkpoint), {}};
  std::vector<const CosignerKey*> seen;
  for (const NoteSignature& sig : opened->note.unverified) {
    auto known = std::find_if(cosigners.begin(), cosigners.end(), [&](const CosignerKey& k) {
      return k.name == sig.name && k.id == sig.id;
    });
    if (known == cosigners.end()) continue;
    if (std::find(seen.begin(), seen.end(), &*known) != seen.end()) continue;
    seen.push_back(&*known);
    auto time = verify_cosignature_over(opened->note.text, sig, *known);
    if (!time) return time.error().with_context("checkpoint");
    out.cosignatures.push_back(Cosignature{sig.name, *time});
  }
  return out;
}

}  // namespace evl
