#include "events/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/test_support.h"

namespace evl {
namespace {

const ReadLimit kTen{"test file", 10};

void write_bytes(const std::filesystem::path& path, size_t n) {
  std::ofstream(path, std::ios::binary) << std::string(n, 'x');
}

// Puts the read end of a pipe on standard input for the object's life.
class PipeOnStdin {
 public:
  PipeOnStdin() {
    REQUIRE(::pipe(fds_) == 0);
    saved_ = ::dup(STDIN_FILENO);
    REQUIRE(::dup2(fds_[0], STDIN_FILENO) == STDIN_FILENO);
  }
  ~PipeOnStdin() {
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
    ::close(fds_[0]);
    close_writer();
  }
  void write(const std::string& text) {
    REQUIRE(::write(fds_[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  int writer_fd() const { return fds_[1]; }
  void close_writer() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
  int saved_ = -1;
};

TEST_CASE("a file read takes up to its limit and refuses one byte more, naming file and limit",
          "[events][file_read]") {
  test::TempDir dir;
  write_bytes(dir.path() / "ten", 10);
  write_bytes(dir.path() / "eleven", 11);
  auto ten = read_file((dir.path() / "ten").string(), kTen);
  REQUIRE_OK(ten);
  CHECK(*ten == std::string(10, 'x'));
  auto eleven = read_file((dir.path() / "eleven").string(), kTen);
  REQUIRE_FALSE(eleven);
  CHECK(eleven.error().code() == Code::kRejected);
  CHECK_THAT(eleven.error().message(), Catch::Contains("test file") &&
                                           Catch::Contains("eleven is 11 bytes") &&
                                           Catch::Contains("more than 10 bytes"));
}

TEST_CASE("a sparse file of a terabyte is refused by its size, before any read",
          "[events][file_read]") {
  test::TempDir dir;
  auto path = (dir.path() / "huge").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  const bool sparse = ::ftruncate(fd, off_t{1} << 40) == 0;
  ::close(fd);
  if (!sparse) return;  // a filesystem without files this large has nothing to refuse
  auto data = read_file(path, ReadLimit{"tile", 8192});
  REQUIRE_FALSE(data);
  CHECK(data.error().code() == Code::kRejected);
  CHECK_THAT(data.error().message(), Catch::Contains("1099511627776 bytes"));
}

TEST_CASE("a read refuses FIFOs, directories and devices, also behind a symbolic link, without "
          "waiting for a writer", "[events][file_read]") {
  test::TempDir dir;
  auto fifo = (dir.path() / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero");
  std::filesystem::create_directory(dir.path() / "sub");
  struct Case {
    std::string name, kind;
  } cases[] = {{"fifo", "is a FIFO"},
               {"zero", "is a character device (through a symbolic link)"},
               {"sub", "is a directory"}};
  for (const auto& c : cases) {
    INFO(c.name);
    auto data = read_file((dir.path() / c.name).string(), kTen);
    REQUIRE_FALSE(data);
    CHECK(data.error().code() == Code::kIo);
    CHECK_THAT(data.error().message(), Catch::Contains(c.kind) &&
                                           Catch::Contains("not a regular file"));
  }
}

TEST_CASE("a missing file is nullopt at a directory and an I/O error with the reason by path",
          "[events][file_read]") {
  test::TempDir dir;
  auto at = read_file_at(AT_FDCWD, (dir.path() / "none").string(), "none", kTen);
  REQUIRE_OK(at);
  CHECK_FALSE(at->has_value());
  auto direct = read_file((dir.path() / "none").string(), kTen);
  REQUIRE_FALSE(direct);
  CHECK(direct.error().code() == Code::kIo);
  CHECK_THAT(direct.error().message(), Catch::Contains("cannot read test file") &&
                                           Catch::Contains("No such file or directory"));
}

TEST_CASE("standard input is read to its end under the same limit", "[events][file_read]") {
  {
    PipeOnStdin in;
    in.write("0123456789");
    in.close_writer();
    auto data = read_file("-", kTen);
    REQUIRE_OK(data);
    CHECK(*data == "0123456789");
  }
  {
    PipeOnStdin in;
    in.write("0123456789+");
    auto data = read_file("-", kTen);  // refused at the 11th byte, with the writer still open
    REQUIRE_FALSE(data);
    CHECK(data.error().code() == Code::kRejected);
    CHECK_THAT(data.error().message(), Catch::Contains("standard input holds more than 10"));
  }
}

TEST_CASE("an anonymous pipe named by /proc/self/fd, as <(...) passes one, is read as a stream",
          "[events][file_read]") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "abc", 3) == 3);
  ::close(fds[1]);
  auto data = read_file("/proc/self/fd/" + std::to_string(fds[0]), kTen);
  ::close(fds[0]);
  REQUIRE_OK(data);
  CHECK(*data == "abc");
}

TEST_CASE("standard input that never ends fails at the deadline and names it",
          "[events][file_read]") {
  PipeOnStdin in;
  in.write("01234");  // and then nothing, with the writer open
  auto data = read_file("-", ReadLimit{"test file", 10, std::chrono::milliseconds(50)});
  REQUIRE_FALSE(data);
  CHECK(data.error().code() == Code::kIo);
  CHECK_THAT(data.error().message(), Catch::Contains("within 0.05 s"));
}

// All of `stream`, read in pieces of at most `piece` bytes, or the first error.
Result<std::string> read_stream(FileStream& stream, size_t piece) {
  std::string all;
  std::string buf(piece, '\0');
  for (;;) {
    auto n = stream.read(buf.data(), buf.size());
    if (!n) return n.error();
    if (*n == 0) return all;
    all.append(buf, 0, *n);
  }
}

TEST_CASE("a file stream reads a file piece by piece and refuses what a whole read refuses",
          "[events][file_read]") {
  test::TempDir dir;
  write_bytes(dir.path() / "ten", 10);
  auto stream = FileStream::open((dir.path() / "ten").string(), kTen);
  REQUIRE_OK(stream);
  CHECK((*stream)->size() == 10u);
  CHECK((*stream)->name() == "test file " + (dir.path() / "ten").string());
  auto all = read_stream(**stream, 3);
  REQUIRE_OK(all);
  CHECK(*all == std::string(10, 'x'));

  write_bytes(dir.path() / "eleven", 11);
  auto large = FileStream::open((dir.path() / "eleven").string(), kTen);
  REQUIRE_FALSE(large);
  CHECK(large.error().code() == Code::kRejected);
  auto fifo = (dir.path() / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero");
  for (const char* name : {"fifo", "zero", "none"}) {
    INFO(name);
    auto refused = FileStream::open((dir.path() / name).string(), kTen);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code() == Code::kIo);
  }
}

TEST_CASE("a file stream from standard input counts every byte against its limit",
          "[events][file_read]") {
  PipeOnStdin in;
  in.write("0123456789+");
  auto stream = FileStream::open("-", kTen);
  REQUIRE_OK(stream);
  CHECK_FALSE((*stream)->size().has_value());
  auto all = read_stream(**stream, 4);
  REQUIRE_FALSE(all);
  CHECK(all.error().code() == Code::kRejected);
  CHECK_THAT(all.error().message(), Catch::Contains("standard input holds more than 10"));
}

TEST_CASE("a file stream's deadline is for each piece: a slow writer passes, a stalled one fails",
          "[events][file_read]") {
  PipeOnStdin in;
  const ReadLimit limit{"test file", 100, std::chrono::milliseconds(400)};
  auto stream = FileStream::open("-", limit);
  REQUIRE_OK(stream);
  // Four pieces 150 ms apart: longer than the deadline in all, each within it. The writer
  // keeps its end open afterwards.
  std::thread writer([fd = in.writer_fd()] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      if (::write(fd, "abc", 3) != 3) return;
    }
  });
  std::string got;
  Result<size_t> n = size_t{0};
  char buf[16];
  while (got.size() < 12 && (n = (*stream)->read(buf, sizeof buf)) && *n > 0) got.append(buf, *n);
  writer.join();
  INFO(n.status().message());
  CHECK(got == "abcabcabcabc");
  auto stalled = (*stream)->read(buf, sizeof buf);  // nothing more, with the writer open
  REQUIRE_FALSE(stalled);
  CHECK(stalled.error().code() == Code::kIo);
  CHECK_THAT(stalled.error().message(),
             Catch::Contains("no data came from test file from standard input within 0.4 s"));
}

}  // namespace
}  // namespace evl
