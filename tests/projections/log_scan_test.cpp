// A rebuild's pass over the log (projections/internal/log_scan.h): whoever decodes a chunk, the
// visits come in log order, once each, with the right ids and prepared manifests; a bad entry
// or a visitor's error stops the pass with that error.
#include "projections/internal/log_scan.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "events/event.h"
#include "events/observation.h"
#include "projections/store.h"
#include "tests/support/fixtures.h"

namespace evl {
namespace {

// A log of `size` entries: manifests and observations (prepared by the scan) and an attestation
// now and then (not prepared).
std::vector<Bytes> test_log(uint64_t size) {
  const SecretKey importer = test::test_key("importer", 7);
  std::vector<Bytes> log;
  for (uint64_t i = 0; i < size; ++i) {
    EventBody body;
    switch (i % 3) {
      case 0: body = test::observation_body(importer, "gpumode", std::to_string(i)); break;
      case 1: body = test::manifest_body(importer, test::environment_manifest_text("v" + std::to_string(i))); break;
      default: body = test::attestation_body(importer, test::test_digest(std::to_string(i)));
    }
    log.push_back(test::signed_entry(importer, body));
  }
  return log;
}

struct Scanned {
  Status status;
  std::vector<uint64_t> indexes;
};

Scanned scan(const std::vector<Bytes>& log, uint64_t size,
             const std::function<Status(uint64_t)>& fail_at = nullptr) {
  MemoryProjectionStore store, sums;
  KeyPolicy keys;
  EntryScanner scanner = [&](uint64_t from, uint64_t to,
                             const std::function<Status(uint64_t, ByteView)>& visit) -> Status {
    for (uint64_t i = from; i < to; ++i) EVL_RETURN_IF_ERROR(visit(i, log[i]));
    return Status::ok();
  };
  AppendContext context{store, sums, keys, scanner, nullptr};
  Scanned out;
  out.status = scan_bodies(context, size, [&](uint64_t index, const Digest& id,
                                              const EventBody& body, PreparedManifest* prepared) {
    out.indexes.push_back(index);
    auto entry = decode_entry(log[index]);
    REQUIRE(entry.has_value());
    CHECK(id == event_id(entry->body));
    CHECK(encode_body(body) == entry->body);
    const bool manifest = std::holds_alternative<ManifestEvent>(body.payload) ||
                          std::holds_alternative<Observation>(body.payload);
    CHECK((prepared != nullptr) == manifest);
    if (prepared != nullptr) {
      // Prepared from this very event's manifest.
      CHECK(prepared->digest == sha256(as_bytes(registered_manifest(body)->canonical)));
    }
    return fail_at ? fail_at(index) : Status::ok();
  });
  return out;
}

TEST_CASE("the log's entries are visited in order, once each, at every chunk boundary") {
  const std::vector<Bytes> log = test_log(2100);
  for (uint64_t size : {0, 1, 255, 256, 257, 1023, 1024, 1025, 2100}) {
    INFO("a log of " << size << " entries");
    Scanned scanned = scan(log, size);
    REQUIRE(scanned.status.is_ok());
    std::vector<uint64_t> expected(size);
    for (uint64_t i = 0; i < size; ++i) expected[i] = i;
    CHECK(scanned.indexes == expected);
  }
}

TEST_CASE("a visitor's error stops the pass with that error") {
  const std::vector<Bytes> log = test_log(1500);
  for (uint64_t at : {0, 700, 1499}) {
    INFO("failing at entry " << at);
    Scanned scanned = scan(log, log.size(), [&](uint64_t index) {
      return index == at ? usage_error("stop at " + std::to_string(index)) : Status::ok();
    });
    CHECK(scanned.status.code() == Code::kUsage);
    CHECK(scanned.status.message() == "stop at " + std::to_string(at));
    CHECK(scanned.indexes.size() == at + 1);
  }
}

TEST_CASE("an entry that does not decode stops the pass with kCorrupt naming it") {
  std::vector<Bytes> log = test_log(1200);
  log[900] = Bytes{0x00, 0x01, 0x02};
  Scanned scanned = scan(log, log.size());
  CHECK(scanned.status.code() == Code::kCorrupt);
  CHECK_THAT(scanned.status.message(), Catch::StartsWith("entry 900: "));
  CHECK(scanned.indexes.size() == 900);
}

}  // namespace
}  // namespace evl
