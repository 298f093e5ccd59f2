// C2SP tlog-policy: every rule of the file format, and quorum evaluation of checkpoint notes.
#include "keys/tlog_policy.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

namespace evl {
namespace {

SecretKey key_of(std::string name, uint8_t seed) {
  auto key = SecretKey::from_seed(std::move(name), Bytes(32, seed));
  REQUIRE_OK(key);
  return std::move(key).value();
}

std::string cosigner_vkey(const SecretKey& key) {
  return CosignerKey::of(key.name(), key.public_key()).to_string();
}

// A log and six witnesses, as in the spec's example.
struct Cast {
  SecretKey log = key_of("example.com/log", 1);
  std::vector<SecretKey> x, y;
  Cast() {
    for (uint8_t i = 0; i < 3; ++i) {
      x.push_back(key_of("x.example/w" + std::to_string(i + 1), static_cast<uint8_t>(10 + i)));
      y.push_back(key_of("y.example/w" + std::to_string(i + 1), static_cast<uint8_t>(20 + i)));
    }
  }
  // The spec's example policy, with these keys.
  std::string policy() const {
    std::string p = "log " + log.verifier().to_string() + "\n\n";
    for (int i = 0; i < 3; ++i) {
      p += "witness X" + std::to_string(i + 1) + " " + cosigner_vkey(x[i]) + "\n";
    }
    p += "group X-witnesses 2 X1 X2 X3\n\n";
    for (int i = 0; i < 3; ++i) {
      p += "witness Y" + std::to_string(i + 1) + " " + cosigner_vkey(y[i]) + "\n";
    }
    return p + "group Y-witnesses any Y1 Y2 Y3\n\ngroup X-and-Y all X-witnesses Y-witnesses\n"
               "quorum X-and-Y\n";
  }
  Checkpoint checkpoint() const {
    return Checkpoint{log.name(), 5, sha256(as_bytes("root")), {}};
  }
  // The checkpoint signed by the log and cosigned by `cosigners`.
  std::string note(const std::vector<const SecretKey*>& cosigners) const {
    std::string out = sign_checkpoint(checkpoint(), log);
    for (const SecretKey* k : cosigners) {
      out += note_signature_line(cosign_checkpoint(checkpoint(), *k, 1700000000));
    }
    return out;
  }
};

std::string rejection(std::string_view text) {
  auto policy = TlogPolicy::parse(text);
  REQUIRE_FALSE(policy.has_value());
  CHECK(policy.error().code() == Code::kRejected);
  return policy.error().message();
}

TEST_CASE("the spec's example policy parses into its logs, witnesses, groups and quorum",
          "[keys][tlog-policy]") {
  Cast cast;
  auto policy = TlogPolicy::parse(cast.policy());
  REQUIRE_OK(policy);
  REQUIRE(policy->logs().size() == 1);
  CHECK(policy->logs()[0].key == cast.log.verifier());
  CHECK(policy->logs()[0].url.empty());
  REQUIRE(policy->witnesses().size() == 6);
  CHECK(policy->witnesses()[0].name == "X1");
  CHECK(policy->witnesses()[0].key.name == "x.example/w1");
  REQUIRE(policy->groups().size() == 3);
  CHECK(policy->groups()[0].threshold == 2);
  CHECK(policy->groups()[1].threshold == 1);  // any
  CHECK(policy->groups()[2].threshold == 2);  // all of two
  CHECK(policy->groups()[2].members == std::vector<std::string>{"X-witnesses", "Y-witnesses"});
  CHECK(policy->quorum() == "X-and-Y");
  CHECK(policy->log_keys("example.com/log").size() == 1);
  CHECK(policy->log_keys("example.com/other").empty());
}

TEST_CASE("policy lines take URLs, tabs, surrounding whitespace, comments and empty lines",
          "[keys][tlog-policy]") {
  Cast cast;
  std::string text = "# a comment\n   \t\n  # an indented comment\n\tlog \t" +
                     cast.log.verifier().to_string() + "  https://log.example/  \n" +
                     "witness W " + cosigner_vkey(cast.x[0]) + " https://w.example/\t\n" +
                     "quorum\tW   \n";
  auto policy = TlogPolicy::parse(text);
  REQUIRE_OK(policy);
  CHECK(policy->logs()[0].url == "https://log.example/");
  CHECK(policy->witnesses()[0].url == "https://w.example/");
  CHECK(policy->quorum() == "W");
}

TEST_CASE("a policy refuses control characters, CR and DEL, naming the line, and keeps "
          "high bytes opaque",
          "[keys][tlog-policy]") {
  Cast cast;
  const std::string quorum = "quorum none\n";
  CHECK_THAT(rejection("# ok\nquorum none\r\n"),
             Catch::Contains("line 2") && Catch::Contains("0x0d"));
  CHECK_THAT(rejection(std::string("quorum none\n#\0\n", 15)), Catch::Contains("line 2"));
  CHECK_THAT(rejection("quorum none\n# \x7f\n"), Catch::Contains("0x7f"));
  CHECK_THAT(rejection("quorum none\n\x01\n"), Catch::Contains("0x01"));
  // Names are octet strings: "K" and the Kelvin sign (U+212A) are two witnesses.
  std::string text = "witness K " + cosigner_vkey(cast.x[0]) + "\nwitness \xE2\x84\xAA " +
                     cosigner_vkey(cast.x[1]) +
                     "\n# caf\xC3\xA9 \xFF\ngroup g all K \xE2\x84\xAA\n" + quorum;
  auto policy = TlogPolicy::parse(text);
  REQUIRE_OK(policy);
  CHECK(policy->witnesses().size() == 2);
  CHECK(policy->groups()[0].threshold == 2);
}

TEST_CASE("every policy line ends in a newline, and a policy has exactly one quorum line",
          "[keys][tlog-policy]") {
  CHECK_THAT(rejection("quorum none"), Catch::Contains("line 1 does not end in a newline"));
  CHECK_THAT(rejection(""), Catch::Contains("no quorum line"));
  CHECK_THAT(rejection("# only a comment\n"), Catch::Contains("no quorum line"));
  CHECK_THAT(rejection("quorum none\nquorum none\n"),
             Catch::Contains("line 2") && Catch::Contains("exactly one quorum"));
  CHECK_THAT(rejection("quorum\n"), Catch::Contains("'quorum <name>'"));
  CHECK_THAT(rejection("quorum a b\n"), Catch::Contains("'quorum <name>'"));
  CHECK_THAT(rejection("quorum nobody\n"), Catch::Contains("not a witness or group defined"));
  CHECK_THAT(rejection("policy v1\nquorum none\n"), Catch::Contains("not a policy keyword"));
  CHECK_THAT(rejection("Log x\nquorum none\n"), Catch::Contains("not a policy keyword"));
  auto none = TlogPolicy::parse("quorum none\n");
  REQUIRE_OK(none);
  CHECK(none->quorum() == kQuorumNone);
  CHECK(none->logs().empty());
}

TEST_CASE("log lines take Ed25519 note keys once each and refuse cosigner and unsupported "
          "keys",
          "[keys][tlog-policy]") {
  Cast cast;
  const std::string vkey = cast.log.verifier().to_string();
  CHECK_THAT(rejection("log\nquorum none\n"), Catch::Contains("'log <vkey> [<url>]'"));
  CHECK_THAT(rejection("log " + vkey + " url extra\nquorum none\n"),
             Catch::Contains("'log <vkey> [<url>]'"));
  CHECK_THAT(rejection("log " + cosigner_vkey(cast.log) + "\nquorum none\n"),
             Catch::Contains("0x04"));
  // An ML-DSA-44 key: type 0x06 and some key material.
  std::string mldsa = "example.com/pq+01020304+" + base64_encode(Bytes{0x06, 1, 2, 3});
  CHECK_THAT(rejection("log " + mldsa + "\nquorum none\n"),
             Catch::Contains("0x06") && Catch::Contains("Ed25519 (0x01)"));
  CHECK_THAT(rejection("log not-a-key\nquorum none\n"), Catch::Contains("line 1"));
  std::string tampered = vkey;
  tampered[tampered.find('+') + 1] ^= 1;  // the key id no longer matches
  CHECK_THAT(rejection("log " + tampered + "\nquorum none\n"), Catch::Contains("key id"));
  // The same public key under another name is the same log: a duplicate.
  const std::string renamed =
      VerifierKey::of("example.com/renamed", cast.log.public_key()).to_string();
  CHECK_THAT(rejection("log " + vkey + "\nlog " + renamed + "\nquorum none\n"),
             Catch::Contains("line 2") && Catch::Contains("same public key"));
  // Two keys of one origin (a rotation) are two logs.
  SecretKey next = key_of(cast.log.name(), 2);
  auto rotated = TlogPolicy::parse("log " + vkey + "\nlog " + next.verifier().to_string() +
                                   "\nquorum none\n");
  REQUIRE_OK(rotated);
  CHECK(rotated->log_keys(cast.log.name()).size() == 2);
}

TEST_CASE("witness lines take cosigner keys once each under a new name", "[keys][tlog-policy]") {
  Cast cast;
  const std::string w = cosigner_vkey(cast.x[0]);
  CHECK_THAT(rejection("witness W\nquorum none\n"), Catch::Contains("'witness <name> <vkey>"));
  CHECK_THAT(rejection("witness W " + w + " url extra\nquorum none\n"),
             Catch::Contains("'witness <name> <vkey>"));
  CHECK_THAT(rejection("witness W " + cast.x[0].verifier().to_string() + "\nquorum none\n"),
             Catch::Contains("0x01") && Catch::Contains("not a cosignature type"));
  std::string mldsa = "w.example/pq+01020304+" + base64_encode(Bytes{0x06, 1, 2, 3});
  CHECK_THAT(rejection("witness W " + mldsa + "\nquorum none\n"), Catch::Contains("ML-DSA-44"));
  CHECK_THAT(rejection("witness none " + w + "\nquorum none\n"), Catch::Contains("predefined"));
  CHECK_THAT(rejection("witness W " + w + "\nwitness W " + cosigner_vkey(cast.x[1]) +
                       "\nquorum none\n"),
             Catch::Contains("line 2") && Catch::Contains("defined already"));
  const std::string same_key =
      CosignerKey::of("other.example/w", cast.x[0].public_key()).to_string();
  CHECK_THAT(rejection("witness A " + w + "\nwitness B " + same_key + "\nquorum none\n"),
             Catch::Contains("same public key as witness A"));
}

TEST_CASE("group lines name earlier witnesses and groups once each, with 1 <= k <= n",
          "[keys][tlog-policy]") {
  Cast cast;
  const std::string ws = "witness A " + cosigner_vkey(cast.x[0]) + "\nwitness B " +
                         cosigner_vkey(cast.x[1]) + "\n";
  auto group = [&](const std::string& line) { return ws + line + "\nquorum none\n"; };
  CHECK_THAT(rejection(group("group g any")), Catch::Contains("at least one member"));
  CHECK_THAT(rejection(group("group g any C")),
             Catch::Contains("line 3") && Catch::Contains("'C' is not a witness or group"));
  CHECK_THAT(rejection(group("group g any none")), Catch::Contains("'none' is no member"));
  CHECK_THAT(rejection(group("group g all A A")), Catch::Contains("listed twice"));
  CHECK_THAT(rejection(group("group g any g")), Catch::Contains("'g' is not a witness or group"));
  CHECK_THAT(rejection(group("group A any B")), Catch::Contains("defined already"));
  CHECK_THAT(rejection(group("group none any B")), Catch::Contains("predefined"));
  for (const char* k : {"0", "3", "-1", "+1", "1x", "x", "", "18446744073709551617", "ALL"}) {
    INFO(k);
    if (*k == '\0') continue;  // an empty item is no item: covered by "at least one member"
    CHECK_THAT(rejection(group(std::string("group g ") + k + " A B")),
               Catch::Contains("threshold"));
  }
  // A member defined after the group is not defined "on preceding lines".
  CHECK_THAT(rejection("witness A " + cosigner_vkey(cast.x[0]) + "\ngroup g any A B\nwitness B " +
                       cosigner_vkey(cast.x[1]) + "\nquorum none\n"),
             Catch::Contains("line 2") && Catch::Contains("'B'"));
  // The quorum too names only what precedes it; witnesses and logs may follow it.
  CHECK_THAT(rejection("quorum A\nwitness A " + cosigner_vkey(cast.x[0]) + "\n"),
             Catch::Contains("line 1"));
  auto later = TlogPolicy::parse(ws + "quorum A\nlog " + cast.log.verifier().to_string() + "\n");
  REQUIRE_OK(later);
  auto decimal = TlogPolicy::parse(group("group g 02 A B\ngroup h all g"));
  REQUIRE_OK(decimal);
  CHECK(decimal->groups()[0].threshold == 2);
  CHECK(decimal->groups()[1].threshold == 1);
}

TEST_CASE("a policy supports the spec's 32 logs, witnesses and groups and refuses beyond its "
          "bounds",
          "[keys][tlog-policy]") {
  std::string text;
  for (uint8_t i = 0; i < 32; ++i) {
    SecretKey log = key_of("log" + std::to_string(i) + ".example", i);
    text += "log " + log.verifier().to_string() + "\n";
    SecretKey w = key_of("w" + std::to_string(i) + ".example", static_cast<uint8_t>(100 + i));
    text += "witness w" + std::to_string(i) + " " + cosigner_vkey(w) + "\n";
    text += "group g" + std::to_string(i) + " any w" + std::to_string(i) +
            (i > 0 ? " g" + std::to_string(i - 1) : std::string()) + "\n";
  }
  auto policy = TlogPolicy::parse(text + "quorum g31\n");
  REQUIRE_OK(policy);
  CHECK(policy->logs().size() == 32);
  CHECK(policy->satisfied_by(std::vector<std::string>{"w0"}));  // through 31 nested groups
  CHECK_FALSE(policy->satisfied_by(std::vector<std::string>{}));

  std::string huge(kMaxPolicyBytes + 1, '#');
  huge.back() = '\n';
  CHECK_THAT(rejection(huge), Catch::Contains("at most"));
  std::string many;
  SecretKey w = key_of("w.example", 9);
  const std::string wkey = cosigner_vkey(w);
  many += "witness w " + wkey + "\n";
  for (size_t i = 0; i <= kMaxPolicyEntries; ++i) {
    many += "group g" + std::to_string(i) + " any w\n";
  }
  CHECK_THAT(rejection(many + "quorum none\n"), Catch::Contains("more than 1024 group"));
}

TEST_CASE("a checkpoint meets the quorum only with enough valid cosignatures, and the "
          "evaluation names the missing and invalid witnesses",
          "[keys][tlog-policy]") {
  Cast cast;
  auto policy = TlogPolicy::parse(cast.policy());
  REQUIRE_OK(policy);
  // Two of X and one of Y: met.
  auto met = policy->evaluate(cast.note({&cast.x[0], &cast.x[2], &cast.y[1]}));
  REQUIRE_OK(met);
  CHECK(met->satisfied);
  CHECK(met->checkpoint == cast.checkpoint());
  CHECK(met->cosigned.size() == 3);
  CHECK(met->cosigned[0].name == "X1");
  CHECK(met->cosigned[0].time == 1700000000);
  CHECK(met->missing == std::vector<std::string>{"X2", "Y1", "Y3"});
  REQUIRE_OK(policy->verify(cast.note({&cast.x[0], &cast.x[2], &cast.y[1]})));

  // One of X: the X group is short.
  auto short_of_x = policy->verify(cast.note({&cast.x[0], &cast.y[0], &cast.y[1]}));
  REQUIRE_FALSE(short_of_x.has_value());
  CHECK_THAT(short_of_x.error().message(),
             Catch::Contains("quorum X-and-Y not met") && Catch::Contains("missing X2, X3, Y3"));

  // A tampered cosignature is invalid, and rejects the note even where the quorum is met.
  NoteSignature bad = cosign_checkpoint(cast.checkpoint(), cast.y[0], 1700000000);
  bad.signature[7] ^= 1;  // the time's last byte: the signature no longer covers it
  const std::string note = cast.note({&cast.x[0], &cast.x[1]}) + note_signature_line(bad);
  const std::string extra =
      note + note_signature_line(cosign_checkpoint(cast.checkpoint(), cast.y[1], 1700000000));
  auto invalid = policy->evaluate(extra);
  REQUIRE_OK(invalid);
  CHECK(invalid->invalid == std::vector<std::string>{"Y1"});
  CHECK_FALSE(invalid->satisfied);
  auto refused = policy->verify(extra);
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message(), Catch::Contains("the cosignature of Y1 does not verify"));
  auto refused_short = policy->verify(note);
  REQUIRE_FALSE(refused_short.has_value());
  CHECK_THAT(refused_short.error().message(),
             Catch::Contains("not met") && Catch::Contains("invalid Y1"));
}

TEST_CASE("evaluation needs the signature of a listed log named for the origin, and ignores "
          "unknown cosigners",
          "[keys][tlog-policy]") {
  Cast cast;
  auto policy = TlogPolicy::parse(cast.policy());
  REQUIRE_OK(policy);
  // Unknown witnesses' lines (another key under a known name, too) are ignored.
  SecretKey stranger = key_of("x.example/w2", 99);
  auto with_stranger = policy->evaluate(cast.note({&cast.x[0], &stranger, &cast.y[0]}));
  REQUIRE_OK(with_stranger);
  CHECK(with_stranger->invalid.empty());
  CHECK_FALSE(with_stranger->satisfied);
  // Another log's checkpoint.
  SecretKey other = key_of("example.com/other", 3);
  std::string foreign = sign_checkpoint(Checkpoint{other.name(), 5, Digest{}, {}}, other);
  auto refused = policy->evaluate(foreign);
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message(), Catch::Contains("no signature"));
  // A listed log signing a checkpoint of another origin.
  auto misnamed =
      sign_note("example.com/elsewhere\n5\n" + base64_encode(Digest{}) + "\n", cast.log);
  REQUIRE_OK(misnamed);
  auto wrong_origin = policy->evaluate(*misnamed);
  REQUIRE_FALSE(wrong_origin.has_value());
  CHECK_THAT(wrong_origin.error().message(), Catch::Contains("a log's key name is its origin"));
  // A policy without logs takes the caller's.
  auto bare = TlogPolicy::parse("witness A " + cosigner_vkey(cast.x[0]) + "\nquorum A\n");
  REQUIRE_OK(bare);
  CHECK_FALSE(bare->evaluate(cast.note({&cast.x[0]})).has_value());
  const VerifierKey logs[] = {cast.log.verifier()};
  auto given = bare->verify(cast.note({&cast.x[0]}), logs);
  REQUIRE_OK(given);
  auto none = TlogPolicy::parse("log " + cast.log.verifier().to_string() + "\nquorum none\n");
  REQUIRE_OK(none);
  REQUIRE_OK(none->verify(cast.note({})));
}

TEST_CASE("log keys load from a verifier key, a key file or a policy file's log lines",
          "[keys][tlog-policy]") {
  Cast cast;
  test::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() / name, std::ios::binary) << text;
    return (dir.path() / name).string();
  };
  const std::string vkey = cast.log.verifier().to_string();
  auto direct = load_log_keys(vkey);
  REQUIRE_OK(direct);
  CHECK(direct->size() == 1);
  auto file = load_log_keys(write("log.vkey", vkey + "\n"));
  REQUIRE_OK(file);
  CHECK((*file)[0] == cast.log.verifier());
  SecretKey next = key_of("example.com/next", 4);
  auto policy =
      load_log_keys(write("policy", cast.policy() + "log " + next.verifier().to_string() + "\n"));
  REQUIRE_OK(policy);
  CHECK(policy->size() == 2);
  auto empty = load_log_keys(write("empty-policy", "quorum none\n"));
  REQUIRE_FALSE(empty.has_value());
  CHECK_THAT(empty.error().message(), Catch::Contains("lists no log"));
  auto garbage = load_log_keys(write("garbage", "quorum none\nwitness\n"));
  REQUIRE_FALSE(garbage.has_value());
  CHECK_THAT(garbage.error().message(), Catch::Contains("neither a verifier key file"));
  CHECK_FALSE(load_log_keys("not a key").has_value());
}

}  // namespace
}  // namespace evl
