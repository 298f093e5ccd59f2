// evledger init — create a ledger: LMDB environment, log key, first admin key, genesis.
//
// All or nothing: the ledger is built in a hidden sibling directory (keys, database, the
// genesis committed and folded), made durable, and renamed into place, so that a failure at
// any step (a full disk, say) leaves nothing behind and the next init starts afresh. Key files
// that go to another --keys directory are written there under temporary names and linked to
// their own only once the ledger is complete; a link never replaces a file.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "events/file_write.h"
#include "keys/signer.h"
#include "projections/ledger_hook.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: evledger init --ledger DIR --origin ORIGIN [--keys KEYDIR] [--admin-name NAME]\n"
    "                     [--rerun-tolerance 0.05]\n"
    "\n"
    "Creates a ledger in DIR: its LMDB database (DIR/db), a log key named ORIGIN that signs\n"
    "checkpoints and a first admin key (secret key files, mode 0600, in KEYDIR, default\n"
    "DIR/keys: log.key, admin.key and their .vkey verifier keys), and the genesis event at\n"
    "index 0, signed by the admin. Prints the log's verifier key.\n"
    "ORIGIN is the log's C2SP origin line, e.g. ledger.example.org/kernels: no spaces, no '+'\n"
    "or control characters, and short enough for the genesis, which holds it and the admin's\n"
    "name (NAME, default ORIGIN/admin), to fit an entry (65,535 bytes).\n"
    "DIR must not exist or be empty. Init creates the whole ledger or, when a step fails,\n"
    "nothing: it builds DIR beside it and renames it into place once the genesis is durable.\n";

// What init makes outside the tree it builds in: removed again unless published, except the
// temporaries, which go either way. The tree is removed unless it was renamed away, and the
// directories init created (DIR's parents, --keys) unless published, deepest first, if empty.
class Staging {
 public:
  ~Staging() {
    std::error_code ec;
    for (const auto& path : temporaries_) fs::remove(path, ec);
    if (published_) return;
    for (const auto& path : created_) fs::remove(path, ec);
    if (!tree_.empty()) fs::remove_all(tree_, ec);
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) fs::remove(*it, ec);
  }
  void add_temporary(std::string path) { temporaries_.push_back(std::move(path)); }
  void add_created(std::string path) { created_.push_back(std::move(path)); }
  void add_created_dir(std::string dir) { dirs_.push_back(std::move(dir)); }
  void set_tree(std::string dir) { tree_ = std::move(dir); }
  void publish() { published_ = true; }

 private:
  std::vector<std::string> temporaries_, created_, dirs_;
  std::string tree_;
  bool published_ = false;
};

std::string errno_text() { return std::strerror(errno); }

// Creates `dir` and its missing parents, recording the new ones in `staging`.
Status make_directories(const fs::path& dir, Staging& staging) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) == 0) {
      staging.add_created_dir(it->string());
    } else if (errno != EEXIST) {
      return io_error("cannot create " + it->string() + ": " + errno_text());
    }
  }
  return Status::ok();
}

// The genesis, signed by the first admin.
Result<Bytes> signed_genesis(const SecretKey& admin, const SecretKey& log_key,
                             const std::string& origin, const std::string& admin_name,
                             uint32_t tolerance) {
  Genesis genesis;
  genesis.origin = origin;
  genesis.log_key = log_key.public_key();
  genesis.admins.push_back({admin.public_key(), admin_name});
  genesis.rerun_tolerance_milli = tolerance;
  EventBody body;
  body.payload = genesis;
  body.author = admin.public_key();
  body.claimed_time_ms = now_ms();
  return sign_event(admin, body);
}

// kUsage, with the longest origin that fits, when the genesis would exceed an entry.
Status check_genesis_fits(const SecretKey& admin, const SecretKey& log_key,
                          const std::string& origin, const std::optional<std::string>& admin_name,
                          uint32_t tolerance) {
  const auto fits = [&](const std::string& o) {
    return signed_genesis(admin, log_key, o, admin_name.value_or(o + "/admin"), tolerance)
        .has_value();
  };
  if (fits(origin)) return Status::ok();
  size_t low = 0, high = origin.size();  // fits(low bytes) (or low == 0), not fits(high)
  while (high - low > 1) {
    const size_t mid = low + (high - low) / 2;
    (fits(std::string(mid, 'a')) ? low : high) = mid;
  }
  return usage_error(
      "--origin of " + std::to_string(origin.size()) + " bytes and the admin name of " +
      std::to_string(admin_name ? admin_name->size() : origin.size() + 6) +
      " bytes make a genesis larger than an entry may be (" + std::to_string(kMaxEntryBytes) +
      " bytes): " +
      (low == 0 ? std::string("shorten --admin-name")
                : "with this admin name an origin takes at most " + std::to_string(low) +
                      " bytes") +
      "; an origin names the log, like ledger.example.org/kernels");
}

// The directories in `dir` that the new ledger replaces: none when it is absent; its empty
// subdirectories (an empty db/ left by an older evledger's failed init, say) when it holds
// nothing else. kRejected when it holds anything: init loses nothing.
Result<std::vector<fs::path>> empty_subdirectories(const fs::path& dir, const std::string& named) {
  std::error_code ec;
  std::vector<fs::path> empty_dirs;
  if (!fs::exists(dir, ec)) return empty_dirs;
  if (!fs::is_directory(dir, ec)) {
    return rejected(named + " exists and is not a directory; name a new directory");
  }
  if (fs::exists(dir / "db", ec) && !fs::is_empty(dir / "db", ec)) {
    return rejected("a ledger exists at " + named + " already; init never overwrites one");
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && fs::is_empty(entry.path(), ec)) {
      empty_dirs.push_back(entry.path());
      continue;
    }
    return rejected(named + " is not empty (it holds " + entry.path().filename().string() +
                    "); init creates the ledger in a new or empty directory");
  }
  if (ec) return io_error("cannot read " + named + ": " + ec.message());
  return empty_dirs;
}

struct KeyFiles {
  std::string dir;             // where the key files end up
  std::string staged_dir;      // where they are written first
  std::string suffix;          // of their staged names ("" when staged_dir is in the tree)
};

// Writes log.key, admin.key and their .vkey files, staged.
Status write_keys(const KeyFiles& keys, const SecretKey& log_key, const SecretKey& admin,
                  Staging& staging) {
  for (auto [key, base] : {std::pair{&log_key, "log"}, std::pair{&admin, "admin"}}) {
    const std::string secret = keys.staged_dir + "/" + base + ".key" + keys.suffix;
    const std::string vkey = keys.staged_dir + "/" + base + ".vkey" + keys.suffix;
    if (!keys.suffix.empty()) staging.add_temporary(secret);
    EVL_RETURN_IF_ERROR(key->save(secret));
    if (!keys.suffix.empty()) staging.add_temporary(vkey);
    EVL_RETURN_IF_ERROR(create_file(vkey, key->verifier().to_string() + "\n", 0644));
  }
  return sync_path(keys.staged_dir);
}

// Links staged key files to their names in another key directory (a link never replaces).
Status publish_keys(const KeyFiles& keys, Staging& staging) {
  if (keys.suffix.empty()) return Status::ok();
  for (const char* name : {"log.key", "log.vkey", "admin.key", "admin.vkey"}) {
    const std::string final_path = keys.dir + "/" + name;
    if (::link((final_path + keys.suffix).c_str(), final_path.c_str()) != 0) {
      return io_error("cannot create " + final_path + ": " + errno_text() +
                      (errno == EEXIST ? " (refusing to overwrite a key)" : ""));
    }
    staging.add_created(final_path);
  }
  return sync_path(keys.dir);
}

// Creates the ledger in `tree` with the genesis, and makes it durable.
Status build_ledger(const std::string& tree, std::shared_ptr<const SecretKey> log_key,
                    const Bytes& genesis) {
  OpenOptions options;
  options.dir = tree;
  options.create = true;
  options.log_key = std::move(log_key);
  options.hook = make_projection_hook();  // the genesis commit is folded and stated too
  auto ledger = Ledger::open(options);
  if (!ledger) return ledger.error();
  const AppendOutcome o = (*ledger)->append(std::vector<Bytes>{genesis}).at(0);
  if (!o.status) {
    return o.status.with_context(o.commit_failed ? "genesis not stored" : "genesis rejected");
  }
  ledger->reset();  // closes the environment; the commit synced its data file
  EVL_RETURN_IF_ERROR(sync_path(tree + "/db"));
  return sync_path(tree);
}

Result<uint32_t> tolerance_option(const Args& args) {
  auto t = args.get("rerun-tolerance");
  if (!t) return 50u;
  char* end = nullptr;
  double v = std::strtod(t->c_str(), &end);
  if (end == t->c_str() || *end != '\0' || !(v >= 0 && v < 1)) {
    return usage_error("--rerun-tolerance must be a fraction in [0, 1), e.g. 0.05");
  }
  return static_cast<uint32_t>(v * 1000 + 0.5);
}

// What init writes, made and checked before anything is written.
struct Prepared {
  std::shared_ptr<const SecretKey> log_key;
  std::optional<SecretKey> admin;
  Bytes genesis;
};

// The keys and the signed genesis for --origin and --admin-name, or kUsage when the names
// break C2SP's rules for a key name or the genesis would not fit an entry.
Result<Prepared> prepare(const Args& args, const std::string& origin) {
  if (Status s = check_key_name(origin); !s) return usage_error("--origin: " + s.message());
  const auto admin_option = args.get("admin-name");
  const std::string admin_name = admin_option.value_or(origin + "/admin");
  if (Status s = check_key_name(admin_name); !s) {
    return usage_error("--admin-name: " + s.message());
  }
  auto tolerance = tolerance_option(args);
  if (!tolerance) return tolerance.error();
  auto log_key = SecretKey::generate(origin);
  auto admin = SecretKey::generate(admin_name);
  if (!log_key) return log_key.error();
  if (!admin) return admin.error();
  EVL_RETURN_IF_ERROR(check_genesis_fits(*admin, *log_key, origin, admin_option, *tolerance));
  auto genesis = signed_genesis(*admin, *log_key, origin, admin_name, *tolerance);
  if (!genesis) return genesis.error();
  return Prepared{std::make_shared<const SecretKey>(std::move(*log_key)), std::move(*admin),
                  std::move(*genesis)};
}

// Makes the hidden directory beside `dir` that the ledger is built in, with the mode mkdir
// would give DIR (mkdtemp makes it 0700).
Result<std::string> make_build_dir(const fs::path& dir, Staging& staging) {
  std::string tree = (dir.parent_path() / ("." + dir.filename().string() + ".init-XXXXXX")).string();
  if (::mkdtemp(tree.data()) == nullptr) {
    return io_error("cannot create a directory beside " + dir.string() + " to build the "
                    "ledger in: " + errno_text());
  }
  staging.set_tree(tree);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tree.c_str(), 0777 & ~mask);
  return tree;
}

// Sets where the key files are written first: the tree's keys/ for the default key directory,
// else --keys itself (made, mode 0700, when absent) under names unique to this init.
Status stage_key_dir(KeyFiles& keys, bool default_keys, const std::string& tree,
                     Staging& staging) {
  if (default_keys) {
    keys.staged_dir = tree + "/keys";
    if (::mkdir(keys.staged_dir.c_str(), 0700) != 0) {
      return io_error("cannot create " + keys.staged_dir + ": " + errno_text());
    }
    return Status::ok();
  }
  std::error_code ec;
  const bool existed = fs::exists(keys.dir, ec);
  EVL_RETURN_IF_ERROR(make_directories(keys.dir, staging));
  if (!existed) ::chmod(keys.dir.c_str(), 0700);
  keys.staged_dir = keys.dir;
  keys.suffix = tree.substr(tree.size() - 12);  // ".init-XXXXXX"
  return Status::ok();
}

// Renames the built ledger onto `dir`, which is absent or holds only the empty directories
// `replaced` (rename replaces only an empty directory), and makes the rename durable.
Status move_into_place(const std::string& tree, const fs::path& dir,
                       const std::vector<fs::path>& replaced, Staging& staging) {
  std::error_code ec;
  for (const auto& d : replaced) fs::remove(d, ec);
  if (::rename(tree.c_str(), dir.c_str()) != 0) {
    return io_error("cannot move the new ledger to " + dir.string() + ": " + errno_text() +
                    (errno == ENOTEMPTY || errno == EEXIST
                         ? " (something was created there meanwhile; init changes nothing)"
                         : ""));
  }
  staging.publish();
  return sync_path(dir.parent_path().string());
}

int run(const Args& args) {
  auto dir_arg = args.require("ledger");
  auto origin = args.require("origin");
  if (!dir_arg) return fail(dir_arg.error());
  if (!origin) return fail(origin.error());
  auto prepared = prepare(args, *origin);
  if (!prepared) return fail(prepared.error());

  fs::path dir = fs::absolute(*dir_arg).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "L/"
  const bool default_keys = !args.has("keys");
  KeyFiles keys;
  keys.dir = default_keys ? *dir_arg + "/keys" : *args.get("keys");
  std::error_code ec;
  if (!default_keys && (fs::exists(keys.dir + "/log.key", ec) ||
                        fs::exists(keys.dir + "/admin.key", ec))) {
    return fail(rejected("key files exist in " + keys.dir + " already; choose another --keys"));
  }
  auto replaced = empty_subdirectories(dir, *dir_arg);
  if (!replaced) return fail(replaced.error());

  Staging staging;  // from here on, a failure removes what was made
  if (Status s = make_directories(dir.parent_path(), staging); !s) return fail(s);
  auto tree = make_build_dir(dir, staging);
  if (!tree) return fail(tree.error());
  Status built = stage_key_dir(keys, default_keys, *tree, staging);
  if (built) built = write_keys(keys, *prepared->log_key, *prepared->admin, staging);
  if (built) built = build_ledger(*tree, prepared->log_key, prepared->genesis);
  if (built) built = publish_keys(keys, staging);
  if (built) built = move_into_place(*tree, dir, *replaced, staging);
  if (!built) return fail(built);
  std::fprintf(stderr, "created %s with keys in %s\n", dir_arg->c_str(), keys.dir.c_str());
  std::printf("%s\n", prepared->log_key->verifier().to_string().c_str());
  return kExitOk;
}

}  // namespace

int cmd_init(const std::vector<std::string>& argv) {
  return run_command(argv,
                     {{"ledger"}, {"origin"}, {"keys"}, {"admin-name"}, {"rerun-tolerance"}},
                     kUsage, run);
}

}  // namespace evl::cli
