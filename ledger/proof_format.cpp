#include "ledger/proof_format.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "events/json.h"
#include "keys/note.h"

namespace evl {

namespace {

using nlohmann::ordered_json;

constexpr std::string_view kEmDashSpace = "\xE2\x80\x94 ";  // how every signature line starts
constexpr uint64_t kMaxJsonInteger = uint64_t{1} << 53;     // I-JSON's exact integers

std::string b64(const Hash& h) { return base64_encode(h); }

// One hash line or JSON string: standard padded base64 of exactly 32 bytes.
Result<Hash> decode_hash(std::string_view text, const std::string& what) {
  auto bytes = base64_decode(text);
  if (!bytes) return rejected(what + " is not standard padded base64: " + bytes.error().message());
  return parse_hash(*bytes, what);
}

// The checkpoint's structure, without its signatures: a signed note whose text is a checkpoint
// body. Returns the body.
Result<Checkpoint> parse_checkpoint_note(std::string_view note, const std::string& what) {
  auto parsed = parse_note(note);
  if (!parsed) return parsed.error().with_context(what);
  auto checkpoint = parse_checkpoint_body(parsed->text);
  if (!checkpoint) return checkpoint.error().with_context(what);
  return checkpoint;
}

std::string dump(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

ordered_json hashes_json(const std::vector<Hash>& hashes) {
  ordered_json out = ordered_json::array();
  for (const Hash& h : hashes) out.push_back(b64(h));
  return out;
}

// ---- tlog-proof lines ----------------------------------------------------------------------

// Walks "\n"-terminated lines, counting them for messages.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : rest_(text) {}
  bool done() const { return rest_.empty(); }
  size_t number() const { return number_; }  // of the line last returned
  std::string where() const { return "tlog-proof line " + std::to_string(number_); }
  std::string_view peek() const { return rest_.substr(0, rest_.find('\n')); }
  std::string_view next() {
    std::string_view line = peek();
    rest_.remove_prefix(std::min(rest_.size(), line.size() + 1));
    ++number_;
    return line;
  }

 private:
  std::string_view rest_;
  size_t number_ = 0;
};

Status check_line_ends(std::string_view head) {
  size_t cr = head.find('\r');
  if (cr == std::string_view::npos) return Status::ok();
  size_t line = 1 + static_cast<size_t>(std::count(head.begin(), head.begin() + cr, '\n'));
  return rejected("tlog-proof line " + std::to_string(line) +
                  " has a carriage return; tlog-proof lines end in \\n only");
}

// The lines before the blank line: header, optional extra, index, hashes.
Status parse_tlog_proof_head(std::string_view head, InclusionProofDoc& proof) {
  EVL_RETURN_IF_ERROR(check_line_ends(head));
  LineReader lines(head);
  if (lines.next() != kTlogProofHeader) {
    return rejected("tlog-proof line 1 must be '" + std::string(kTlogProofHeader) +
                    "'; this is not a tlog-proof or not version 1");
  }
  if (lines.peek().starts_with("extra ")) {
    std::string_view value = lines.next().substr(6);
    auto extra = base64_decode(value);
    if (!extra) {
      return rejected(lines.where() + ": the extra data is not standard padded base64: " +
                      extra.error().message());
    }
    if (extra->empty()) {
      return rejected(lines.where() +
                      ": the extra line is empty; omit it when there is no extra data");
    }
    proof.extra = std::move(*extra);
  }
  if (lines.done()) return rejected("tlog-proof has no 'index N' line after its header");
  std::string_view index_line = lines.next();
  std::optional<uint64_t> index;
  if (index_line.starts_with("index ")) {
    if (auto n = parse_u64(index_line.substr(6))) index = *n;
  }
  if (!index) {
    return rejected(lines.where() + ": expected 'index N' with N a decimal without sign or "
                    "leading zeros, found '" + std::string(index_line.substr(0, 40)) + "'");
  }
  proof.index = *index;
  while (!lines.done()) {
    std::string_view line = lines.next();
    if (proof.hashes.size() == kMaxProofHashes) {
      return rejected(lines.where() + ": more than " + std::to_string(kMaxProofHashes) +
                      " proof hashes; no tree needs that many");
    }
    auto hash = decode_hash(line, lines.where() + " (proof hash " +
                                      std::to_string(proof.hashes.size() + 1) + ")");
    if (!hash) return hash.error();
    proof.hashes.push_back(*hash);
  }
  return Status::ok();
}

// ---- JSON members ---------------------------------------------------------------------------

// Checks that `object` has exactly the required members plus any of the optional ones.
Status check_members(const Json& object, std::initializer_list<std::string_view> required,
                     std::initializer_list<std::string_view> optional, const std::string& what) {
  for (const auto& [key, value] : object.as_object()) {
    bool known = std::find(required.begin(), required.end(), key) != required.end() ||
                 std::find(optional.begin(), optional.end(), key) != optional.end();
    if (!known) return rejected(what + ": unknown member \"" + key + "\"");
  }
  for (std::string_view key : required) {
    if (object.find(key) == nullptr) {
      return rejected(what + ": member \"" + std::string(key) + "\" is missing");
    }
  }
  return Status::ok();
}

Result<uint64_t> json_u64(const Json& object, std::string_view key, const std::string& what) {
  const Json* v = object.find(key);
  std::string name = what + ": \"" + std::string(key) + "\"";
  if (!v->is_number()) {
    return rejected(name + " must be a number, not " + json_type_name(v->type()));
  }
  double d = v->as_number();
  if (!(d >= 0) || d > static_cast<double>(kMaxJsonInteger) ||
      d != static_cast<double>(static_cast<uint64_t>(d))) {
    return rejected(name + " must be an integer from 0 to 2^53");
  }
  return static_cast<uint64_t>(d);
}

Result<std::string> json_string(const Json& object, std::string_view key, const std::string& what) {
  const Json* v = object.find(key);
  if (!v->is_string()) {
    return rejected(what + ": \"" + std::string(key) + "\" must be a string, not " +
                    json_type_name(v->type()));
  }
  return v->as_string();
}

Result<std::vector<Hash>> json_hashes(const Json& object, const std::string& what) {
  const Json* v = object.find("hashes");
  if (!v->is_array()) {
    return rejected(what + ": \"hashes\" must be an array, not " + json_type_name(v->type()));
  }
  if (v->as_array().size() > kMaxProofHashes) {
    return rejected(what + ": \"hashes\" has " + std::to_string(v->as_array().size()) +
                    " entries; no tree needs more than " + std::to_string(kMaxProofHashes));
  }
  std::vector<Hash> out;
  for (const Json& item : v->as_array()) {
    std::string name = what + ": proof hash " + std::to_string(out.size() + 1);
    if (!item.is_string()) return rejected(name + " must be a string");
    auto hash = decode_hash(item.as_string(), name);
    if (!hash) return hash.error();
    out.push_back(*hash);
  }
  return out;
}

// The checkpoint member: a well-formed checkpoint note of the stated size.
Result<std::string> json_checkpoint(const Json& object, uint64_t size, const std::string& what) {
  auto note = json_string(object, "checkpoint", what);
  if (!note) return note.error();
  auto checkpoint = parse_checkpoint_note(*note, what + ": \"checkpoint\"");
  if (!checkpoint) return checkpoint.error();
  if (checkpoint->size != size) {
    return rejected(what + ": the checkpoint is of size " + std::to_string(checkpoint->size) +
                    ", not the stated " + std::to_string(size));
  }
  return note;
}

Result<ProofDoc> parse_inclusion_json(const Json& object) {
  const std::string what = "JSON inclusion proof";
  EVL_RETURN_IF_ERROR(check_members(
      object, {"type", "index", "size", "leafHash", "hashes", "checkpoint"}, {"extra"}, what));
  InclusionProofDoc proof;
  auto index = json_u64(object, "index", what);
  if (!index) return index.error();
  auto size = json_u64(object, "size", what);
  if (!size) return size.error();
  auto leaf = json_string(object, "leafHash", what);
  if (!leaf) return leaf.error();
  auto leaf_hash = decode_hash(*leaf, what + ": \"leafHash\"");
  if (!leaf_hash) return leaf_hash.error();
  auto hashes = json_hashes(object, what);
  if (!hashes) return hashes.error();
  auto note = json_checkpoint(object, *size, what);
  if (!note) return note.error();
  if (object.find("extra") != nullptr) {
    auto text = json_string(object, "extra", what);
    if (!text) return text.error();
    auto extra = base64_decode(*text);
    if (!extra || extra->empty()) {
      return rejected(what + ": \"extra\" must be non-empty standard padded base64");
    }
    proof.extra = std::move(*extra);
  }
  proof.index = *index;
  proof.hashes = std::move(*hashes);
  proof.checkpoint_note = std::move(*note);
  proof.leaf_hash = *leaf_hash;
  return ProofDoc(std::move(proof));
}

Result<ProofDoc> parse_consistency_json(const Json& object) {
  const std::string what = "JSON consistency proof";
  EVL_RETURN_IF_ERROR(
      check_members(object, {"type", "from", "to", "hashes", "checkpoint"}, {}, what));
  auto from = json_u64(object, "from", what);
  if (!from) return from.error();
  auto to = json_u64(object, "to", what);
  if (!to) return to.error();
  auto hashes = json_hashes(object, what);
  if (!hashes) return hashes.error();
  auto note = json_checkpoint(object, *to, what);
  if (!note) return note.error();
  return ProofDoc(ConsistencyProofDoc{*from, *to, std::move(*hashes), std::move(*note)});
}

}  // namespace

// ---- tlog-proof -------------------------------------------------------------------------------

std::string format_tlog_proof(const InclusionProofDoc& proof) {
  std::string out = std::string(kTlogProofHeader) + "\n";
  if (!proof.extra.empty()) out += "extra " + base64_encode(proof.extra) + "\n";
  out += "index " + std::to_string(proof.index) + "\n";
  for (const Hash& h : proof.hashes) out += b64(h) + "\n";
  out += "\n";
  out += proof.checkpoint_note;
  return out;
}

Result<InclusionProofDoc> parse_tlog_proof(std::string_view text) {
  if (text.size() > kMaxProofDocumentBytes) {
    return rejected("tlog-proof is " + std::to_string(text.size()) + " bytes; at most " +
                    std::to_string(kMaxProofDocumentBytes) + " are accepted");
  }
  // Hash lines and checkpoint body lines are never empty, so the first blank line ends the proof
  // unless it is missing: then the first one is the checkpoint's own, before its signatures.
  size_t blank = text.find("\n\n");
  if (blank == std::string_view::npos) {
    return rejected("tlog-proof has no blank line followed by the checkpoint");
  }
  std::string_view note = text.substr(blank + 2);
  if (note.substr(0, kEmDashSpace.size()) == kEmDashSpace) {
    return rejected("tlog-proof has no blank line between the proof hashes and the checkpoint "
                    "(the only blank line is the checkpoint's own, before its signatures)");
  }
  InclusionProofDoc proof;
  EVL_RETURN_IF_ERROR(parse_tlog_proof_head(text.substr(0, blank + 1), proof));
  auto checkpoint = parse_checkpoint_note(note, "tlog-proof checkpoint");
  if (!checkpoint) return checkpoint.error();
  proof.checkpoint_note = std::string(note);
  return proof;
}

// ---- JSON -------------------------------------------------------------------------------------

std::string format_inclusion_proof_json(const InclusionProofDoc& proof) {
  auto checkpoint = parse_checkpoint_note(proof.checkpoint_note, "checkpoint");
  EVL_ASSERT(checkpoint.has_value());
  EVL_ASSERT(proof.leaf_hash.has_value());
  EVL_ASSERT(proof.index <= kMaxJsonInteger && checkpoint->size <= kMaxJsonInteger);
  ordered_json j;
  j["type"] = "inclusion";
  j["index"] = proof.index;
  j["size"] = checkpoint->size;
  j["leafHash"] = b64(*proof.leaf_hash);
  j["hashes"] = hashes_json(proof.hashes);
  j["checkpoint"] = proof.checkpoint_note;
  if (!proof.extra.empty()) j["extra"] = base64_encode(proof.extra);
  return dump(j);
}

std::string format_consistency_proof_json(const ConsistencyProofDoc& proof) {
  EVL_ASSERT(proof.from <= kMaxJsonInteger && proof.to <= kMaxJsonInteger);
  ordered_json j;
  j["type"] = "consistency";
  j["from"] = proof.from;
  j["to"] = proof.to;
  j["hashes"] = hashes_json(proof.hashes);
  j["checkpoint"] = proof.checkpoint_note;
  return dump(j);
}

Result<ProofDoc> parse_proof_json(std::string_view text) {
  JsonLimits limits;
  limits.max_depth = 4;
  limits.max_bytes = kMaxProofDocumentBytes;
  auto json = parse_json(text, limits);
  if (!json) return json.error().with_context("JSON proof");
  if (!json->is_object()) return rejected("JSON proof must be an object");
  const Json* type = json->find("type");
  if (type == nullptr || !type->is_string()) {
    return rejected("JSON proof needs a \"type\" member, \"inclusion\" or \"consistency\"");
  }
  if (type->as_string() == "inclusion") return parse_inclusion_json(*json);
  if (type->as_string() == "consistency") return parse_consistency_json(*json);
  return rejected("JSON proof type \"" + type->as_string() +
                  "\" is neither \"inclusion\" nor \"consistency\"");
}

Result<ProofDoc> parse_proof(std::string_view text) {
  if (text.substr(0, kTlogProofHeader.size()) == kTlogProofHeader) {
    auto proof = parse_tlog_proof(text);
    if (!proof) return proof.error();
    return ProofDoc(std::move(*proof));
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_proof_json(text);
  return rejected("not a proof: expected a tlog-proof (first line '" +
                  std::string(kTlogProofHeader) + "') or a JSON proof object");
}

// ---- verification -------------------------------------------------------------------------

namespace {

// Whether the leaf hash the proof states (if any) is `leaf`'s.
Status check_stated_leaf(const InclusionProofDoc& proof, const Hash& leaf) {
  if (proof.leaf_hash && *proof.leaf_hash != leaf) {
    return rejected("inclusion proof: it is for leaf hash " + b64(*proof.leaf_hash) +
                    ", not the given entry's " + b64(leaf) + "; it proves another entry");
  }
  return Status::ok();
}

// The inclusion of `leaf` in the tree of an opened (signature-checked) checkpoint.
Status verify_in_checkpoint(const InclusionProofDoc& proof, const Hash& leaf,
                            const Checkpoint& checkpoint) {
  EVL_RETURN_IF_ERROR(check_stated_leaf(proof, leaf));
  if (proof.index >= checkpoint.size) {
    return rejected("inclusion proof: index " + std::to_string(proof.index) +
                    " is not in the checkpoint's tree of size " + std::to_string(checkpoint.size) +
                    "; an entry's index must be below the tree size");
  }
  Status s = verify_inclusion(proof.index, checkpoint.size, leaf, proof.hashes, checkpoint.root);
  if (!s) {
    return rejected(s.message() + " (checkpoint of " + checkpoint.origin +
                    "); the entry, the index or a proof hash is not what the log holds");
  }
  return Status::ok();
}

}  // namespace

Result<VerifiedInclusion> verify_inclusion_proof(const InclusionProofDoc& proof, const Hash& leaf,
                                                 const VerifierKey& log_key) {
  EVL_RETURN_IF_ERROR(check_stated_leaf(proof, leaf));
  auto checkpoint = open_checkpoint(proof.checkpoint_note, log_key);
  if (!checkpoint) return checkpoint.error().with_context("inclusion proof");
  EVL_RETURN_IF_ERROR(verify_in_checkpoint(proof, leaf, *checkpoint));
  return VerifiedInclusion{proof.index, leaf, std::move(*checkpoint)};
}

Status ReceiptVerifier::verify(std::string_view receipt, ByteView entry, uint64_t index) {
  auto proof = parse_tlog_proof(receipt);
  if (!proof) return proof.error().with_context("receipt");
  if (proof->index != index) {
    return rejected("receipt: it proves index " + std::to_string(proof->index) +
                    ", but the entry was answered at index " + std::to_string(index));
  }
  if (!opened_ || proof->checkpoint_note != note_) {
    opened_.reset();
    auto checkpoint = open_checkpoint(proof->checkpoint_note, log_key_);
    if (!checkpoint) return checkpoint.error().with_context("receipt");
    note_ = proof->checkpoint_note;
    opened_ = std::move(*checkpoint);
  }
  return verify_in_checkpoint(*proof, leaf_hash(entry), *opened_).with_context("receipt");
}

Result<VerifiedConsistency> verify_consistency_proof(const ConsistencyProofDoc& proof,
                                                     std::string_view old_checkpoint_note,
                                                     const VerifierKey& log_key) {
  auto older = open_checkpoint(old_checkpoint_note, log_key);
  if (!older) return older.error().with_context("consistency proof: old checkpoint");
  auto newer = open_checkpoint(proof.checkpoint_note, log_key);
  if (!newer) return newer.error().with_context("consistency proof: the proof's checkpoint");
  if (older->origin != newer->origin) {  // open_checkpoint ties both to the key; kept explicit
    return rejected("consistency proof: the checkpoints are of different logs, " +
                    older->origin + " and " + newer->origin);
  }
  if (newer->size != proof.to) {
    return rejected("consistency proof: it is to size " + std::to_string(proof.to) +
                    " but its checkpoint is of size " + std::to_string(newer->size));
  }
  if (older->size != proof.from) {
    return rejected("consistency proof: it is from size " + std::to_string(proof.from) +
                    " but the old checkpoint is of size " + std::to_string(older->size) +
                    "; ask for a proof from " + std::to_string(older->size));
  }
  Status s = verify_consistency(proof.from, proof.to, proof.hashes, older->root, newer->root);
  if (!s) {
    return rejected(s.message() + " (" + older->origin +
                    "); the log's two checkpoints do not describe one append-only history, "
                    "or a proof hash was altered");
  }
  return VerifiedConsistency{std::move(*older), std::move(*newer)};
}

}  // namespace evl
