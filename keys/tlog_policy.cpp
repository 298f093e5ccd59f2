#include "keys/tlog_policy.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <cstdio>
#include <map>
#include <set>

#include "events/bytes.h"
#include "events/file_read.h"

namespace evl {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::vector<std::string_view> split_items(std::string_view line) {
  std::vector<std::string_view> items;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) items.push_back(line.substr(start, i - start));
  }
  return items;
}

// The signature type byte of a vkey "<name>+<id>+<base64(type ‖ key)>", or nullopt when the
// text is not shaped like one (the key parsers then say what is wrong).
std::optional<uint8_t> vkey_type(std::string_view text) {
  size_t p1 = text.find('+');
  size_t p2 = p1 == std::string_view::npos ? p1 : text.find('+', p1 + 1);
  if (p2 == std::string_view::npos) return std::nullopt;
  auto raw = base64_decode(text.substr(p2 + 1));
  if (!raw || raw->empty()) return std::nullopt;
  return (*raw)[0];
}

std::string type_hex(uint8_t type) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", type);
  return buf;
}

// What the policy's names stand for: witnesses and groups share one namespace.
struct Named {
  bool group = false;
  size_t index = 0;
};

// Fills the policy's lists line by line; they are the TlogPolicy's own members.
class Parser {
 public:
  Parser(std::vector<PolicyLog>& logs, std::vector<PolicyWitness>& witnesses,
         std::vector<PolicyGroup>& groups, std::string& quorum)
      : logs_(&logs), witnesses_(&witnesses), groups_(&groups), quorum_(&quorum) {}
  Status run(std::string_view text);

 private:
  Status line(std::vector<std::string_view> items);
  Status log_line(const std::vector<std::string_view>& items);
  Status witness_line(const std::vector<std::string_view>& items);
  Status group_line(const std::vector<std::string_view>& items);
  Status quorum_line(const std::vector<std::string_view>& items);
  Status new_name(std::string_view name, std::string_view what);
  Status room(size_t count, std::string_view what);

  std::vector<PolicyLog>* logs_;
  std::vector<PolicyWitness>* witnesses_;
  std::vector<PolicyGroup>* groups_;
  std::string* quorum_;
  bool has_quorum_ = false;
  size_t quorum_line_ = 0;
  std::map<std::string, Named, std::less<>> names_;
};

Status check_bytes(std::string_view text) {
  size_t number = 1;
  for (unsigned char c : text) {
    if (c == '\n') {
      ++number;
    } else if (c != '\t' && (c < 0x20 || c == 0x7f)) {
      return rejected("tlog policy line " + std::to_string(number) + ": byte " + type_hex(c) +
                      " is not allowed (only tab, newline, 0x20-0x7E and 0x80-0xFF; a file "
                      "with CRLF line ends needs plain LF)");
    }
  }
  return Status::ok();
}

Status Parser::run(std::string_view text) {
  if (text.size() > kMaxPolicyBytes) {
    return rejected("tlog policy is " + std::to_string(text.size()) + " bytes; at most " +
                    std::to_string(kMaxPolicyBytes) + " are read");
  }
  EVL_RETURN_IF_ERROR(check_bytes(text));
  size_t number = 0;
  for (std::string_view rest = text; !rest.empty();) {
    ++number;
    size_t end = rest.find('\n');
    if (end == std::string_view::npos) {
      return rejected("tlog policy line " + std::to_string(number) +
                      " does not end in a newline; every line of a policy file does");
    }
    Status s = line(split_items(rest.substr(0, end)));
    if (!s) return s.with_context("tlog policy line " + std::to_string(number));
    rest.remove_prefix(end + 1);
  }
  if (!has_quorum_) {
    return rejected("tlog policy has no quorum line; add 'quorum <name>' or 'quorum none'");
  }
  return Status::ok();
}

Status Parser::line(std::vector<std::string_view> items) {
  if (items.empty() || items[0].front() == '#') return Status::ok();
  if (items[0] == "log") return log_line(items);
  if (items[0] == "witness") return witness_line(items);
  if (items[0] == "group") return group_line(items);
  if (items[0] == "quorum") return quorum_line(items);
  std::string word(items[0].substr(0, 40));
  return rejected("'" + word + "' is not a policy keyword (log, witness, group, quorum; '#' "
                  "starts a comment)");
}

Status Parser::room(size_t count, std::string_view what) {
  if (count < kMaxPolicyEntries) return Status::ok();
  return rejected("more than " + std::to_string(kMaxPolicyEntries) + " " + std::string(what) +
                  " lines; evledger reads at most that many");
}

Status Parser::new_name(std::string_view name, std::string_view what) {
  if (name == kQuorumNone) {
    return rejected("'none' is predefined (quorum none); name the " + std::string(what) +
                    " otherwise");
  }
  if (names_.count(name) != 0) {
    return rejected("the name '" + std::string(name) + "' is defined already (witnesses and "
                    "groups share one namespace)");
  }
  return Status::ok();
}

Status Parser::log_line(const std::vector<std::string_view>& items) {
  if (items.size() < 2 || items.size() > 3) {
    return rejected("a log line is 'log <vkey> [<url>]'");
  }
  EVL_RETURN_IF_ERROR(room(logs_->size(), "log"));
  auto type = vkey_type(items[1]);
  if (type && *type == kCosignatureV1Algorithm) {
    return rejected("log key has signature type 0x04, a witness's cosignature key; a log "
                    "signs checkpoints with an Ed25519 note key (type 0x01)");
  }
  if (type && *type != kEd25519Algorithm) {
    return rejected("log key has signature type " + type_hex(*type) +
                    "; evledger verifies Ed25519 (0x01) checkpoint signatures only");
  }
  auto key = VerifierKey::parse(items[1]);
  if (!key) return key.error().with_context("log key");
  for (const PolicyLog& other : *logs_) {
    if (other.key.public_key == key->public_key) {
      return rejected("log key " + key->name + " wraps the same public key as log " +
                      other.key.name + "; a log is listed once");
    }
  }
  logs_->push_back({std::move(*key), items.size() == 3 ? std::string(items[2]) : ""});
  return Status::ok();
}

Status Parser::witness_line(const std::vector<std::string_view>& items) {
  if (items.size() < 3 || items.size() > 4) {
    return rejected("a witness line is 'witness <name> <vkey> [<url>]'");
  }
  EVL_RETURN_IF_ERROR(room(witnesses_->size(), "witness"));
  EVL_RETURN_IF_ERROR(new_name(items[1], "witness"));
  const std::string name(items[1]);
  auto type = vkey_type(items[2]);
  if (type && *type == 0x06) {
    return rejected("witness " + name + ": ML-DSA-44 cosigner keys (type 0x06) are not "
                    "supported; evledger verifies Ed25519 cosignatures (type 0x04)");
  }
  if (type && *type != kCosignatureV1Algorithm) {
    return rejected("witness " + name + ": key has signature type " + type_hex(*type) +
                    ", not a cosignature type; a witness key is an Ed25519 cosigner key "
                    "(0x04, evledger key new NAME --cosigner)");
  }
  auto key = CosignerKey::parse(items[2]);
  if (!key) return key.error().with_context("witness " + name);
  for (const PolicyWitness& other : *witnesses_) {
    if (other.key.public_key == key->public_key) {
      return rejected("witness " + name + " wraps the same public key as witness " +
                      other.name + "; each witness is listed once");
    }
  }
  names_[name] = Named{false, witnesses_->size()};
  witnesses_->push_back({name, std::move(*key), items.size() == 4 ? std::string(items[3]) : ""});
  return Status::ok();
}

Status Parser::group_line(const std::vector<std::string_view>& items) {
  if (items.size() < 4) {
    return rejected("a group line is 'group <name> <k|any|all> <member>...' with at least one "
                    "member");
  }
  EVL_RETURN_IF_ERROR(room(groups_->size(), "group"));
  EVL_RETURN_IF_ERROR(new_name(items[1], "group"));
  PolicyGroup group{std::string(items[1]), 0, {}};
  std::set<std::string_view> seen;
  for (size_t i = 3; i < items.size(); ++i) {
    const std::string member(items[i].substr(0, 200));
    if (items[i] == kQuorumNone) {
      return rejected("group " + group.name + ": 'none' is no member (it is only a quorum)");
    }
    if (names_.count(items[i]) == 0) {
      return rejected("group " + group.name + ": member '" + member + "' is not a witness or "
                      "group defined on an earlier line");
    }
    if (!seen.insert(items[i]).second) {
      return rejected("group " + group.name + ": member '" + member + "' is listed twice");
    }
    group.members.emplace_back(items[i]);
  }
  const size_t n = group.members.size();
  std::string_view k = items[2];
  if (k == "any") {
    group.threshold = 1;
  } else if (k == "all") {
    group.threshold = n;
  } else {
    size_t value = 0;
    auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), value);
    if (ec != std::errc() || end != k.data() + k.size() || value < 1 || value > n) {
      return rejected("group " + group.name + ": threshold '" + std::string(k.substr(0, 40)) +
                      "' must be any, all or a decimal k with 1 <= k <= " + std::to_string(n) +
                      " (its number of members)");
    }
    group.threshold = value;
  }
  names_[group.name] = Named{true, groups_->size()};
  groups_->push_back(std::move(group));
  return Status::ok();
}

Status Parser::quorum_line(const std::vector<std::string_view>& items) {
  if (items.size() != 2) return rejected("a quorum line is 'quorum <name>' or 'quorum none'");
  if (has_quorum_) return rejected("a policy has exactly one quorum line; this is the second");
  if (items[1] != kQuorumNone && names_.count(items[1]) == 0) {
    return rejected("quorum '" + std::string(items[1].substr(0, 200)) +
                    "' is not a witness or group defined on an earlier line (or none)");
  }
  has_quorum_ = true;
  *quorum_ = std::string(items[1]);
  return Status::ok();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

Result<TlogPolicy> TlogPolicy::parse(std::string_view text) {
  TlogPolicy policy;
  Parser parser(policy.logs_, policy.witnesses_, policy.groups_, policy.quorum_);
  EVL_RETURN_IF_ERROR(parser.run(text));
  return policy;
}

std::vector<VerifierKey> TlogPolicy::log_keys(std::string_view origin) const {
  std::vector<VerifierKey> out;
  for (const PolicyLog& log : logs_) {
    if (log.key.name == origin) out.push_back(log.key);
  }
  return out;
}

bool TlogPolicy::satisfied_by(std::span<const std::string> witnessed) const {
  if (quorum_ == kQuorumNone) return true;
  std::map<std::string_view, bool> done;
  for (const PolicyWitness& w : witnesses_) {
    done[w.name] = std::find(witnessed.begin(), witnessed.end(), w.name) != witnessed.end();
  }
  // Groups name only earlier names, so one pass in definition order decides every group.
  for (const PolicyGroup& g : groups_) {
    size_t count = static_cast<size_t>(std::count_if(
        g.members.begin(), g.members.end(), [&](const std::string& m) { return done[m]; }));
    done[g.name] = count >= g.threshold;
  }
  return done[quorum_];
}

Result<QuorumReport> TlogPolicy::evaluate(std::string_view note,
                                          std::span<const VerifierKey> other_logs) const {
  std::vector<VerifierKey> keys;
  for (const PolicyLog& log : logs_) keys.push_back(log.key);
  if (keys.empty()) keys.assign(other_logs.begin(), other_logs.end());
  if (keys.empty()) return rejected("the tlog policy lists no log, and no log key was given");
  auto opened = open_note(note, keys);
  if (!opened) return opened.error().with_context("checkpoint");
  auto body = parse_checkpoint_body(opened->text);
  if (!body) return body.error();
  const bool by_origin =
      std::any_of(opened->verified.begin(), opened->verified.end(),
                  [&](const NoteSignature& s) { return s.name == body->origin; });
  if (!by_origin) {
    return rejected("checkpoint of origin '" + body->origin.substr(0, 200) +
                    "' is signed by a listed log of another name; a log's key name is its "
                    "origin");
  }
  QuorumReport report;
  for (const VerifierKey& k : keys) {
    if (k.name == body->origin &&
        std::any_of(opened->verified.begin(), opened->verified.end(),
                    [&](const NoteSignature& s) { return s.name == k.name && s.id == k.id; })) {
      report.log_key = k;
      break;
    }
  }
  report.checkpoint = std::move(*body);
  std::vector<std::string> witnessed;
  for (const PolicyWitness& w : witnesses_) {
    auto line = std::find_if(opened->unverified.begin(), opened->unverified.end(),
                             [&](const NoteSignature& s) {
                               return s.name == w.key.name && s.id == w.key.id;
                             });
    if (line == opened->unverified.end()) {
      report.missing.push_back(w.name);
      continue;
    }
    auto time = verify_cosignature(report.checkpoint, *line, w.key);
    if (!time) {
      report.invalid.push_back(w.name);
      continue;
    }
    report.cosigned.push_back(Cosignature{w.name, *time});
    witnessed.push_back(w.name);
  }
  report.satisfied = report.invalid.empty() && satisfied_by(witnessed);
  return report;
}

Result<Checkpoint> TlogPolicy::verify(std::string_view note,
                                      std::span<const VerifierKey> other_logs) const {
  auto report = evaluate(note, other_logs);
  if (!report) return report.error();
  if (report->satisfied) return std::move(report->checkpoint);
  std::vector<std::string> cosigned;
  for (const Cosignature& c : report->cosigned) cosigned.push_back(c.name);
  std::string why = "checkpoint " + report->checkpoint.origin.substr(0, 200) + " at size " +
                    std::to_string(report->checkpoint.size) + ": ";
  if (satisfied_by(cosigned)) {
    // Met, but a known witness's line is bad: signed-note rejects such a note.
    return rejected(why + "the cosignature of " + joined(report->invalid) +
                    " does not verify; the note was altered or the witness's key is wrong");
  }
  why += "quorum " + quorum_ + " not met";
  if (!report->missing.empty()) why += "; missing " + joined(report->missing);
  if (!report->invalid.empty()) why += "; invalid " + joined(report->invalid);
  return rejected(why + "; ask the log for a checkpoint with more cosignatures");
}

Result<TlogPolicy> load_tlog_policy(const std::string& path) {
  auto text = read_file(path, ReadLimit{"policy file", kMaxPolicyBytes});
  if (!text) return text.error();
  auto policy = TlogPolicy::parse(*text);
  if (!policy) return policy.error().with_context("policy file " + path);
  return policy;
}

Result<std::vector<VerifierKey>> load_log_keys(const std::string& text_or_path) {
  std::ifstream in(text_or_path, std::ios::binary);
  if (!in) {
    if (auto type = vkey_type(text_or_path); type && *type == kCosignatureV1Algorithm) {
      return rejected("'" + text_or_path.substr(0, 200) + "' is a witness's cosigner key (type "
                      "0x04), not a log's key (an Ed25519 note key, type 0x01)");
    }
    auto key = VerifierKey::parse(text_or_path);
    if (!key) {
      return rejected("'" + text_or_path.substr(0, 200) + "' is neither a verifier key (" +
                      key.error().message() + ") nor a file that can be read (" +
                      std::strerror(errno) + ")");
    }
    return std::vector<VerifierKey>{std::move(*key)};
  }
  std::string text(kMaxPolicyBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return io_error("cannot read " + text_or_path + ": " + std::strerror(errno));
  text.resize(static_cast<size_t>(in.gcount()));
  auto key = VerifierKey::parse(text.substr(0, text.find('\n')));
  if (key) return std::vector<VerifierKey>{std::move(*key)};
  auto policy = TlogPolicy::parse(text);
  if (!policy) {
    return rejected(text_or_path + " is neither a verifier key file (" + key.error().message() +
                    ") nor a tlog policy (" + policy.error().message() + ")");
  }
  if (policy->logs().empty()) {
    return rejected("tlog policy " + text_or_path + " lists no log line");
  }
  std::vector<VerifierKey> keys;
  for (const PolicyLog& log : policy->logs()) keys.push_back(log.key);
  return keys;
}

}  // namespace evl
