#include "keys/note.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/note_examples.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

using test::kC2spVkey;
using test::kGoSkey;
using test::kGoVkey;
using test::kC2spNote;

constexpr std::string_view kGoText =
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n";
constexpr std::string_view kGoNote =
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
    "\n"
    "— PeterNeumann "
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

VerifierKey vkey(std::string_view text) {
  auto key = VerifierKey::parse(text);
  REQUIRE_OK(key);
  return *key;
}

SecretKey test_key(const std::string& name, uint8_t fill) {
  Bytes seed(32, fill);
  auto key = SecretKey::from_seed(name, seed);
  REQUIRE_OK(key);
  return std::move(key).value();
}

TEST_CASE("the C2SP example note opens under its key", "[keys][note]") {
  VerifierKey keys[] = {vkey(kC2spVkey)};
  auto opened = open_note(kC2spNote, keys);
  REQUIRE_OK(opened);
  CHECK(opened->text == "This is an example message.\n");
  REQUIRE(opened->verified.size() == 1);
  CHECK(opened->verified[0].name == "example.com/foo");
  CHECK(opened->verified[0].id == KeyId{0x53, 0x0d, 0x90, 0x3a});
  CHECK(opened->verified[0].signature.size() == 64);
  CHECK(opened->unverified.empty());
}

TEST_CASE("signing Go's example text with Go's example key reproduces its note", "[keys][note]") {
  auto key = SecretKey::parse(kGoSkey);
  REQUIRE_OK(key);
  CHECK(key->verifier().to_string() == kGoVkey);
  auto note = sign_note(kGoText, *key);
  REQUIRE_OK(note);
  CHECK(*note == kGoNote);

  VerifierKey keys[] = {vkey(kGoVkey)};
  auto opened = open_note(kGoNote, keys);
  REQUIRE_OK(opened);
  CHECK(opened->text == kGoText);
  CHECK(hex_encode(opened->verified.at(0).id) == "c74f20a3");
}

TEST_CASE("the shared note vectors equal the inline known answers", "[keys][note]") {
  auto dir = test::shared_dir();
  if (!dir) {
    WARN("../shared is absent: the vectors/note files are not checked (inline copies were)");
    return;
  }
  auto notes = *dir / "vectors" / "note";
  CHECK(test::read_file(notes / "c2sp-example.note") == kC2spNote);
  CHECK(test::read_file(notes / "c2sp-example.vkey") == std::string(kC2spVkey) + "\n");
  CHECK(test::read_file(notes / "go-note-example.note") == kGoNote);
  std::string txt = test::read_file(notes / "go-note-example.txt");
  CHECK(txt.find("skey " + std::string(kGoSkey) + "\n") != std::string::npos);
  CHECK(txt.find("vkey " + std::string(kGoVkey) + "\n") != std::string::npos);
}

TEST_CASE("a note signed by several keys round-trips through parse and format", "[keys][note]") {
  SecretKey a = test_key("a.example/log", 1);
  SecretKey b = test_key("b.example/witness", 2);
  const SecretKey* signers[] = {&a, &b};
  const std::string text = "first line\n\nafter a blank line\n";
  auto msg = sign_note(text, signers);
  REQUIRE_OK(msg);
  auto note = parse_note(*msg);
  REQUIRE_OK(note);
  CHECK(note->text == text);  // the last blank line separates: the text keeps its own
  REQUIRE(note->signatures.size() == 2);
  CHECK(note->signatures[0] == sign_note_text(text, a));
  CHECK(note->signatures[1].name == "b.example/witness");
  CHECK(format_note(*note).value() == *msg);

  VerifierKey both[] = {a.verifier(), b.verifier()};
  auto opened = open_note(*msg, both);
  REQUIRE_OK(opened);
  CHECK(opened->verified.size() == 2);
  CHECK(opened->unverified.empty());
}

TEST_CASE("open_note keeps an unknown extra signature as unverified", "[keys][note]") {
  SecretKey log = test_key("log.example", 3);
  SecretKey other = test_key("other.example", 4);
  const SecretKey* signers[] = {&other, &log};
  auto msg = sign_note("hello\n", signers);
  REQUIRE_OK(msg);
  VerifierKey known[] = {log.verifier()};
  auto opened = open_note(*msg, known);
  REQUIRE_OK(opened);
  REQUIRE(opened->verified.size() == 1);
  CHECK(opened->verified[0].name == "log.example");
  REQUIRE(opened->unverified.size() == 1);
  CHECK(opened->unverified[0].name == "other.example");
  CHECK(opened->unverified[0].id == other.id());

  // An unknown key that shares the known key's name (but not its id) is ignored, not checked.
  SecretKey impostor = test_key("log.example", 5);
  Note note = parse_note(*msg).value();
  note.signatures.push_back(sign_note_text("something else\n", impostor));
  auto opened2 = open_note(format_note(note).value(), known);
  REQUIRE_OK(opened2);
  CHECK(opened2->unverified.size() == 2);
}

TEST_CASE("open_note rejects a note whose known key's signature fails, naming the key",
          "[keys][note]") {
  VerifierKey keys[] = {vkey(kC2spVkey)};
  std::string altered(kC2spNote);
  altered.replace(0, 4, "That");
  auto opened = open_note(altered, keys);
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code() == Code::kRejected);
  CHECK_THAT(opened.error().message(), Catch::Contains("example.com/foo+530d903a") &&
                                           Catch::Contains("does not verify"));

  // A bad signature by a known key fails the note even when another known key signed it well.
  SecretKey good = test_key("good.example", 6);
  Note note = parse_note(sign_note("text\n", good).value()).value();
  note.signatures.insert(note.signatures.begin(), parse_note(kC2spNote)->signatures[0]);
  VerifierKey both[] = {vkey(kC2spVkey), good.verifier()};
  auto opened2 = open_note(format_note(note).value(), both);
  REQUIRE_FALSE(opened2.has_value());
  CHECK_THAT(opened2.error().message(), Catch::Contains("example.com/foo+530d903a"));
}

TEST_CASE("open_note rejects a note without a signature by a known key", "[keys][note]") {
  VerifierKey keys[] = {vkey(kGoVkey)};
  auto opened = open_note(kC2spNote, keys);
  REQUIRE_FALSE(opened.has_value());
  CHECK_THAT(opened.error().message(),
             Catch::Contains("no signature by a known key") &&
                 Catch::Contains("example.com/foo+530d903a"));
  CHECK_FALSE(open_note(kC2spNote, {}).has_value());
}

TEST_CASE("repeated lines: identical unknown lines are kept once, a known key is checked once",
          "[keys][note]") {
  SecretKey known = test_key("known.example", 7);
  SecretKey unknown = test_key("unknown.example", 8);
  Note note{"text\n", {sign_note_text("text\n", known), sign_note_text("text\n", unknown),
                       sign_note_text("text\n", unknown)}};
  // Go's note.Open checks only a known key's first signature; a later one is dropped unchecked.
  NoteSignature stale = sign_note_text("other text\n", known);
  note.signatures.push_back(stale);
  auto msg = format_note(note);
  REQUIRE_OK(msg);
  CHECK(parse_note(*msg)->signatures.size() == 4);
  VerifierKey keys[] = {known.verifier()};
  auto opened = open_note(*msg, keys);
  REQUIRE_OK(opened);
  CHECK(opened->verified.size() == 1);
  CHECK(opened->unverified.size() == 1);
}

TEST_CASE("open_note rejects two different known keys with the same name and id",
          "[keys][note]") {
  VerifierKey real = vkey(kC2spVkey);
  VerifierKey twin = real;
  twin.public_key[0] ^= 1;  // same name and id, another key: a broken trust configuration
  VerifierKey keys[] = {real, twin};
  auto opened = open_note(kC2spNote, keys);
  REQUIRE_FALSE(opened.has_value());
  CHECK_THAT(opened.error().message(), Catch::Contains("two known keys"));
  VerifierKey same[] = {real, real};
  CHECK(open_note(kC2spNote, same).has_value());
}

TEST_CASE("a note with more than 100 signature lines is rejected", "[keys][note]") {
  SecretKey log = test_key("log.example", 9);
  NoteSignature known = sign_note_text("t\n", log);
  Note note{"t\n", {known}};
  for (int i = 0; note.signatures.size() < kMaxNoteSignatures; ++i) {
    note.signatures.push_back(NoteSignature{"w" + std::to_string(i) + ".example",
                                            {1, 2, 3, 4}, Bytes(64, 7)});
  }
  VerifierKey keys[] = {log.verifier()};
  std::string msg = format_note(note).value();
  auto ok = open_note(msg, keys);
  REQUIRE_OK(ok);
  CHECK(ok->unverified.size() == kMaxNoteSignatures - 1);

  std::string too_many = msg + note_signature_line(NoteSignature{"extra", {9, 9, 9, 9}, {1}});
  auto rejected_note = parse_note(too_many);
  REQUIRE_FALSE(rejected_note.has_value());
  CHECK_THAT(rejected_note.error().message(), Catch::Contains("101 signature lines"));
  CHECK_FALSE(open_note(too_many, keys).has_value());
  note.signatures.push_back(note.signatures.back());
  CHECK_FALSE(format_note(note).has_value());
}

TEST_CASE("malformed notes are rejected with the rule they break", "[keys][note]") {
  const std::string line = std::string(kC2spNote.substr(kC2spNote.find("— ")));
  const std::string b64 = line.substr(line.rfind(' ') + 1, line.size() - line.rfind(' ') - 2);
  struct Case {
    std::string what;
    std::string message;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"no blank line", "text\n" + line, "no blank line"},
      {"no final newline", std::string(kC2spNote.substr(0, kC2spNote.size() - 1)), "newline"},
      {"nothing after the blank line", "text\n\n", "newline"},
      {"a blank line after the signatures", std::string(kC2spNote) + "\n", "newline"},
      {"a hyphen for the em dash", "text\n\n- example.com/foo " + b64 + "\n", "em dash"},
      {"an en dash for the em dash", "text\n\n\xE2\x80\x93 example.com/foo " + b64 + "\n",
       "em dash"},
      {"no space after the dash", "text\n\n—example.com/foo " + b64 + "\n", "em dash"},
      {"no signature", "text\n\n— example.com/foo\n", "base64"},
      {"an empty name", "text\n\n—  " + b64 + "\n", "key name"},
      {"a plus in the name", "text\n\n— example.com+foo " + b64 + "\n", "key name"},
      {"a no-break space in the name", "text\n\n— example\xC2\xA0" "foo " + b64 + "\n",
       "key name"},
      {"two spaces before the signature", "text\n\n— example.com/foo  " + b64 + "\n", "base64"},
      {"unpadded base64", "text\n\n— example.com/foo " + b64.substr(0, b64.size() - 1) + "\n",
       "base64"},
      {"base64 with non-zero trailing bits",
       "text\n\n— example.com/foo " + b64.substr(0, b64.size() - 2) + "N=\n", "base64"},
      {"only a key id", "text\n\n— example.com/foo AAAAAA==\n", "base64"},
      {"a carriage return", "text\r\n\n" + line, "control character 0x0d"},
      {"a tab in the text", "te\txt\n\n" + line, "control character 0x09"},
      {"a NUL byte", std::string("te\0xt\n\n", 7) + line, "control character 0x00"},
      {"invalid UTF-8", "te\xFFxt\n\n" + line, "UTF-8"},
      {"a UTF-16 surrogate", "te\xED\xA0\x80xt\n\n" + line, "UTF-8"},
      {"an overlong encoding", "te\xC0\xAFxt\n\n" + line, "UTF-8"},
  };
  VerifierKey keys[] = {vkey(kC2spVkey)};
  for (const Case& c : cases) {
    INFO(c.what);
    auto note = parse_note(c.message);
    REQUIRE_FALSE(note.has_value());
    CHECK(note.error().code() == Code::kRejected);
    CHECK_THAT(note.error().message(), Catch::Contains(c.expect));
    CHECK_FALSE(open_note(c.message, keys).has_value());
  }
}

TEST_CASE("a note may start with its blank line and hold non-ASCII text", "[keys][note]") {
  SecretKey key = test_key("naïve.example/ключ", 10);
  for (std::string text : {"\n", "Ognuno sta solo sul cuor della terra\n\ned è subito sera.\n"}) {
    auto msg = sign_note(text, key);
    REQUIRE_OK(msg);
    VerifierKey keys[] = {key.verifier()};
    auto opened = open_note(*msg, keys);
    REQUIRE_OK(opened);
    CHECK(opened->text == text);
  }
}

TEST_CASE("sign_note and format_note refuse what would not parse back", "[keys][note]") {
  SecretKey key = test_key("k.example", 11);
  CHECK_FALSE(sign_note("no final newline", key).has_value());
  CHECK_FALSE(sign_note("", key).has_value());
  CHECK_FALSE(sign_note("a\x01" "b\n", key).has_value());
  CHECK_FALSE(sign_note("\xFF\n", key).has_value());
  CHECK_FALSE(sign_note("text\n", std::span<const SecretKey* const>()).has_value());
  CHECK_FALSE(format_note(Note{"t\n", {NoteSignature{"bad name", {}, {1}}}}).has_value());
  // DEL is not below U+0020: Go accepts it in a signature line's name, and so do notes here.
  CHECK(format_note(Note{"t\n", {NoteSignature{"ctl\x7f", {}, {1}}}}).has_value());
  CHECK_FALSE(format_note(Note{"t\n", {NoteSignature{"ctl\x1f", {}, {1}}}}).has_value());
  CHECK_FALSE(format_note(Note{"t\n", {NoteSignature{"empty.sig", {}, {}}}}).has_value());
}

TEST_CASE("note key names follow Go's isValidName", "[keys][note]") {
  CHECK(is_valid_note_key_name("example.com/foo"));
  CHECK(is_valid_note_key_name("PeterNeumann"));
  CHECK(is_valid_note_key_name("日本.example"));
  CHECK(is_valid_note_key_name("del\x7f"));
  CHECK_FALSE(is_valid_note_key_name(""));
  CHECK_FALSE(is_valid_note_key_name("a+b"));
  CHECK_FALSE(is_valid_note_key_name("a b"));
  CHECK_FALSE(is_valid_note_key_name("a\tb"));
  CHECK_FALSE(is_valid_note_key_name("a\vb"));
  CHECK_FALSE(is_valid_note_key_name("a\xC2\x85" "b"));      // U+0085 NEXT LINE
  CHECK_FALSE(is_valid_note_key_name("a\xE1\x9A\x80" "b"));  // U+1680 OGHAM SPACE MARK
  CHECK_FALSE(is_valid_note_key_name("a\xE2\x80\x8A" "b"));  // U+200A HAIR SPACE
  CHECK_FALSE(is_valid_note_key_name("a\xE2\x80\xA8" "b"));  // U+2028 LINE SEPARATOR
  CHECK_FALSE(is_valid_note_key_name("a\xE3\x80\x80" "b"));  // U+3000 IDEOGRAPHIC SPACE
  CHECK(is_valid_note_key_name("a\xE2\x80\x8B" "b"));        // U+200B is not White_Space
  CHECK_FALSE(is_valid_note_key_name("a\xFF"));
}

}  // namespace
}  // namespace evl
