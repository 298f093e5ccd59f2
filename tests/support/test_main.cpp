// The Catch2 main for every evledger test binary: libsodium is initialised once here.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <sodium.h>

int main(int argc, char* argv[]) {
  if (sodium_init() < 0) return 3;
  return Catch::Session().run(argc, argv);
}
