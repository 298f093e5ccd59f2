#include "events/file_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/support/test_support.h"

namespace evl {
namespace {

namespace fs = std::filesystem;

TEST_CASE("replace_file creates a file and then replaces it whole") {
  test::TempDir dir;
  const std::string path = (dir.path() / "note").string();
  for (const Durability d : {Durability::kVisible, Durability::kDurable}) {
    REQUIRE(replace_file(path, "first\n", d));
    CHECK(test::read_file(path) == "first\n");
    REQUIRE(replace_file(path, "second, longer\n", d));
    CHECK(test::read_file(path) == "second, longer\n");
    REQUIRE(replace_file(path, "", d));
    CHECK(test::read_file(path).empty());
  }
  // Only the file itself remains: the temporary name is renamed away.
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("replace_file in the working directory, by a bare name") {
  test::TempDir dir;
  const fs::path before = fs::current_path();
  fs::current_path(dir.path());
  const Status s = replace_file("bare", "x", Durability::kDurable);
  fs::current_path(before);
  REQUIRE(s);
  CHECK(test::read_file(dir.path() / "bare") == "x");
}

TEST_CASE("a failed replace_file leaves the old file and no temporary file") {
  test::TempDir dir;
  const std::string path = (dir.path() / "kept").string();
  REQUIRE(replace_file(path, "old", Durability::kDurable));
  // A directory where the temporary file must go makes the create fail.
  fs::create_directory(dir.path() / ".kept.tmp");
  const Status s = replace_file(path, "new", Durability::kDurable);
  REQUIRE_FALSE(s);
  CHECK(s.code() == Code::kIo);
  CHECK_THAT(s.message(), Catch::Contains(".kept.tmp"));
  CHECK(test::read_file(path) == "old");

  const Status missing = replace_file((dir.path() / "no/such/dir/f").string(), "x",
                                      Durability::kVisible);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.message(), Catch::Contains("no/such/dir/.f.tmp"));
}

TEST_CASE("create_file never replaces a file and sets the mode") {
  test::TempDir dir;
  const std::string path = (dir.path() / "key").string();
  REQUIRE(create_file(path, "secret", 0600));
  CHECK(test::read_file(path) == "secret");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  const Status again = create_file(path, "other", 0600);
  REQUIRE_FALSE(again);
  CHECK_THAT(again.message(), Catch::Contains(path));
  CHECK(test::read_file(path) == "secret");
}

TEST_CASE("write_all names the file when the device is full") {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    WARN("skipped: no /dev/full here");
    return;
  }
  const Status s = write_all(fd, std::string(100000, 'x'), "the full file");
  ::close(fd);
  REQUIRE_FALSE(s);
  CHECK_THAT(s.message(), Catch::Contains("cannot write the full file"));
}

TEST_CASE("sync_path syncs files and directories and names a missing one") {
  test::TempDir dir;
  CHECK(sync_path(dir.str()));
  REQUIRE(replace_file((dir.path() / "f").string(), "x", Durability::kVisible));
  CHECK(sync_path((dir.path() / "f").string()));
  const Status s = sync_path((dir.path() / "gone").string());
  REQUIRE_FALSE(s);
  CHECK_THAT(s.message(), Catch::Contains("gone"));
}

}  // namespace
}  // namespace evl
