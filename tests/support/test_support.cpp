#include "tests/support/test_support.h"

#include <stdlib.h>

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

}  // namespace evl::test
