// evledger key — make key pairs; grant and revoke roles with signed admin events; list keys.
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "events/event_builder.h"
#include "events/utf8.h"
#include "keys/checkpoint.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/publish.h"
#include "tools/render.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger key new NAME [--cosigner] --out FILE\n"
    "       evledger key grant DEST --key VKEY --role ROLE [--role ROLE]... [--scope S]...\n"
    "                          --signer ADMIN_KEY_FILE [--json]\n"
    "       evledger key revoke DEST --key VKEY --reason retired|rotated|compromised\n"
    "                           [--void-from INDEX] --signer ADMIN_KEY_FILE [--json]\n"
    "       evledger key list --ledger DIR [--json]\n"
    "\n"
    "new     writes a secret key file (mode 0600) to FILE and its verifier key to FILE.vkey,\n"
    "        and prints the verifier key. NAME: no spaces, no '+' (e.g. alice@sol-execbench).\n"
    "        --cosigner makes a witness's key (C2SP tlog-cosignature, Ed25519): the secret\n"
    "        key file is the same, its verifier key has type 0x04 (NAME: e.g. a URL such as\n"
    "        witness.example.org/w1), for 'evledger witness serve' and tlog-policy files.\n"
    "grant   appends a key grant signed by an admin. Roles: admin, importer, runner, curator,\n"
    "        attestor. Scope: source slugs for importers, owner and host ids for runners.\n"
    "        VKEY is a verifier key or a file holding one.\n"
    "revoke  appends a revocation. Revocation is forward-only; for a compromised key,\n"
    "        --void-from INDEX voids its events from INDEX on (they stay in the log, and the\n"
    "        verifier and projections skip them).\n"
    "DEST is --ledger DIR [--log-key FILE] or --to URL [--retry-for SECONDS], with\n"
    "[--receipts DIR] [--vkey LOGVKEY] (below). --json prints {\"status\",\"index\",\"event\"}.\n";

constexpr const char* kAdminHint =
    "grants and revocations are signed by an admin key of the ledger (--signer), such as the "
    "admin key 'evledger init' made";

int run_new(const Args& args) {
  if (args.positional().size() != 2) return fail(usage_error("key new takes one NAME"));
  auto out = args.require("out");
  if (!out) return fail(out.error());
  auto key = SecretKey::generate(args.positional()[1]);
  if (!key) return fail(key.error().code() == Code::kRejected
                            ? usage_error("NAME: " + key.error().message())
                            : key.error());
  if (Status s = key->save(*out); !s) return fail(s);
  // A cosigner signs with the same Ed25519 key; only its verifier key's type (0x04) and key
  // id differ, which is what witnesses' clients are configured with.
  std::string vkey = args.has("cosigner")
                         ? CosignerKey::of(key->name(), key->public_key()).to_string()
                         : key->verifier().to_string();
  if (Status s = write_output(*out + ".vkey", vkey + "\n"); !s) return fail(s);
  std::printf("%s\n", vkey.c_str());
  return kExitOk;
}

int run_grant(const Args& args) {
  auto vkey_arg = args.require("key");
  if (!vkey_arg) return fail(vkey_arg.error());
  auto vkey = load_verifier_key(*vkey_arg);
  if (!vkey) return fail(vkey.error().with_context("--key"));
  std::set<Role> roles;
  for (const auto& name : args.all("role")) {
    auto role = parse_role(name);
    if (!role) {
      return fail(usage_error("--role " + name +
                              " is not a role; roles are admin, importer, runner, curator, "
                              "attestor"));
    }
    roles.insert(*role);
  }
  if (roles.empty()) return fail(usage_error("key grant needs at least one --role"));
  auto scope_list = args.all("scope");
  std::set<std::string> scope(scope_list.begin(), scope_list.end());
  if (scope.count("") != 0) return fail(usage_error("--scope must not be empty"));
  auto signer = load_signer(args, "signer");
  if (!signer) return fail(signer.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());
  KeyGrant grant;
  grant.key = {vkey->public_key, vkey->name};
  grant.roles.assign(roles.begin(), roles.end());
  grant.scope.assign(scope.begin(), scope.end());
  auto body = key_grant_event(signer->public_key(), std::move(grant), now_ms());
  if (!body) return fail(body.error());
  return publish_and_report(*destination, *signer, *body, "grant of " + vkey->name,
                            kAdminHint, args, Json::object(), "");
}

int run_revoke(const Args& args) {
  auto vkey_arg = args.require("key");
  if (!vkey_arg) return fail(vkey_arg.error());
  auto vkey = load_verifier_key(*vkey_arg);
  if (!vkey) return fail(vkey.error().with_context("--key"));
  auto reason_text = args.require("reason");
  if (!reason_text) return fail(reason_text.error());
  auto reason = parse_revoke_reason(*reason_text);
  if (!reason) {
    return fail(usage_error("--reason must be retired, rotated or compromised"));
  }
  auto void_from = args.get_u64("void-from", 0, kAnyU64);
  if (!void_from) return fail(void_from.error());
  if (*reason == RevokeReason::kCompromised && !args.has("void-from")) {
    return fail(usage_error("a compromised key needs --void-from INDEX: the first log index "
                            "whose events by it are void"));
  }
  if (*reason != RevokeReason::kCompromised && args.has("void-from")) {
    return fail(usage_error("--void-from is only for --reason compromised"));
  }
  auto signer = load_signer(args, "signer");
  if (!signer) return fail(signer.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());
  auto body = key_revoke_event(signer->public_key(),
                               KeyRevoke{vkey->public_key, *reason, *void_from}, now_ms());
  if (!body) return fail(body.error());
  return publish_and_report(*destination, *signer, *body, "revocation of " + vkey->name,
                            kAdminHint, args, Json::object(), "");
}

int run_list(const Args& args) {
  auto ledger = open_ledger(args, false);
  if (!ledger) return fail(ledger.error());
  KeyPolicy policy = (*ledger)->policy();
  if (args.has("json")) {
    std::optional<std::string> next;
    for (const auto& line : key_registry_json(policy, "", SIZE_MAX, next)) {
      std::printf("%s\n", line.c_str());
    }
    return kExitOk;
  }
  for (const auto& [pk, rec] : policy.keys()) {
    std::vector<std::string> roles;
    for (Role r : rec.roles) roles.push_back(role_name(r));
    std::string vkey = VerifierKey::of(rec.name, pk).to_string();
    std::string line = rec.name + "  roles=" + nlohmann::json(roles).dump() +
                       "  scope=" + nlohmann::json(rec.scope).dump() +
                       "  granted@" + std::to_string(rec.granted_at);
    if (rec.revoked_at) {
      line += std::string("  revoked@") + std::to_string(*rec.revoked_at) + " (" +
              revoke_reason_name(rec.revoke_reason) + ")";
    }
    if (rec.void_from) line += "  void-from@" + std::to_string(*rec.void_from);
    std::printf("%s\n  %s\n", visible_text(line).c_str(), visible_text(vkey).c_str());
  }
  return kExitOk;
}

int run(const Args& args) {
  if (args.positional().empty()) return fail(usage_error("key needs new, grant, revoke or list"));
  const std::string& sub = args.positional()[0];
  if (sub != "new" && args.positional().size() != 1) {
    return fail(usage_error("unexpected argument '" + args.positional()[1] + "'"));
  }
  if (sub == "new") return run_new(args);
  if (sub == "grant") return run_grant(args);
  if (sub == "revoke") return run_revoke(args);
  if (sub == "list") return run_list(args);
  return fail(usage_error("unknown key subcommand '" + sub + "'; see evledger key --help"));
}

}  // namespace

int cmd_key(const std::vector<std::string>& argv) {
  static const std::string usage = std::string(kUsage) + "\n" + kDestinationHelp;
  return run_command(argv,
                     with_destination_options({{"out"}, {"key"}, {"role", true, true},
                                               {"scope", true, true}, {"signer"}, {"reason"},
                                               {"void-from"}, {"json", false},
                                               {"cosigner", false}}),
                     usage.c_str(), run);
}

}  // namespace evl::cli
