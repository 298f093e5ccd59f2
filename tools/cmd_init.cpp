// evledger init — create a ledger: LMDB environment, log key, first admin key, genesis.
#include <sys/stat.h>

#include <filesystem>

#include "keys/signer.h"
#include "projections/ledger_hook.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger init --ledger DIR --origin ORIGIN [--keys KEYDIR] [--admin-name NAME]\n"
    "                     [--rerun-tolerance 0.05]\n"
    "\n"
    "Creates a ledger in DIR: its LMDB database (DIR/db), a log key named ORIGIN that signs\n"
    "checkpoints and a first admin key (secret key files, mode 0600, in KEYDIR, default\n"
    "DIR/keys: log.key, admin.key and their .vkey verifier keys), and the genesis event at\n"
    "index 0, signed by the admin. Prints the log's verifier key.\n"
    "ORIGIN is the log's C2SP origin line, e.g. ledger.example.org/kernels: no spaces, no '+'.\n";

Status write_vkey(const std::string& path, const VerifierKey& key) {
  return write_output(path, key.to_string() + "\n");
}

int run(const Args& args) {
  auto dir = args.require("ledger");
  auto origin = args.require("origin");
  if (!dir) return fail(dir.error());
  if (!origin) return fail(origin.error());
  if (Status s = check_key_name(*origin); !s) return fail(usage_error("--origin: " + s.message()));
  std::string key_dir = args.get("keys").value_or(*dir + "/keys");
  std::string admin_name = args.get("admin-name").value_or(*origin + "/admin");
  if (Status s = check_key_name(admin_name); !s) {
    return fail(usage_error("--admin-name: " + s.message()));
  }
  uint32_t tolerance = 50;
  if (auto t = args.get("rerun-tolerance")) {
    char* end = nullptr;
    double v = std::strtod(t->c_str(), &end);
    if (end == t->c_str() || *end != '\0' || !(v >= 0 && v < 1)) {
      return fail(usage_error("--rerun-tolerance must be a fraction in [0, 1), e.g. 0.05"));
    }
    tolerance = static_cast<uint32_t>(v * 1000 + 0.5);
  }
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(*dir) / "db", ec)) {
    return fail(rejected("a ledger exists at " + *dir + " already; init never overwrites one"));
  }
  const std::string log_path = key_dir + "/log.key";
  const std::string admin_path = key_dir + "/admin.key";
  if (std::filesystem::exists(log_path, ec) || std::filesystem::exists(admin_path, ec)) {
    return fail(rejected("key files exist in " + key_dir + " already; choose another --keys"));
  }
  std::filesystem::create_directories(key_dir, ec);
  if (ec) return fail(io_error("cannot create " + key_dir + ": " + ec.message()));
  ::chmod(key_dir.c_str(), 0700);

  auto log_key = SecretKey::generate(*origin);
  auto admin = SecretKey::generate(admin_name);
  if (!log_key) return fail(log_key.error());
  if (!admin) return fail(admin.error());
  for (auto [key, path] : {std::pair{&*log_key, log_path}, std::pair{&*admin, admin_path}}) {
    if (Status s = key->save(path); !s) return fail(s);
    if (Status s = write_vkey(path.substr(0, path.size() - 4) + ".vkey", key->verifier()); !s) {
      return fail(s);
    }
  }

  OpenOptions options;
  options.dir = *dir;
  options.create = true;
  options.log_key_path = log_path;
  options.hook = make_projection_hook();  // the genesis commit is folded and stated too
  auto ledger = Ledger::open(options);
  if (!ledger) return fail(ledger.error());
  Genesis genesis;
  genesis.origin = *origin;
  genesis.log_key = log_key->public_key();
  genesis.admins.push_back({admin->public_key(), admin->name()});
  genesis.rerun_tolerance_milli = tolerance;
  EventBody body;
  body.payload = genesis;
  std::fprintf(stderr, "created %s with keys in %s\n", dir->c_str(), key_dir.c_str());
  if (int rc = append_one(**ledger, *admin, body, "genesis"); rc != kExitOk) return rc;
  std::printf("%s\n", log_key->verifier().to_string().c_str());
  return kExitOk;
}

}  // namespace

int cmd_init(const std::vector<std::string>& argv) {
  return run_command(argv,
                     {{"ledger"}, {"origin"}, {"keys"}, {"admin-name"}, {"rerun-tolerance"}},
                     kUsage, run);
}

}  // namespace evl::cli
