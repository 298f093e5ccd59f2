// evledger proof — offline proofs: an entry's inclusion (C2SP tlog-proof or JSON), the log's
// consistency between two sizes (JSON), and their verification from the proof file alone.
#include <nlohmann/json.hpp>

#include "events/file_read.h"
#include "events/utf8.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/proof_format.h"
#include "ledger/proofs.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kProofUsage =
    "usage: evledger proof inclusion|consistency|verify [OPTIONS]\n"
    "\n"
    "  inclusion    prove that an entry is in the log (C2SP tlog-proof or JSON)\n"
    "  consistency  prove that the log only appended since an older checkpoint (JSON)\n"
    "  verify       check a proof with nothing but it, the entry and the log's verifier key\n"
    "\n"
    "'evledger proof SUBCOMMAND --help' describes each.\n";

constexpr const char* kInclusionUsage =
    "usage: evledger proof inclusion --ledger DIR (--id ID | --index N) [--size S]\n"
    "                                [--format tlog-proof|json] [--out FILE]\n"
    "\n"
    "Writes an offline proof that the entry (by event id sha256:<hex>, or by index) is in the\n"
    "log's tree of S entries, with the log's signed checkpoint of that size inside it. S defaults\n"
    "to the newest checkpoint's size; the log signs one checkpoint per commit, so S must be a\n"
    "size at which a commit ended. The default format is C2SP tlog-proof (c2sp.org/tlog-proof,\n"
    "save it as .tlog-proof); json adds the tree size and the entry's leaf hash. Output goes to\n"
    "standard output unless --out names a file.\n";

constexpr const char* kConsistencyUsage =
    "usage: evledger proof consistency --ledger DIR --from M [--to N] [--out FILE]\n"
    "\n"
    "Writes a JSON proof that the log's tree of N entries extends its tree of M entries (M >= 1),\n"
    "with the log's signed checkpoint of size N inside it. N defaults to the newest checkpoint's\n"
    "size and must be a size at which a commit ended. Verify it against a checkpoint of size M\n"
    "saved earlier (evledger checkpoint) with evledger proof verify --old-checkpoint.\n";

constexpr const char* kVerifyUsage =
    "usage: evledger proof verify (--vkey VKEY | --policy FILE) --proof FILE\n"
    "                             (--entry FILE | --leaf-hash HEX|BASE64 | --old-checkpoint FILE)\n"
    "                             [--json]\n"
    "\n"
    "Verifies a proof offline. VKEY is the log's verifier key (the text or a file holding it).\n"
    "An inclusion proof (tlog-proof or JSON) needs the entry: its stored bytes (evledger get\n"
    "--raw) or its RFC 6962 leaf hash, SHA-256(0x00 || entry). A consistency proof needs the\n"
    "older checkpoint note. --policy FILE (a C2SP tlog-policy) also demands that the proof's\n"
    "checkpoint carries the policy's quorum of valid cosignatures (a receipt of POST\n"
    "/add-event?wait=witnessed does) and names the witnesses missing or invalid; its log lines\n"
    "then give the log's key, unless --vkey does. Exit status 0 when the proof holds, 1 with\n"
    "the reason when not.\n";

// ---- the log's checkpoints -----------------------------------------------------------------

Status emit(const Args& args, const std::string& text, const std::string& what) {
  auto out = args.get("out");
  if (!out || *out == "-") return write_output("-", text);
  EVL_RETURN_IF_ERROR(write_output(*out, text));
  std::printf("%s written to %s\n", what.c_str(), out->c_str());
  return Status::ok();
}

// ---- proof inclusion -------------------------------------------------------------------------

Result<uint64_t> entry_index(const Args& args, const Ledger& ledger) {
  if (args.has("id") == args.has("index")) {
    return usage_error("name the entry with exactly one of --id and --index");
  }
  if (args.has("index")) return args.get_u64("index", 0, kAnyU64);
  auto id = parse_digest_text(*args.get("id"));
  if (!id) return usage_error("--id: " + id.error().message());
  return ledger.find(*id);
}

int run_inclusion(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("proof inclusion takes no arguments"));
  std::string format = args.get("format").value_or("tlog-proof");
  if (format != "tlog-proof" && format != "json") {
    return fail(usage_error("--format is tlog-proof or json, not '" + format + "'"));
  }
  auto size = args.get_optional_u64("size", kAnyU64);
  if (!size) return fail(size.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  auto index = entry_index(args, **ledger);
  if (!index) return fail(index.error());
  if (*size) {
    auto cp = ledger_checkpoint(**ledger, *size, "size");  // names --size when there is none
    if (!cp) return fail(cp.error());
  }
  auto proof = prove_inclusion(**ledger, *index, *size);
  if (!proof) return fail(proof.error());
  std::string text = format == "json" ? format_inclusion_proof_json(proof->proof) + "\n"
                                      : format_tlog_proof(proof->proof);
  Status s = emit(args, text, "inclusion proof of entry " + std::to_string(*index) +
                                  " in the tree of size " +
                                  std::to_string(proof->checkpoint.size));
  return s ? kExitOk : fail(s);
}

// ---- proof consistency -----------------------------------------------------------------------

int run_consistency(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("proof consistency takes no arguments"));
  if (!args.has("from")) return fail(usage_error("--from is required; see --help"));
  auto from = args.get_u64("from", 0,
                          {1, UINT64_MAX, "every tree extends the empty one, so a proof from "
                                          "size 0 proves nothing"});
  if (!from) return fail(from.error());
  auto to = args.get_optional_u64("to", kAnyU64);
  if (!to) return fail(to.error());
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  if (*to) {
    auto cp = ledger_checkpoint(**ledger, *to, "to");  // names --to when there is none
    if (!cp) return fail(cp.error());
  }
  auto proof = prove_consistency(**ledger, *from, *to);
  if (!proof) {
    // Name the option, not the library's "size N".
    if (proof.error().code() == Code::kUsage) {
      return fail(usage_error("--from " + std::to_string(*from) + ": " + proof.error().message()));
    }
    return fail(proof.error());
  }
  const uint64_t size = proof->to;
  Status s = emit(args, format_consistency_proof_json(*proof) + "\n",
                  "consistency proof from size " + std::to_string(*from) + " to size " +
                      std::to_string(size));
  return s ? kExitOk : fail(s);
}

// ---- proof verify ----------------------------------------------------------------------------

// --entry FILE (the entry's bytes) or --leaf-hash (64 hex digits, or base64 of 32 bytes).
Result<Hash> given_leaf(const Args& args) {
  if (args.has("entry") == args.has("leaf-hash")) {
    return usage_error("an inclusion proof needs exactly one of --entry and --leaf-hash");
  }
  if (args.has("entry")) {
    auto bytes = read_file(*args.get("entry"), ReadLimit{"entry file", kMaxEntryBytes});
    if (!bytes) return bytes.error();
    return leaf_hash(as_bytes(*bytes));
  }
  std::string text = *args.get("leaf-hash");
  auto bytes = text.size() == 2 * kHashSize ? hex_decode(text) : base64_decode(text);
  if (!bytes) {
    return usage_error("--leaf-hash is 64 hex digits or the base64 of 32 bytes, not '" + text +
                       "'");
  }
  auto hash = parse_hash(*bytes, "--leaf-hash");
  if (!hash) return usage_error(hash.error().message());
  return *hash;
}

std::string not_verified(const VerifierKey& key) {
  return "not verified with log key " + key.name + "+" + hex_encode(key.id);
}

int verify_inclusion_doc(const Args& args, const InclusionProofDoc& proof, const VerifierKey& key) {
  if (args.has("old-checkpoint")) {
    return fail(
        usage_error("--old-checkpoint is for consistency proofs; this is an inclusion proof"));
  }
  auto leaf = given_leaf(args);
  if (!leaf) return fail(leaf.error());
  auto verified = verify_inclusion_proof(proof, *leaf, key);
  if (!verified) return fail(verified.error().with_context(not_verified(key)));
  const Checkpoint& cp = verified->checkpoint;
  if (args.has("json")) {
    nlohmann::ordered_json j;
    j["ok"] = true;
    j["type"] = "inclusion";
    j["index"] = verified->index;
    j["leafHash"] = base64_encode(verified->leaf_hash);
    j["origin"] = cp.origin;
    j["size"] = cp.size;
    j["root"] = base64_encode(cp.root);
    print_json_line(j);
  } else {
    std::printf("verified: entry %llu (leaf hash %s) is in the tree of size %llu of %s, root %s\n",
                static_cast<unsigned long long>(verified->index),
                base64_encode(verified->leaf_hash).c_str(),
                static_cast<unsigned long long>(cp.size), visible_text(cp.origin).c_str(),
                base64_encode(cp.root).c_str());
  }
  return kExitOk;
}

int verify_consistency_doc(const Args& args, const ConsistencyProofDoc& proof,
                           const VerifierKey& key) {
  if (args.has("entry") || args.has("leaf-hash")) {
    return fail(usage_error("--entry and --leaf-hash are for inclusion proofs; this is a "
                            "consistency proof, which needs --old-checkpoint"));
  }
  if (!args.has("old-checkpoint")) {
    return fail(usage_error("a consistency proof needs --old-checkpoint FILE, the log's "
                            "checkpoint of size " + std::to_string(proof.from)));
  }
  auto old_note = read_file(*args.get("old-checkpoint"),
                            ReadLimit{"checkpoint file", kMaxNoteFileBytes});
  if (!old_note) return fail(old_note.error());
  auto verified = verify_consistency_proof(proof, *old_note, key);
  if (!verified) return fail(verified.error().with_context(not_verified(key)));
  const Checkpoint& older = verified->old_checkpoint;
  const Checkpoint& newer = verified->new_checkpoint;
  if (args.has("json")) {
    nlohmann::ordered_json j;
    j["ok"] = true;
    j["type"] = "consistency";
    j["origin"] = newer.origin;
    j["from"] = older.size;
    j["fromRoot"] = base64_encode(older.root);
    j["to"] = newer.size;
    j["toRoot"] = base64_encode(newer.root);
    print_json_line(j);
  } else {
    std::printf("verified: the tree of size %llu of %s (root %s) extends the tree of size %llu "
                "(root %s)\n",
                static_cast<unsigned long long>(newer.size), visible_text(newer.origin).c_str(),
                base64_encode(newer.root).c_str(), static_cast<unsigned long long>(older.size),
                base64_encode(older.root).c_str());
  }
  return kExitOk;
}

// With --policy: the proof's checkpoint must have the quorum (TlogPolicy::verify says who is
// missing); the log key is then the one that signed it, which must be --vkey when given.
Result<VerifierKey> witnessed_log_key(const TlogPolicy& policy, std::string_view note,
                                      const std::optional<VerifierKey>& vkey) {
  std::vector<VerifierKey> given;
  if (vkey) given.push_back(*vkey);
  auto report = policy.evaluate(note, given);
  if (report && report->satisfied) {
    if (vkey && !(report->log_key == *vkey)) {
      return rejected("the proof's checkpoint is signed by the policy's log " +
                      report->log_key.to_string() + ", not by --vkey " + vkey->to_string());
    }
    return report->log_key;
  }
  auto verified = policy.verify(note, given);
  return (verified ? rejected("the policy's quorum is not met") : verified.error())
      .with_context("not verified: --policy");
}

int run_verify(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("proof verify takes no arguments"));
  std::optional<TlogPolicy> policy;
  if (Status s = load_policy_option(args, policy); !s) return fail(s);
  std::optional<VerifierKey> vkey;
  if (!policy || args.has("vkey")) {
    auto vkey_arg = args.require("vkey");
    if (!vkey_arg) return fail(vkey_arg.error());
    auto key = load_verifier_key(*vkey_arg);
    if (!key) return fail(key.error().with_context("--vkey"));
    vkey = *key;
  }
  auto proof_path = args.require("proof");
  if (!proof_path) return fail(proof_path.error());
  auto text = read_file(*proof_path, ReadLimit{"proof file", kMaxProofDocumentBytes});
  if (!text) return fail(text.error());
  auto proof = parse_proof(*text);
  if (!proof) return fail(proof.error().with_context("not verified: " + *proof_path));
  auto* inclusion = std::get_if<InclusionProofDoc>(&*proof);
  if (policy) {
    auto key = witnessed_log_key(*policy, inclusion ? inclusion->checkpoint_note
                                                    : std::get<ConsistencyProofDoc>(*proof).checkpoint_note,
                                 vkey);
    if (!key) return fail(key.error());
    vkey = *key;
  }
  if (inclusion) return verify_inclusion_doc(args, *inclusion, *vkey);
  return verify_consistency_doc(args, std::get<ConsistencyProofDoc>(*proof), *vkey);
}

}  // namespace

int cmd_proof(const std::vector<std::string>& argv) {
  std::string sub = argv.empty() ? "" : argv[0];
  std::vector<std::string> rest(argv.begin() + (argv.empty() ? 0 : 1), argv.end());
  if (sub == "inclusion") {
    return run_command(rest,
                       {{"ledger"}, {"id"}, {"index"}, {"size"}, {"format"}, {"out"}},
                       kInclusionUsage, run_inclusion);
  }
  if (sub == "consistency") {
    return run_command(rest, {{"ledger"}, {"from"}, {"to"}, {"out"}}, kConsistencyUsage,
                       run_consistency);
  }
  if (sub == "verify") {
    return run_command(rest,
                       {{"vkey"}, {"proof"}, {"entry"}, {"leaf-hash"}, {"old-checkpoint"},
                        {"policy"}, {"json", false}},
                       kVerifyUsage, run_verify);
  }
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kProofUsage, stdout);
    return kExitOk;
  }
  std::fprintf(stderr, "evledger: %s\n\n%s",
               sub.empty() ? "proof needs a subcommand"
                           : ("unknown proof subcommand '" + sub + "'").c_str(),
               kProofUsage);
  return kExitUsage;
}

}  // namespace evl::cli
