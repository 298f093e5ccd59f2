// tests/fuzz/fuzz_target.h — a fuzz target, written once and run two ways.
//
//   EVL_FUZZ_TARGET(entry) { ... use data, size ... }
//
// In the fuzzing build (EVLEDGER_FUZZ, tools/scripts/fuzz.sh) each target is its own program,
// fuzz_<name>, whose LLVMFuzzerTestOneInput calls the body: libFuzzer mutates inputs under
// ASan and UBSan. In the normal build the bodies register under their names instead, and the
// Catch2 test fuzz_replay_test runs each over its seed corpus (tests/fuzz/corpus/<name>/) and
// its regressions (tests/fuzz/regressions/<name>/: every input a fuzzer ever crashed on).
//
// A body returns normally for every input. It crashes (so the fuzzer reports it) on a memory
// error, undefined behaviour, an exception that escapes, or EVL_FUZZ_CHECK of a property
// that the code under test promises, such as "decoding accepts only canonical bytes".
//
// Thread safety: a body is called from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace evl::fuzz {

using TargetFunction = void (*)(const uint8_t* data, size_t size);

struct Target {
  std::string name;
  TargetFunction run;
};

// The targets linked into this program, in registration order (the normal build's replay).
std::vector<Target>& targets();

struct Registration {
  Registration(const char* name, TargetFunction run) { targets().push_back({name, run}); }
};

// Prints "fuzz property violated: <what> at <file>:<line>" and aborts.
[[noreturn]] void property_failed(const char* what, const char* file, int line);

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace evl::fuzz

#define EVL_FUZZ_CHECK(expr) \
  ((expr) ? static_cast<void>(0) : ::evl::fuzz::property_failed(#expr, __FILE__, __LINE__))

#ifdef EVL_FUZZ_LIBFUZZER
#define EVL_FUZZ_TARGET(name)                                                  \
  static void evl_fuzz_##name(const uint8_t* data, size_t size);               \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {    \
    evl_fuzz_##name(data, size);                                               \
    return 0;                                                                  \
  }                                                                            \
  static void evl_fuzz_##name(const uint8_t* data, size_t size)
#else
#define EVL_FUZZ_TARGET(name)                                                  \
  static void evl_fuzz_##name(const uint8_t* data, size_t size);               \
  static const ::evl::fuzz::Registration evl_fuzz_registration_##name(#name,   \
                                                                     evl_fuzz_##name); \
  static void evl_fuzz_##name(const uint8_t* data, size_t size)
#endif
