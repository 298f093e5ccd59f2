// keys/tlog_policy.h — C2SP tlog-policy files (c2sp.org/tlog-policy): which logs a verifier
// accepts, which witnesses it knows, and the quorum of cosignatures a checkpoint needs.
//
//   log <vkey> [<url>]                     a log; its key's name is its origin
//   witness <name> <vkey> [<url>]          a witness and its cosigner key
//   group <name> <k|any|all> <member>...   at least k of its members witnessed (1 <= k <= n)
//   quorum <name|none>                     exactly one: the group or witness that must witness
//   # ...                                  comments; empty lines; space and tab separate items
//
// Parsing is strict, as the spec says: the only bytes are tab, newline, 0x20-0x7E and
// 0x80-0xFF (opaque: names are compared byte for byte); every line ends in a newline;
// witnesses and groups share one namespace with the predefined `none`, which is no member; a
// group or the quorum names only witnesses and groups defined on lines before it; a member
// appears at most once in a group; no two logs and no two witnesses wrap the same public key;
// exactly one quorum line. Keys: logs are Ed25519 note keys (type 0x01), witnesses Ed25519
// cosigner keys (type 0x04, c2sp.org/tlog-cosignature); other types (ML-DSA-44's 0x06, ECDSA)
// are refused as unsupported, never ignored. kRejected names the line and the rule.
//
// Security limits: at most kMaxPolicyBytes of text and kMaxPolicyEntries logs, witnesses and
// groups each (the spec asks for at least 32), so parsing and evaluation are bounded by the
// file's size.
//
// Thread safety: a TlogPolicy is an immutable value once parsed.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"

namespace evl {

inline constexpr size_t kMaxPolicyBytes = 1 << 20;
inline constexpr size_t kMaxPolicyEntries = 1024;
inline constexpr std::string_view kQuorumNone = "none";

struct PolicyLog {
  VerifierKey key;
  std::string url;  // empty when the line has none
};

struct PolicyWitness {
  std::string name;  // the policy's name for it (not its key's name)
  CosignerKey key;
  std::string url;
};

struct PolicyGroup {
  std::string name;
  size_t threshold = 1;  // at least this many members must have witnessed
  std::vector<std::string> members;
};

// How a checkpoint note fares against a policy.
struct QuorumReport {
  Checkpoint checkpoint;                 // its body, opened under a listed log's key
  VerifierKey log_key;                   // that key
  std::vector<Cosignature> cosigned;     // witnesses (policy names) whose cosignature verified
  std::vector<std::string> missing;      // witnesses with no cosignature line in the note
  std::vector<std::string> invalid;      // witnesses whose cosignature line does not verify
  bool satisfied = false;                // the quorum witnessed it and no line was invalid
};

class TlogPolicy {
 public:
  static Result<TlogPolicy> parse(std::string_view text);

  const std::vector<PolicyLog>& logs() const { return logs_; }
  const std::vector<PolicyWitness>& witnesses() const { return witnesses_; }
  const std::vector<PolicyGroup>& groups() const { return groups_; }
  const std::string& quorum() const { return quorum_; }  // kQuorumNone, a witness or a group

  // The logs' keys whose name is `origin` (a log may have several keys, when it rotates).
  std::vector<VerifierKey> log_keys(std::string_view origin) const;

  // Whether the quorum is met when exactly the witnesses named (policy names) have witnessed.
  bool satisfied_by(std::span<const std::string> witnessed) const;

  // Opens a signed checkpoint note: it must verify under one of the policy's logs (or, for a
  // policy that lists none, of `other_logs`) whose name is its origin, else kRejected. Then
  // each witness's first cosignature line (same key name and id) is checked. A line that does
  // not verify makes the note unsatisfied (signed-note: a known key's bad signature rejects
  // the note), whatever the quorum.
  Result<QuorumReport> evaluate(std::string_view note,
                                std::span<const VerifierKey> other_logs = {}) const;

  // evaluate(), then kRejected unless satisfied, naming the witnesses that are missing and
  // invalid: "checkpoint example.com/log at size 7: quorum X-and-Y not met: missing X2, X3;
  // invalid Y1".
  Result<Checkpoint> verify(std::string_view note,
                            std::span<const VerifierKey> other_logs = {}) const;

 private:
  std::vector<PolicyLog> logs_;
  std::vector<PolicyWitness> witnesses_;
  std::vector<PolicyGroup> groups_;
  std::string quorum_;
};

// Reads and parses a tlog-policy file (at most kMaxPolicyBytes): kIo when it cannot be read,
// parse()'s kRejected, prefixed with the path, otherwise.
Result<TlogPolicy> load_tlog_policy(const std::string& path);

// The log keys that `text_or_path` names: a verifier key, a file whose first line is one, or a
// tlog-policy file (the keys of all its log lines; its witnesses and quorum play no part).
// kRejected when it is none of these (naming why as a key and as a policy), kIo when the file
// cannot be read.
Result<std::vector<VerifierKey>> load_log_keys(const std::string& text_or_path);

}  // namespace evl
