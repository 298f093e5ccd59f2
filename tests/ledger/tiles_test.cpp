#include "ledger/tiles.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "keys/checkpoint.h"
#include "ledger/http_fetch.h"
#include "ledger/tile_path.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"

namespace evl {
namespace {

namespace fs = std::filesystem;
using test::Cast;
using test::TempDir;

std::unique_ptr<Ledger> open_ledger(const TempDir& dir, bool create = true) {
  OpenOptions options;
  options.create = create;
  return test::open_test_ledger(dir, options);
}

// Appends observations numbered [from, to) in one commit (one checkpoint).
void append_observations(Ledger& ledger, const Cast& cast, int from, int to) {
  std::vector<Bytes> batch;
  for (int i = from; i < to; ++i) {
    batch.push_back(test::signed_entry(
        cast.importer, test::observation_body(cast.importer, "gpumode", std::to_string(i))));
  }
  for (const auto& o : ledger.append(batch)) REQUIRE(o.status.is_ok());
}

// The prologue (5 entries) and `observations` observations.
std::unique_ptr<Ledger> build_ledger(const TempDir& dir, const Cast& cast, int observations) {
  auto ledger = open_ledger(dir);
  for (const auto& o : ledger->append(cast.prologue_entries())) REQUIRE(o.status.is_ok());
  append_observations(*ledger, cast, 0, observations);
  return ledger;
}

ExportReport export_ok(const Ledger& ledger, const fs::path& out) {
  auto report = export_tiles(ledger, out.string());
  if (!report) FAIL("export failed: " << report.error().message());
  return report.value();
}

std::string file_bytes(const fs::path& path) { return test::read_file(path); }

void write_bytes(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

void flip_byte(const fs::path& path, size_t offset) {
  std::string data = file_bytes(path);
  REQUIRE(offset < data.size());
  data[offset] = static_cast<char>(data[offset] ^ 0x01);
  write_bytes(path, data);
}

// Every regular file under `root`, relative, skipping nothing.
std::set<std::string> files_under(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), root).string());
  }
  return out;
}

std::string expected_tile(const Ledger& ledger, const HashTile& tile) {
  std::string data;
  REQUIRE(ledger.read_tree([&](const HashReader& hashes, uint64_t) -> Status {
    auto read = hashes.read_hashes(tile_stored_hash_indexes(tile));
    if (!read) return read.error();
    for (const Hash& h : *read) data.append(as_chars(h));
    return Status::ok();
  }));
  return data;
}

std::string expected_bundle(const Ledger& ledger, const EntryBundle& bundle) {
  std::string data;
  for (uint64_t i = bundle.n * 256; i < bundle.n * 256 + bundle.width; ++i) {
    Bytes entry = ledger.entry(i).value();
    data.push_back(static_cast<char>(entry.size() >> 8));
    data.push_back(static_cast<char>(entry.size() & 0xff));
    data.append(as_chars(entry));
  }
  return data;
}

struct FileStamp {
  ino_t inode;
  int64_t mtime_ns;
  int64_t ctime_ns;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return {st.st_ino, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
}

// Drives a source as the audit does: entries in chunks, then every stored node in stored-hash
// order. Returns the first failure, and counts the nodes a tile held.
Status read_back(AuditSource& source, uint64_t size, uint64_t chunk, uint64_t* compared = nullptr) {
  MemoryHashStore tree;
  for (uint64_t from = 0; from < size; from += chunk) {
    uint64_t to = std::min(size, from + chunk);
    EVL_RETURN_IF_ERROR(source.scan_entries(from, to, [&](uint64_t index, ByteView entry) {
      if (index != tree.size()) return corrupt("out of order");
      tree.append(leaf_hash(entry));
      return Status::ok();
    }));
  }
  if (tree.size() != size) return corrupt("too few entries");
  for (uint64_t i = 0; i < tree.stored_hashes().size(); ++i) {
    TreeNode node = split_stored_hash_index(i);
    // Only complete nodes of the tree of `size` exist in tiles; the stored sequence of a
    // MemoryHashStore of that size holds exactly those.
    EVL_RETURN_IF_ERROR(source.check_node(node.level, node.n, tree.stored_hashes()[i], size));
    if (compared && node.level % 8 == 0) ++*compared;
  }
  return source.finish(size);
}

TEST_CASE("an export holds the checkpoint, every hash tile and every entry bundle of the tree",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 600);  // 605 entries: 2 full bundles and a partial one
  ExportReport report = export_ok(*ledger, out.path());
  CHECK(report.size == 605);
  CHECK(report.previous_size == 0);
  CHECK(report.checkpoint_written);
  CHECK(file_bytes(out.path() / "checkpoint") == ledger->checkpoint().value());

  std::set<std::string> want{"checkpoint"};
  for (const HashTile& tile : hash_tiles(605)) {
    want.insert(hash_tile_path(tile));
    INFO(hash_tile_path(tile));
    CHECK(file_bytes(out.path() / hash_tile_path(tile)) == expected_tile(*ledger, tile));
  }
  for (const EntryBundle& bundle : entry_bundles(605)) {
    want.insert(entry_bundle_path(bundle));
    INFO(entry_bundle_path(bundle));
    CHECK(file_bytes(out.path() / entry_bundle_path(bundle)) == expected_bundle(*ledger, bundle));
  }
  CHECK(files_under(out.path()) == want);  // nothing else, no temporary files left
  CHECK(want.count("tile/0/002.p/93") == 1);
  CHECK(want.count("tile/1/000.p/2") == 1);
  CHECK(want.count("tile/entries/002.p/93") == 1);
  CHECK(report.tiles_written == hash_tiles(605).size());
  CHECK(report.bundles_written == 3);
}

TEST_CASE("re-exporting writes only what is new and never touches a full tile",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 295);  // 300 entries
  export_ok(*ledger, out.path());
  std::map<std::string, FileStamp> before;
  for (const auto& f : files_under(out.path())) before[f] = stamp(out.path() / f);

  append_observations(*ledger, cast, 295, 795);  // 800 entries
  ExportReport report = export_ok(*ledger, out.path());
  CHECK(report.previous_size == 300);
  CHECK(report.size == 800);
  CHECK(report.tiles_written == new_hash_tiles(300, 800).size());
  CHECK(report.bundles_written == new_entry_bundles(300, 800).size());
  for (const auto& [f, st] : before) {
    INFO(f);
    if (f == "checkpoint") continue;
    CHECK(fs::exists(out.path() / f));  // old partial tiles stay for older checkpoints
    CHECK(stamp(out.path() / f) == st);
  }
  std::set<std::string> now = files_under(out.path());
  for (const HashTile& tile : hash_tiles(800)) {
    REQUIRE(now.count(hash_tile_path(tile)) == 1);
    CHECK(file_bytes(out.path() / hash_tile_path(tile)) == expected_tile(*ledger, tile));
  }
  for (const EntryBundle& bundle : entry_bundles(800)) {
    REQUIRE(now.count(entry_bundle_path(bundle)) == 1);
    CHECK(file_bytes(out.path() / entry_bundle_path(bundle)) == expected_bundle(*ledger, bundle));
  }
  CHECK(file_bytes(out.path() / "checkpoint") == ledger->checkpoint().value());

  // Nothing new: nothing is written, not even the checkpoint.
  FileStamp checkpoint_stamp = stamp(out.path() / "checkpoint");
  ExportReport again = export_ok(*ledger, out.path());
  CHECK_FALSE(again.checkpoint_written);
  CHECK(again.tiles_written + again.bundles_written + again.bytes_written == 0);
  CHECK(stamp(out.path() / "checkpoint") == checkpoint_stamp);
}

TEST_CASE("an export left unfinished is completed, keeping the files already right",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 595);  // 600 entries
  export_ok(*ledger, out.path());
  // As if the export had been killed before its checkpoint: the old checkpoint, a damaged
  // unpublished bundle, a correct unpublished tile.
  auto small = ledger->checkpoint(5);
  REQUIRE(small);
  write_bytes(out.path() / "checkpoint", *small);
  flip_byte(out.path() / "tile/entries/001", 10);
  FileStamp kept = stamp(out.path() / "tile/0/000");
  ExportReport report = export_ok(*ledger, out.path());
  CHECK(report.previous_size == 5);
  CHECK(report.files_kept >= 1);
  CHECK(stamp(out.path() / "tile/0/000") == kept);
  CHECK(file_bytes(out.path() / "tile/entries/001") ==
        expected_bundle(*ledger, EntryBundle{1, 256}));
}

TEST_CASE("export refuses a directory that holds another log or a rewritten history",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 20);
  auto real = open_checkpoint(ledger->checkpoint().value(), ledger->log_verifier().value());
  REQUIRE(real);
  fs::create_directories(out.path());

  SECTION("a checkpoint signed by another key") {
    SecretKey other = test::test_key("example.org/other-log", 0x33);
    Checkpoint c{"example.org/other-log", 3, real->root, {}};
    write_bytes(out.path() / "checkpoint", sign_checkpoint(c, other));
    auto r = export_tiles(*ledger, out.str());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Code::kRejected);
    CHECK_THAT(r.error().message(), Catch::Contains("another log"));
  }
  SECTION("this log's key over a different root: rewritten history") {
    Checkpoint c{real->origin, 10, test::test_digest("not the root"), {}};
    write_bytes(out.path() / "checkpoint", sign_checkpoint(c, *test::test_log_key()));
    auto r = export_tiles(*ledger, out.str());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Code::kRejected);
    CHECK_THAT(r.error().message(), Catch::Contains("history was rewritten"));
  }
  SECTION("a checkpoint larger than the ledger") {
    Checkpoint c{real->origin, 1000, real->root, {}};
    write_bytes(out.path() / "checkpoint", sign_checkpoint(c, *test::test_log_key()));
    auto r = export_tiles(*ledger, out.str());
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message(), Catch::Contains("at size 1000"));
  }
  SECTION("garbage") {
    write_bytes(out.path() / "checkpoint", "hello\n");
    auto r = export_tiles(*ledger, out.str());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Code::kRejected);
  }
  CHECK(files_under(out.path()) == std::set<std::string>{"checkpoint"});  // nothing written
}

TEST_CASE("a second export into a directory that is being exported to waits its turn",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 3);
  int fd = ::open(out.str().c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);  // as a running export holds it
  auto r = export_tiles(*ledger, out.str());
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == Code::kIo);
  CHECK_THAT(r.error().message(), Catch::Contains("locked by another export"));
  ::close(fd);
  CHECK(export_tiles(*ledger, (out.path() / "a" / "b").string()));  // parents are created
}

TEST_CASE("a tile source reads back the entries and checks every level-8k node",
          "[ledger][tiles]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 600);
  export_ok(*ledger, out.path());
  auto source = tile_audit_source(out.str() + "/");
  CHECK(source->name() == "tiles " + out.str());
  std::string note;
  REQUIRE(source->scan_checkpoints([&](std::string_view n) {
    note = n;
    return Status::ok();
  }));
  CHECK(note == ledger->checkpoint().value());
  std::vector<Bytes> entries;
  REQUIRE(source->scan_entries(250, 260, [&](uint64_t, ByteView e) {
    entries.emplace_back(e.begin(), e.end());
    return Status::ok();
  }));
  REQUIRE(entries.size() == 10);
  CHECK(entries[0] == ledger->entry(250).value());
  CHECK(entries[9] == ledger->entry(259).value());
  uint64_t compared = 0;
  CHECK(read_back(*source, 605, 100, &compared));
  CHECK(compared == 605 + 2);  // every leaf and the two level-8 nodes
  CHECK(source->scan_entries(600, 606, [](uint64_t, ByteView) { return Status::ok(); }).code() ==
        Code::kUsage);
}

TEST_CASE("a tile source catches a flipped byte in a hash tile or a bundle",
          "[ledger][tiles][tamper]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 600);
  export_ok(*ledger, out.path());
  auto fails_with = [&](const std::string& needle, Code code = Code::kCorrupt) {
    auto source = tile_audit_source(out.str());
    Status s = read_back(*source, 605, 64);
    INFO(s.message());
    CHECK(s.code() == code);
    CHECK_THAT(s.message(), Catch::Contains(needle));
  };
  SECTION("a level-0 hash tile") {
    flip_byte(out.path() / "tile/0/001", 32 * 7 + 3);
    fails_with("tile/0/001 holds");
  }
  SECTION("a level-1 hash tile") {
    flip_byte(out.path() / "tile/1/000.p/2", 40);
    fails_with("tile/1/000.p/2 holds");
  }
  SECTION("the bytes of an entry") {
    flip_byte(out.path() / "tile/entries/001", 100);
    fails_with("tile/0/001 holds");  // its leaf hash no longer matches
  }
  SECTION("a length prefix") {
    flip_byte(out.path() / "tile/entries/002.p/93", 0);
    fails_with("tile/entries/002.p/93");
  }
  SECTION("trailing bytes") {
    write_bytes(out.path() / "tile/entries/000", file_bytes(out.path() / "tile/entries/000") + "x");
    fails_with("trailing bytes");
  }
  SECTION("a short entry") {
    std::string b = file_bytes(out.path() / "tile/entries/001");
    write_bytes(out.path() / "tile/entries/001", b.substr(0, b.size() - 5));
    fails_with("is cut short");
  }
  SECTION("a tile of the wrong length") {
    std::string t = file_bytes(out.path() / "tile/0/000");
    write_bytes(out.path() / "tile/0/000", t.substr(0, 32 * 255));
    fails_with("a tile of width 256 is exactly 8192");
  }
  SECTION("a missing bundle") {
    fs::remove(out.path() / "tile/entries/001");
    fails_with("tile/entries/001 is missing");
  }
}

TEST_CASE("the audit verifies an export from its tiles alone and names what was tampered",
          "[ledger][tiles][audit]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 600);
  export_ok(*ledger, out.path());
  AuditOptions options;
  options.threads = 2;
  options.log_key = ledger->log_verifier().value();
  {
    auto source = tile_audit_source(out.str());
    AuditReport report = audit_log(*source, options);
    INFO(report.status.message());
    REQUIRE(report.status);
    CHECK(report.entries == 605);
    CHECK(report.checkpoints == 1);
    CHECK(report.root == base64_encode(ledger->root(605).value()));
  }
  SECTION("a flipped byte in a level-1 hash tile") {
    flip_byte(out.path() / "tile/1/000.p/2", 33);
    auto source = tile_audit_source(out.str());
    AuditReport report = audit_log(*source, options);
    CHECK(report.status.code() == Code::kCorrupt);
    CHECK_THAT(report.status.message(), Catch::Contains("tile/1/000.p/2"));
  }
  SECTION("a flipped byte in an entry") {
    flip_byte(out.path() / "tile/entries/001", 300);
    auto source = tile_audit_source(out.str());
    AuditReport report = audit_log(*source, options);
    CHECK_FALSE(report.status);
    CHECK(report.failed_index == std::optional<uint64_t>(256));
  }
  SECTION("another log's key") {
    options.log_key = test::test_key("example.org/other-log", 0x33).verifier();
    auto source = tile_audit_source(out.str());
    CHECK(audit_log(*source, options).status.code() == Code::kRejected);
  }
}

// ---- over HTTP ----------------------------------------------------------------------------

// A tiny HTTP/1.0-style file server on 127.0.0.1 for the tests: one request per connection.
// "/redirect" answers 302; anything else is a file under `root` or 404.
class TestServer {
 public:
  explicit TestServer(fs::path root) : root_(std::move(root)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~TestServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      std::string response = respond(request);
      for (size_t off = 0; off < response.size();) {
        ssize_t n = ::write(c, response.data() + off, response.size() - off);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::close(c);
    }
  }

  std::string respond(const std::string& request) {
    size_t sp = request.find(' ');
    std::string path = request.substr(sp + 1, request.find(' ', sp + 1) - sp - 1);
    if (path == "/redirect") {
      return "HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n";
    }
    fs::path file = root_ / path.substr(1);
    if (path.find("..") != std::string::npos || !fs::is_regular_file(file)) {
      return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    }
    std::string body = test::read_file(file);
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  fs::path root_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST_CASE("a tile source reads the same layout over http", "[ledger][tiles][http]") {
  TempDir dir, out;
  Cast cast;
  auto ledger = build_ledger(dir, cast, 300);
  export_ok(*ledger, out.path());
  TestServer server(out.path());
  auto source = tile_audit_source(server.url());
  CHECK(source->name() == server.url());
  CHECK(read_back(*source, 305, 1000));
  flip_byte(out.path() / "tile/0/000", 5);
  auto tampered = tile_audit_source(server.url());
  CHECK(read_back(*tampered, 305, 1000).code() == Code::kCorrupt);
}

TEST_CASE("http_get says what went wrong: 404, redirects, https, refused connections",
          "[ledger][tiles][http]") {
  TempDir out;
  write_bytes(out.path() / "hello", "hello, world");
  TestServer server(out.path());
  auto ok = http_get(server.url() + "hello");
  REQUIRE(ok);
  CHECK(*ok == "hello, world");
  CHECK(http_get(server.url() + "missing").error().code() == Code::kNotFound);
  auto redirect = http_get(server.url() + "redirect");
  CHECK(redirect.error().code() == Code::kIo);
  CHECK_THAT(redirect.error().message(), Catch::Contains("not followed"));
  auto https = http_get("https://example.org/checkpoint");
  CHECK(https.error().code() == Code::kUsage);
  CHECK_THAT(https.error().message(), Catch::Contains("https:// is not supported"));
  CHECK(http_get("ftp://example.org/").error().code() == Code::kUsage);
  CHECK(http_get("http://127.0.0.1:0/").error().code() == Code::kUsage);
  // A port nobody listens on (the kernel gives out ephemeral ports above 32768).
  auto refused = http_get("http://127.0.0.1:9/", HttpOptions{std::chrono::milliseconds(2000)});
  CHECK(refused.error().code() == Code::kIo);
  auto over_https = tile_audit_source("https://example.org/log/");
  CHECK(over_https->scan_checkpoints([](std::string_view) { return Status::ok(); }).code() ==
        Code::kUsage);
  auto missing_tile = tile_audit_source(server.url());
  CHECK(missing_tile->scan_checkpoints([](std::string_view) { return Status::ok(); }).code() ==
        Code::kNotFound);
}

TEST_CASE("parse_http_url splits host, port and target", "[ledger][tiles][http]") {
  auto u = parse_http_url("http://example.org:8080/log/tiles");
  REQUIRE(u);
  CHECK(u->host == "example.org");
  CHECK(u->port == "8080");
  CHECK(u->target == "/log/tiles");
  auto v = parse_http_url("http://example.org");
  REQUIRE(v);
  CHECK(v->port == "80");
  CHECK(v->target == "/");
  CHECK_FALSE(parse_http_url("http://:80/"));
  CHECK_FALSE(parse_http_url("http://example.org:99999/"));
  CHECK_FALSE(parse_http_url("http://user@example.org/"));
}

}  // namespace
}  // namespace evl
