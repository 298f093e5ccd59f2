// tests/support/ledger_support.h — opening ledgers in tests. Header only: just the test binaries
// that link evl_ledger include it.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "tests/support/fixtures.h"
#include "tests/support/test_support.h"

namespace evl::test {

// Opens the ledger in `dir` with `options` (dir filled in; a writer gets the test log key
// unless the options name one), failing the test when it cannot.
inline std::unique_ptr<Ledger> open_test_ledger(const TempDir& dir, OpenOptions options = {}) {
  options.dir = dir.str();
  if (!options.read_only && !options.log_key) options.log_key = test_log_key();
  auto ledger = Ledger::open(options);
  if (!ledger) FAIL("open failed: " << ledger.error().message());
  return std::move(ledger.value());
}

inline std::unique_ptr<Ledger> open_read_only(const TempDir& dir) {
  OpenOptions options;
  options.read_only = true;
  return open_test_ledger(dir, options);
}

// Appends `batch`, failing the test (with the ledger's message) unless every entry is stored.
inline void append_all(Ledger& ledger, std::vector<Bytes> batch) {
  for (const auto& o : ledger.append(batch)) {
    INFO(o.status.message());
    REQUIRE(o.status.is_ok());
  }
}

}  // namespace evl::test
