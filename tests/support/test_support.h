// tests/support/test_support.h — helpers shared by the test binaries.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

// REQUIRE that a Result holds a value, showing its error message otherwise.
#define REQUIRE_OK(result)                 \
  do {                                     \
    INFO((result).status().message());     \
    REQUIRE((result).has_value());         \
  } while (0)

namespace evl::test {

// The ../shared folder beside the repository, when it exists (vectors, seeds); nullopt on a
// user's clone without it. Tests that read it skip their shared part without it.
std::optional<std::filesystem::path> shared_dir();

// The repository root (tests/golden lives there).
std::filesystem::path source_dir();

std::string read_file(const std::filesystem::path& path);

// A fresh empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A tmpfs of `bytes` mounted on a fresh directory, to fill a disk in a test; unmounted (and
// its directory removed) when the object dies. Mounting needs root or CAP_SYS_ADMIN: where
// the environment refuses, mounted() is false and why_not() says why, for the test to skip.
class SmallDisk {
 public:
  explicit SmallDisk(uint64_t bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  const std::filesystem::path& path() const { return dir_.path(); }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string why_not_;
};

}  // namespace evl::test
