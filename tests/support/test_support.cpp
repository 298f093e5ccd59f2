#include "tests/support/test_support.h"

#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace evl::test {

std::optional<std::filesystem::path> shared_dir() {
  std::filesystem::path p(EVLEDGER_SHARED_DIR);
  if (std::filesystem::exists(p / "DESIGN.md")) return p;
  return std::nullopt;
}

std::filesystem::path source_dir() { return std::filesystem::path(EVLEDGER_SOURCE_DIR); }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "evledger-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

SmallDisk::SmallDisk(uint64_t bytes) {
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", dir_.str().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
    mounted_ = true;
  } else {
    why_not_ = std::string("cannot mount a tmpfs on ") + dir_.str() + ": " +
               std::strerror(errno) + " (needs root or CAP_SYS_ADMIN)";
  }
}

SmallDisk::~SmallDisk() {
  if (mounted_) ::umount2(dir_.str().c_str(), MNT_DETACH);
}

}  // namespace evl::test
