// The corruption suite: byte flips in every page type of a real ledger's LMDB file (meta,
// branch, leaf, overflow, free-list database, free pages), each followed by `evledger verify`
// and `evledger rebuild --check`, each in a child process so that a crash is counted instead
// of ending the suite. What must never happen: a crash, an exit other than 0 or 1, or a command
// that passes while what it checks differs from the ledger as it was written. A flip into bytes
// nobody reads (a free page, padding, a meta page's unused tail) may pass: those are counted.
#include <fcntl.h>
#include <lmdb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ledger/audit.h"
#include "ledger/internal/lmdb_check.h"
#include "projections/ledger_hook.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"
#include "tools/commands.h"

namespace evl {
namespace {

using lmdb_check::PageKind;
using test::TempDir;

// A ledger with the page types of a real one: observations (values inside leaves),
// attestations of ~2 KiB about them (a value on an overflow page each, and in the run views),
// branch pages in the bigger databases, and free-list records from the commits.
void build_ledger(const TempDir& dir, int commits) {
  OpenOptions options;
  options.create = true;
  options.hook = make_projection_hook();
  auto ledger = test::open_test_ledger(dir, options);
  test::Cast cast;
  test::append_all(*ledger, cast.prologue_entries());
  const std::string long_text(1900, 'r');
  for (int commit = 0; commit < commits; ++commit) {
    std::vector<Bytes> batch;
    for (int i = 0; i < 30; ++i) {
      const std::string n = std::to_string(commit * 30 + i);
      batch.push_back(test::signed_entry(cast.importer,
                                         test::observation_body(cast.importer, "gpumode", n)));
      batch.push_back(test::signed_entry(
          cast.attestor,
          test::attestation_body(cast.attestor, sha256(as_bytes(test::run_manifest_text("gpumode", n))),
                                 AttestationType::kReproduced, long_text + n)));
    }
    test::append_all(*ledger, std::move(batch));
  }
}

std::string data_file(const TempDir& dir) { return dir.str() + "/db/data.mdb"; }

ByteView lmdb_view(const MDB_val& v) {
  return ByteView(static_cast<const uint8_t*>(v.mv_data), v.mv_size);
}

// SHA-256 of every record of every database, by name, read with LMDB itself: what the ledger
// holds, to compare a damaged file that passed with the file as written.
std::map<std::string, Digest> database_digests(const std::string& dir) {
  std::map<std::string, Digest> out;
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_maxdbs(env, 32);
  mdb_env_set_mapsize(env, 64ull << 30);
  MDB_txn* txn = nullptr;
  if (mdb_env_open(env, (dir + "/db").c_str(), MDB_RDONLY | MDB_NOTLS, 0644) != 0 ||
      mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != 0) {
    mdb_env_close(env);
    return out;
  }
  MDB_dbi main_db;
  mdb_dbi_open(txn, nullptr, 0, &main_db);
  std::vector<std::string> names;
  MDB_cursor* cursor = nullptr;
  mdb_cursor_open(txn, main_db, &cursor);
  MDB_val k, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    names.emplace_back(static_cast<const char*>(k.mv_data), k.mv_size);
  }
  mdb_cursor_close(cursor);
  mdb_txn_abort(txn);
  // A transaction per database: LMDB fails every later read of a transaction that met a
  // damaged page, and a database that cannot be read whole is a changed one.
  for (const auto& name : names) {
    MDB_dbi dbi;
    if (mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != 0) break;
    Sha256 hash;
    int rc = mdb_dbi_open(txn, name.c_str(), 0, &dbi);
    if (rc == 0) rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc == 0) {
      for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
           rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        hash.update(std::to_string(k.mv_size) + ":" + std::to_string(v.mv_size) + ":");
        hash.update(lmdb_view(k)).update(lmdb_view(v));
      }
      mdb_cursor_close(cursor);
    }
    if (rc != MDB_NOTFOUND) hash.update("unreadable: " + std::to_string(rc));
    out[name] = hash.finish();
    mdb_txn_abort(txn);
  }
  mdb_env_close(env);
  return out;
}

// One command on the damaged file, as a child process saw it.
struct Outcome {
  int signal = 0;                  // the signal that ended it, or 0
  int exit = 0;                    // its exit code (when no signal)
  std::string message;             // its standard error
  std::set<std::string> changed;   // databases that differ from the ledger as written (exit 0)
};

// Starts `command` in a child process whose standard output is dropped and standard error goes
// to `log`. On exit 0 the child compares every database with `written` and notes the ones
// that differ in `log`, after a line "--changed".
pid_t start(const std::function<int()>& command, const std::string& dir,
            const std::map<std::string, Digest>& written, const std::string& log) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  int null = ::open("/dev/null", O_WRONLY);
  int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(null, 1);
  ::dup2(err, 2);
  int code = command();
  if (code == 0) {
    auto now = database_digests(dir);
    std::fprintf(stderr, "--changed\n");
    for (const auto& [name, digest] : written) {
      auto it = now.find(name);
      if (it == now.end() || it->second != digest) std::fprintf(stderr, "%s\n", name.c_str());
    }
    if (now.size() != written.size()) std::fprintf(stderr, "(the set of databases)\n");
  }
  std::fflush(nullptr);
  ::_exit(code);
}

Outcome finish(pid_t pid, const std::string& log) {
  Outcome out;
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  else out.exit = WEXITSTATUS(status);
  std::string text = test::read_file(log);
  size_t changed = text.find("--changed\n");
  out.message = text.substr(0, changed);
  if (changed != std::string::npos) {
    std::string rest = text.substr(changed + 10);
    for (size_t at = 0, end; (end = rest.find('\n', at)) != std::string::npos; at = end + 1) {
      out.changed.insert(rest.substr(at, end - at));
    }
  }
  return out;
}

// The databases each command vouches for when it passes. rebuild --check folds the entries
// but checks no signature (verify does): a changed byte that the projections do not show
// (a signature, a claimed time) is not its to find.
const std::set<std::string> kVerifyChecks = {"entries", "ids", "tree", "checkpoints"};
const std::set<std::string> kRebuildCheckChecks = {"statements", "projections"};

struct Tally {
  int cases = 0, by_structure = 0, by_content = 0, passed_same = 0, passed_other = 0, missed = 0,
      bad_exit = 0, crashes = 0;
  void add(const Outcome& o, const std::set<std::string>& vouched) {
    ++cases;
    if (o.signal != 0) {
      ++crashes;
    } else if (o.exit == 1) {
      ++(o.message.find("is damaged at page") != std::string::npos ? by_structure : by_content);
    } else if (o.exit != 0) {
      ++bad_exit;
    } else {
      bool vouched_changed = false;
      for (const auto& name : o.changed) vouched_changed |= vouched.count(name) > 0;
      ++(vouched_changed ? missed : o.changed.empty() ? passed_same : passed_other);
    }
  }
  std::string text() const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%5d cases: %4d damaged (structure), %4d failed (content), %4d passed "
                  "(same data), %3d passed (unchecked data changed), %d missed, %d bad exits, %d "
                  "crashes",
                  cases, by_structure, by_content, passed_same, passed_other, missed, bad_exit,
                  crashes);
    return buf;
  }
};

const char* kind_name(PageKind kind) {
  switch (kind) {
    case PageKind::kMeta: return "meta";
    case PageKind::kBranch: return "branch";
    case PageKind::kLeaf: return "leaf";
    case PageKind::kOverflow:
    case PageKind::kOverflowMore: return "overflow";
    case PageKind::kFreeDb: return "free-list db";
    case PageKind::kFree: return "free page";
  }
  return "?";
}

// Where to flip inside a page of `kind` (whose bytes are `page`): mostly where LMDB reads, the
// header, the node offsets and the nodes, sometimes anywhere.
uint32_t pick_offset(std::mt19937_64& rng, PageKind kind, const uint8_t* page, uint32_t psize) {
  auto in = [&](uint32_t from, uint32_t to) {
    return to <= from ? from : std::uniform_int_distribution<uint32_t>(from, to - 1)(rng);
  };
  const uint32_t roll = in(0, 100);
  if (kind == PageKind::kMeta) return roll < 30 ? in(0, 16) : roll < 90 ? in(16, 152) : in(0, psize);
  if (kind == PageKind::kBranch || kind == PageKind::kLeaf || kind == PageKind::kFreeDb) {
    uint16_t lower, upper;
    std::memcpy(&lower, page + 12, 2);
    std::memcpy(&upper, page + 14, 2);
    lower = std::min<uint32_t>(lower, psize);
    upper = std::min<uint32_t>(upper, psize);
    return roll < 35 ? in(0, 16) : roll < 60 ? in(16, lower) : roll < 95 ? in(upper, psize)
                                                                        : in(0, psize);
  }
  if (kind == PageKind::kOverflow) return roll < 50 ? in(0, 16) : in(16, psize);
  return in(0, psize);
}

void write_at(const std::string& path, uint64_t offset, ByteView bytes) {
  int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

int env_number(const char* name, int otherwise) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : otherwise;
}

int verify_command(const std::string& dir) {
  return cli::cmd_verify({"--ledger", dir, "--threads", "1"});
}
int rebuild_check_command(const std::string& dir) {
  return cli::cmd_rebuild({"--ledger", dir, "--check"});
}

TEST_CASE("byte flips in every page type of a ledger's file never crash verify or rebuild "
          "--check, and never pass with changed entries, tree or checkpoints",
          "[ledger][corruption]") {
  // CI's size; EVL_CORRUPTION_CASES and EVL_CORRUPTION_COMMITS (60 entries each) make a
  // longer run on a bigger ledger.
  const int cases = env_number("EVL_CORRUPTION_CASES", 1200);
  const int commits = env_number("EVL_CORRUPTION_COMMITS", 8);
  constexpr uint64_t kSeed = 20241201;
  TempDir dir;
  build_ledger(dir, commits);
  const std::string path = data_file(dir);
  const Bytes written = [&] {
    std::string s = test::read_file(path);
    return Bytes(s.begin(), s.end());
  }();
  const auto written_digests = database_digests(dir.str());
  std::map<PageKind, std::vector<uint64_t>> pages;
  auto summary = lmdb_check::check_file(path, [&](uint64_t pgno, PageKind kind) {
    pages[kind == PageKind::kOverflowMore ? PageKind::kOverflow : kind].push_back(pgno);
  });
  REQUIRE_OK(summary);
  const uint32_t psize = summary->page_size;
  const std::vector<PageKind> kinds = {PageKind::kMeta,     PageKind::kBranch,
                                       PageKind::kLeaf,     PageKind::kOverflow,
                                       PageKind::kFreeDb,   PageKind::kFree};
  for (PageKind kind : kinds) {
    INFO(kind_name(kind));
    REQUIRE(!pages[kind].empty());
  }

  std::mt19937_64 rng(kSeed);
  std::map<PageKind, std::pair<Tally, Tally>> tallies;
  Tally verify_all, check_all;
  std::vector<std::string> failures;
  const std::string verify_log = dir.str() + "/verify.log", check_log = dir.str() + "/check.log";
  for (int c = 0; c < cases; ++c) {
    const PageKind kind = kinds[c % kinds.size()];
    const auto& of_kind = pages[kind];
    const uint64_t pgno = of_kind[std::uniform_int_distribution<size_t>(0, of_kind.size() - 1)(rng)];
    const uint8_t* page = written.data() + pgno * psize;
    const uint32_t at = pick_offset(rng, kind, page, psize);
    const uint32_t length = std::min<uint32_t>(
        psize - at, std::uniform_int_distribution<uint32_t>(0, 3)(rng) == 0 ? 4 : 1);
    Bytes flipped(page + at, page + at + length);
    for (auto& b : flipped) b ^= static_cast<uint8_t>(std::uniform_int_distribution<int>(1, 255)(rng));
    const uint64_t offset = pgno * psize + at;
    write_at(path, offset, flipped);
    pid_t v = start([&] { return verify_command(dir.str()); }, dir.str(), written_digests, verify_log);
    pid_t r = start([&] { return rebuild_check_command(dir.str()); }, dir.str(), written_digests,
                    check_log);
    const Outcome verified = finish(v, verify_log), checked = finish(r, check_log);
    write_at(path, offset, ByteView(written).subspan(offset, length));
    tallies[kind].first.add(verified, kVerifyChecks);
    tallies[kind].second.add(checked, kRebuildCheckChecks);
    verify_all.add(verified, kVerifyChecks);
    check_all.add(checked, kRebuildCheckChecks);
    auto note = [&](const char* command, const Outcome& o, const std::set<std::string>& vouched) {
      bool missed = false;
      for (const auto& name : o.changed) missed |= o.exit == 0 && vouched.count(name) > 0;
      if (o.signal == 0 && (o.exit == 0 || o.exit == 1) && !missed) return;
      std::string changed;
      for (const auto& name : o.changed) changed += " " + name;
      failures.push_back(std::string(command) + ", case " + std::to_string(c) + ", " +
                         kind_name(kind) + " page " + std::to_string(pgno) + " byte " +
                         std::to_string(at) + " (" + std::to_string(length) + "): signal " +
                         std::to_string(o.signal) + ", exit " + std::to_string(o.exit) +
                         ", changed:" + changed + "; " + o.message.substr(0, 300));
    };
    note("verify", verified, kVerifyChecks);
    note("rebuild --check", checked, kRebuildCheckChecks);
  }
  std::printf("corruption suite: %d cases on a ledger of %llu pages of %u bytes (seed %llu)\n",
              cases, static_cast<unsigned long long>(summary->pages), psize,
              static_cast<unsigned long long>(kSeed));
  for (PageKind kind : kinds) {
    std::printf("  %-13s verify          %s\n", kind_name(kind), tallies[kind].first.text().c_str());
    std::printf("  %-13s rebuild --check %s\n", "", tallies[kind].second.text().c_str());
  }
  std::printf("  all           verify          %s\n", verify_all.text().c_str());
  std::printf("  all           rebuild --check %s\n", check_all.text().c_str());
  for (size_t i = 0; i < failures.size() && i < 20; ++i) std::printf("  FAILED %s\n", failures[i].c_str());
  std::fflush(stdout);
  CHECK(test::read_file(path) == std::string(written.begin(), written.end()));
  CHECK(failures.empty());
  CHECK(verify_all.crashes + check_all.crashes == 0);
}

TEST_CASE("the structure check passes a ledger as written and finds each page one kind",
          "[ledger][corruption]") {
  TempDir dir;
  build_ledger(dir, 3);
  std::map<PageKind, int> kinds;
  uint64_t next = 0;
  auto summary = lmdb_check::check_file(data_file(dir), [&](uint64_t pgno, PageKind kind) {
    CHECK(pgno == next++);
    kinds[kind]++;
  });
  REQUIRE_OK(summary);
  CHECK(next == summary->pages);
  CHECK(kinds[PageKind::kMeta] == 2);
  CHECK(kinds[PageKind::kLeaf] > 0);
  CHECK(kinds[PageKind::kOverflow] > 0);
  CHECK(kinds[PageKind::kFreeDb] > 0);
  CHECK(check_ledger_storage(dir.str()).is_ok());
}

TEST_CASE("a truncated database file fails verify and rebuild --check, saying so",
          "[ledger][corruption]") {
  TempDir dir;
  build_ledger(dir, 3);
  const auto size = std::filesystem::file_size(data_file(dir));
  std::filesystem::resize_file(data_file(dir), size - 3 * 4096);
  for (const auto& command : {verify_command, rebuild_check_command}) {
    const std::string log = dir.str() + "/command.log";
    Outcome o = finish(start([&] { return command(dir.str()); }, dir.str(), {}, log), log);
    INFO(o.message);
    CHECK(o.signal == 0);
    CHECK(o.exit == 1);
    CHECK(o.message.find("is damaged at page") != std::string::npos);
    CHECK(o.message.find("it was truncated") != std::string::npos);
  }
}

TEST_CASE("a damaged transaction id that would make LMDB read the commit before the last is "
          "caught in either meta page",
          "[ledger][corruption]") {
  TempDir dir;
  build_ledger(dir, 3);
  const std::string path = data_file(dir);
  const std::string file = test::read_file(path);
  constexpr uint32_t kTxnIdAt = 16 + 128;
  auto txnid = [&](int page) {
    uint64_t id;
    std::memcpy(&id, file.data() + page * 4096 + kTxnIdAt, 8);
    return id;
  };
  const int newer = txnid(1) > txnid(0) ? 1 : 0;
  const uint64_t last = txnid(newer);
  // Either way the two pages still look like consecutive commits, the newer in its page: the
  // free lists (or the pages each counts) show that the state LMDB would pick is not the last
  // one committed.
  const int page = GENERATE(0, 1);
  const uint64_t id = page == newer ? last - 2 : last + 1;
  uint8_t bytes[8];
  std::memcpy(bytes, &id, 8);
  write_at(path, page * 4096 + kTxnIdAt, ByteView(bytes, 8));
  Status s = check_ledger_storage(dir.str());
  INFO(s.message());
  CHECK(s.code() == Code::kCorrupt);
  // Which of two inconsistent meta pages is the damaged one is not always knowable: the
  // message names one and what contradicts it.
  CHECK((s.message().find("damaged at page 0 ") != std::string::npos ||
         s.message().find("damaged at page 1 ") != std::string::npos));
  CHECK((s.message().find("free list's newest record") != std::string::npos ||
         s.message().find("the older meta page gives last page") != std::string::npos));
}

}  // namespace
}  // namespace evl
