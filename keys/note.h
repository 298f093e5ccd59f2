// keys/note.h — C2SP signed notes (c2sp.org/signed-note), byte-compatible with Go's
// golang.org/x/mod/sumdb/note.
//
//   <text, one or more lines, each ending in "\n">
//   <blank line>
//   — <key name> <base64(4-byte key id ‖ signature)>\n      (one line per signature)
//
// The text includes its final newline but not the blank line; the last blank line of a note
// separates the text from the signatures. A note is valid UTF-8 with no ASCII control
// character other than "\n". Signatures here are Ed25519 (type 0x01) over the text; other
// signature types (cosignatures, keys/checkpoint.h) ride along as unverified signatures.
//
// One rule differs from Go: base64 is decoded strictly (events/bytes.h), so a signature
// encoded with non-zero trailing bits, which no encoder produces, makes the note malformed.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/bytes.h"
#include "events/status.h"
#include "keys/key.h"

namespace evl {

// Security limit: a note with more signature lines than this is malformed, so that a hostile
// note cannot make a verifier parse or check without end. Go's note.Open uses the same cap;
// the spec requires accepting at least 16.
inline constexpr size_t kMaxNoteSignatures = 100;
// Security limit for a note read from a file (a saved checkpoint, a tile layout's checkpoint):
// its few text lines and up to kMaxNoteSignatures signature lines of about 150 bytes (a name,
// base64 of a key id and a cosignature) fit with room to spare.
inline constexpr size_t kMaxNoteFileBytes = size_t{32} << 10;

struct NoteSignature {
  std::string name;
  KeyId id{};
  Bytes signature;  // the bytes after the key id: 64 for Ed25519, 72 for a cosignature
  friend bool operator==(const NoteSignature&, const NoteSignature&) = default;
};

struct Note {
  std::string text;  // ends in "\n"; excludes the blank separator line
  std::vector<NoteSignature> signatures;
  friend bool operator==(const Note&, const Note&) = default;
};

// A note opened against known keys. `verified` holds the signatures of known keys, each
// checked, in note order; `unverified` the signatures of keys not in the known set (other
// logs, witnesses' cosignatures), unchecked, with identical repeated lines dropped.
struct VerifiedNote {
  std::string text;
  std::vector<NoteSignature> verified;
  std::vector<NoteSignature> unverified;
};

// Go's isValidName for names in signature lines: non-empty, valid UTF-8, no Unicode space
// (unicode.IsSpace) and no '+'. check_key_name (keys/key.h) adds: no control character.
bool is_valid_note_key_name(std::string_view name);

// The signature line "— <name> <base64(id ‖ signature)>\n".
std::string note_signature_line(const NoteSignature& signature);

// Ed25519-signs `text` with `key`: the signature a note carries for it.
NoteSignature sign_note_text(std::string_view text, const SecretKey& key);

// The text, the blank line, then one line per signature in order. kRejected when the text
// is not note text (empty, no final "\n", invalid UTF-8, a control character), a name is
// invalid, or there are no signatures or more than kMaxNoteSignatures.
Result<std::string> format_note(const Note& note);

// Signs `text` with each key in order (Go's note.Sign of a fresh note): same rules as
// format_note. Ed25519 is deterministic, so the same text and keys give the same bytes.
Result<std::string> sign_note(std::string_view text, std::span<const SecretKey* const> keys);
Result<std::string> sign_note(std::string_view text, const SecretKey& key);

// Parses a signed note without checking any signature: kRejected (naming the rule) when it is
// not UTF-8, holds a control character other than "\n", has no blank line followed by
// signature lines, a line is not "— <valid name> <base64 of at least 5 bytes>", or there are
// more than kMaxNoteSignatures lines. Every line is kept, in order, repeats included.
Result<Note> parse_note(std::string_view message);

// Parses `message` and checks it as Go's note.Open does: a signature whose name and key id
// match a known key must verify, or the note is kRejected naming that key (a later signature by
// the same key is ignored unchecked, as in Go); signatures of unknown keys are kept unverified;
// kRejected when no known key's signature is present. Two known keys with the same name and
// id are kRejected as ambiguous when a signature names them.
Result<VerifiedNote> open_note(std::string_view message, std::span<const VerifierKey> known);

}  // namespace evl
