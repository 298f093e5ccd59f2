#include "tests/fuzz/fuzz_target.h"

#include <sodium.h>

#include <cstdio>
#include <cstdlib>

namespace evl::fuzz {

std::vector<Target>& targets() {
  static std::vector<Target> all;
  return all;
}

void property_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz property violated: %s at %s:%d\n", what, file, line);
  std::abort();
}

}  // namespace evl::fuzz

#ifdef EVL_FUZZ_LIBFUZZER
// libFuzzer calls this once before the first input; the normal build's Catch2 main
// (tests/support/test_main.cpp) initialises libsodium instead.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (sodium_init() < 0) std::abort();
  return 0;
}
#endif
