// Replays every fuzz target (tests/fuzz/fuzz_target.h) over its seed corpus and its
// regressions in the normal build: the seeds keep the targets' properties honest between
// fuzzing runs, and every input a fuzzer once crashed on stays fixed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace {

namespace fs = std::filesystem;
const fs::path kFuzzDir = fs::path(EVLEDGER_SOURCE_DIR) / "tests" / "fuzz";

std::vector<fs::path> inputs(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const evl::fuzz::Target& target(const std::string& name) {
  for (const auto& t : evl::fuzz::targets()) {
    if (t.name == name) return t;
  }
  FAIL("no fuzz target named " << name);
  throw;  // unreachable
}

// Runs the target over each file; a property that fails aborts the test binary (ctest reports
// the crash, the file is the last one printed).
size_t replay(const std::string& name, const char* folder) {
  const auto& t = target(name);
  size_t count = 0;
  for (const auto& file : inputs(kFuzzDir / folder / name)) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    UNSCOPED_INFO(file.string());
    t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++count;
  }
  return count;
}

void replay_target(const std::string& name) {
  CHECK(replay(name, "corpus") > 0);
  replay(name, "regressions");
}

}  // namespace

TEST_CASE("every fuzz target has a seed corpus, and every corpus a target") {
  std::set<std::string> names;
  for (const auto& t : evl::fuzz::targets()) names.insert(t.name);
  CHECK(names.size() == 9);
  for (const auto& name : names) {
    INFO(name);
    CHECK(!inputs(kFuzzDir / "corpus" / name).empty());
  }
  for (const char* folder : {"corpus", "regressions"}) {
    if (!fs::is_directory(kFuzzDir / folder)) continue;
    for (const auto& e : fs::directory_iterator(kFuzzDir / folder)) {
      INFO(e.path().string());
      CHECK(names.count(e.path().filename().string()) == 1);
    }
  }
}

TEST_CASE("fuzz seeds and regressions replay: entry") { replay_target("entry"); }
TEST_CASE("fuzz seeds and regressions replay: note") { replay_target("note"); }
TEST_CASE("fuzz seeds and regressions replay: tile") { replay_target("tile"); }
TEST_CASE("fuzz seeds and regressions replay: proof") { replay_target("proof"); }
TEST_CASE("fuzz seeds and regressions replay: policy") { replay_target("policy"); }
TEST_CASE("fuzz seeds and regressions replay: manifest") { replay_target("manifest"); }
TEST_CASE("fuzz seeds and regressions replay: jcs") { replay_target("jcs"); }
TEST_CASE("fuzz seeds and regressions replay: router") { replay_target("router"); }
TEST_CASE("fuzz seeds and regressions replay: evidence") { replay_target("evidence"); }
