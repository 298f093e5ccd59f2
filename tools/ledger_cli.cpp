#include "tools/ledger_cli.h"

#include "keys/signer.h"

namespace evl::cli {

Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write) {
  auto dir = args.require("ledger");
  if (!dir) return dir.error();
  OpenOptions options;
  options.dir = *dir;
  options.read_only = !write;
  if (write) options.log_key_path = args.get("log-key").value_or("");
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

}  // namespace evl::cli
