#include "tools/ledger_cli.h"

#include "keys/checkpoint.h"
#include "keys/note.h"
#include "keys/signer.h"
#include "projections/ledger_hook.h"

namespace evl::cli {

Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write) {
  auto dir = args.require("ledger");
  if (!dir) return dir.error();
  OpenOptions options;
  options.dir = *dir;
  options.read_only = !write;
  if (write) {
    options.log_key_path = args.get("log-key").value_or("");
    options.hook = make_projection_hook();  // the projections are kept in every append
  }
  return Ledger::open(options);
}

Result<SecretKey> load_signer(const Args& args, const std::string& option) {
  auto path = args.require(option);
  if (!path) return path.error();
  return SecretKey::load(*path);
}

int append_one(Ledger& ledger, const SecretKey& signer, EventBody body, const std::string& what) {
  body.author = signer.public_key();
  body.claimed_time_ms = now_ms();
  auto entry = sign_event(signer, body);
  if (!entry) return fail(entry.error());
  std::vector<Bytes> batch{std::move(entry.value())};
  auto outcomes = ledger.append(batch);
  const AppendOutcome& o = outcomes.at(0);
  if (!o.status) return fail(o.status.with_context(what + " rejected"));
  std::printf("%s %s at index %llu (%s)\n", what.c_str(), o.added ? "appended" : "already present",
              static_cast<unsigned long long>(o.index), digest_text(o.id).c_str());
  return kExitOk;
}

std::string newest_size_text(const Ledger& ledger) {
  auto note = ledger.checkpoint();
  if (!note) return "unknown";
  auto parsed = parse_note(*note);
  if (!parsed) return "unknown";
  auto checkpoint = parse_checkpoint_body(parsed->text);
  return checkpoint ? std::to_string(checkpoint->size) : "unknown";
}

Result<LedgerCheckpoint> ledger_checkpoint(const Ledger& ledger, std::optional<uint64_t> size,
                                           const std::string& option) {
  auto note = ledger.checkpoint(size);
  if (!note && note.error().code() == Code::kNotFound && size) {
    return not_found("--" + option + " " + std::to_string(*size) +
                     ": the log has no checkpoint of that size (it signs one per commit, at the "
                     "size where the commit ended); the newest is of size " +
                     newest_size_text(ledger) + ", the default");
  }
  if (!note) return note.error().with_context("checkpoint");
  auto key = ledger.log_verifier();
  if (!key) return key.error().with_context("the log's verifier key");
  auto checkpoint = open_checkpoint(*note, *key);
  if (!checkpoint) {
    return corrupt("stored " + checkpoint.error().message() + "; run evledger verify");
  }
  return LedgerCheckpoint{std::move(*note), std::move(*checkpoint), std::move(*key)};
}

}  // namespace evl::cli
