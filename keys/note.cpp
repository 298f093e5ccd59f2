#include "keys/note.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "events/utf8.h"

namespace evl {

namespace {

constexpr std::string_view kSignaturePrefix = "\xE2\x80\x94 ";  // em dash U+2014, space

std::string key_label(std::string_view name, const KeyId& id) {
  return std::string(name) + "+" + hex_encode(id);
}

// The rule every byte of a signed note obeys: UTF-8, and no control character but "\n".
Status check_note_chars(std::string_view message, std::string_view what) {
  if (!is_valid_utf8(message)) {
    return rejected(std::string(what) + " is not valid UTF-8, which C2SP signed notes require");
  }
  for (size_t i = 0; i < message.size(); ++i) {
    auto c = static_cast<unsigned char>(message[i]);
    if (c < 0x20 && c != '\n') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      return rejected(std::string(what) + " has control character " + hex + " at byte " +
                      std::to_string(i) + "; signed notes allow no control character but \\n");
    }
  }
  return Status::ok();
}

Result<NoteSignature> parse_signature_line(std::string_view line, size_t number) {
  const std::string where = "signed note, signature line " + std::to_string(number);
  if (line.substr(0, kSignaturePrefix.size()) != kSignaturePrefix) {
    return rejected(where + ": does not start with an em dash (U+2014) and a space");
  }
  line.remove_prefix(kSignaturePrefix.size());
  size_t space = line.find(' ');
  std::string_view name = line.substr(0, space);
  std::string_view b64 = space == std::string_view::npos ? "" : line.substr(space + 1);
  if (!is_valid_note_key_name(name)) {
    return rejected(where + ": key name '" + std::string(name) +
                    "' is empty or has a Unicode space or '+'");
  }
  auto raw = base64_decode(b64);
  if (!raw || raw->size() < 5) {
    return rejected(where + " (key " + std::string(name) +
                    "): the signature must be standard padded base64 of a 4-byte key id and "
                    "at least one signature byte");
  }
  NoteSignature sig;
  sig.name = std::string(name);
  std::memcpy(sig.id.data(), raw->data(), sig.id.size());
  sig.signature.assign(raw->begin() + 4, raw->end());
  return sig;
}

Status check_note_text(std::string_view text) {
  if (text.empty() || text.back() != '\n') {
    return rejected("note text must be non-empty and end in a newline");
  }
  return check_note_chars(text, "note text");
}

}  // namespace

bool is_valid_note_key_name(std::string_view name) {
  if (name.empty() || !is_valid_utf8(name)) return false;
  for (unsigned char c : name) {
    if (c == '+' || c == ' ' || (c >= '\t' && c <= '\r')) return false;
  }
  return !has_unicode_space(name);
}

std::string note_signature_line(const NoteSignature& signature) {
  Bytes raw(signature.id.begin(), signature.id.end());
  raw.insert(raw.end(), signature.signature.begin(), signature.signature.end());
  return std::string(kSignaturePrefix) + signature.name + " " + base64_encode(raw) + "\n";
}

NoteSignature sign_note_text(std::string_view text, const SecretKey& key) {
  Signature64 sig = key.sign(as_bytes(text));
  return NoteSignature{key.name(), key.id(), Bytes(sig.begin(), sig.end())};
}

Result<std::string> format_note(const Note& note) {
  EVL_RETURN_IF_ERROR(check_note_text(note.text));
  if (note.signatures.empty() || note.signatures.size() > kMaxNoteSignatures) {
    return rejected("a signed note carries 1 to " + std::to_string(kMaxNoteSignatures) +
                    " signatures, not " + std::to_string(note.signatures.size()));
  }
  std::string out = note.text + "\n";
  for (const NoteSignature& sig : note.signatures) {
    if (!is_valid_note_key_name(sig.name) || sig.signature.empty()) {
      return rejected("note signature by '" + sig.name +
                      "': the name must be non-empty without spaces or '+', and the signature "
                      "non-empty");
    }
    out += note_signature_line(sig);
  }
  EVL_RETURN_IF_ERROR(check_note_chars(out, "signed note"));  // names: no control characters
  return out;
}

Result<std::string> sign_note(std::string_view text, std::span<const SecretKey* const> keys) {
  EVL_RETURN_IF_ERROR(check_note_text(text));
  Note note{std::string(text), {}};
  for (const SecretKey* key : keys) note.signatures.push_back(sign_note_text(text, *key));
  return format_note(note);
}

Result<std::string> sign_note(std::string_view text, const SecretKey& key) {
  const SecretKey* keys[] = {&key};
  return sign_note(text, keys);
}

Result<Note> parse_note(std::string_view message) {
  EVL_RETURN_IF_ERROR(check_note_chars(message, "signed note"));
  size_t split = message.rfind("\n\n");
  if (split == std::string_view::npos) {
    return rejected("signed note has no blank line between its text and its signature lines");
  }
  std::string_view lines = message.substr(split + 2);
  if (lines.empty() || lines.back() != '\n') {
    return rejected("signed note must end with signature lines, each ending in a newline");
  }
  size_t count = static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n'));
  if (count > kMaxNoteSignatures) {
    return rejected("signed note has " + std::to_string(count) + " signature lines; at most " +
                    std::to_string(kMaxNoteSignatures) + " are accepted");
  }
  Note note{std::string(message.substr(0, split + 1)), {}};
  for (size_t number = 1; !lines.empty(); ++number) {
    size_t end = lines.find('\n');
    auto sig = parse_signature_line(lines.substr(0, end), number);
    if (!sig) return sig.error();
    note.signatures.push_back(std::move(*sig));
    lines.remove_prefix(end + 1);
  }
  return note;
}

Result<VerifiedNote> open_note(std::string_view message, std::span<const VerifierKey> known) {
  auto note = parse_note(message);
  if (!note) return note.error();
  VerifiedNote out{std::move(note->text), {}, {}};
  std::vector<const VerifierKey*> seen;
  for (NoteSignature& sig : note->signatures) {
    const VerifierKey* key = nullptr;
    for (const VerifierKey& k : known) {
      if (k.name != sig.name || k.id != sig.id) continue;
      if (key != nullptr && !(*key == k)) {
        return rejected("signed note: two known keys are named " + key_label(sig.name, sig.id) +
                        "; remove the wrong one from the trusted keys");
      }
      key = &k;
    }
    if (key == nullptr) {
      if (std::find(out.unverified.begin(), out.unverified.end(), sig) == out.unverified.end()) {
        out.unverified.push_back(std::move(sig));
      }
      continue;
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;  // as Go: first only
    seen.push_back(key);
    if (!key->verify(as_bytes(out.text), sig.signature)) {
      return rejected("signed note: the signature by known key " + key_label(sig.name, sig.id) +
                      " does not verify; the note was altered or not signed by that key");
    }
    out.verified.push_back(std::move(sig));
  }
  if (out.verified.empty()) {
    std::string found;
    for (const NoteSignature& sig : out.unverified) {
      found += (found.empty() ? "" : ", ") + key_label(sig.name, sig.id);
    }
    return rejected("signed note has no signature by a known key (signed by: " + found +
                    "); add the signer's verifier key to the trusted keys if it is trusted");
  }
  return out;
}

}  // namespace evl
