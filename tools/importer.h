// tools/importer.h — the import pipeline behind `evledger import`.
//
// Importer runs the pipeline: read a batch → parse, check (events/manifest_check.h),
// canonicalize and sign in parallel → append the batch in one call → report each outcome.
// Bodies are deterministic (events/event_builder.h's catalog_event): author = the import key,
// claimed time = the run's own spec.observedAt for a BenchmarkRun and 0 (no claim) for every
// other kind, never the wall clock. So importing the same catalog twice yields the same event
// ids, and the second import finds every event already present: it looks each id up before
// signing (EventSink::find), so a re-import into a local ledger signs and verifies nothing; a
// remote log is not asked, so a re-import there signs again and the server answers every
// event present. (The ledger's digest dedup, when present, makes this hold across keys and
// metadata too.) Within one import a manifest digest is appended once; later documents with
// that digest are answered from the first one's outcome.
//
// Thread safety: an Importer is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "events/sha256.h"
#include "events/status.h"
#include "keys/key.h"
#include "ledger/event_sink.h"
#include "ledger/thread_pool.h"
#include "tools/import_reader.h"

namespace evl::cli {

// Documents per append call: large batches fill the ledger's group commits.
inline constexpr size_t kDefaultImportBatch = 5000;

struct ImportOptions {
  size_t batch = kDefaultImportBatch;  // documents per append call
  unsigned threads = 0;                // parse/check/sign workers; 0: one per hardware thread
  // The workers' priority. kBackground for a remote log: the importer prepares at most two
  // batches ahead of what the server has answered, so the server's checks and commits are
  // the critical path, and on a machine the two share (a demo, a benchmark) the publisher's
  // signing must not take a core from them. On a machine of its own it changes nothing.
  PoolPriority priority = PoolPriority::kNormal;
};

// kNotStored: appended but not stored, because the ledger's commit failed (or one before it
// did; see Ledger::append): not a rejection, and nothing after it is imported.
enum class ImportStatus : uint8_t { kAdded, kPresent, kRejected, kNotStored };

struct DocumentOutcome {
  std::string label;  // "document 4 (catalog.yaml line 30; WorkloadCase w)"
  std::string kind, name;
  ImportStatus status = ImportStatus::kRejected;
  std::string rule;  // rejected: "read", a manifest_check rule, "rerun-only", "sign", "ledger"
  std::string message;  // rejected: every problem, one per line; not stored: why
  std::optional<Digest> digest;  // the manifest digest, when it was computed
  uint64_t entry_index = 0;      // added or present: the ledger index
  Digest event_id{};             // added or present
};

struct ImportTotals {
  uint64_t documents = 0;
  uint64_t added = 0;         // new events
  uint64_t present = 0;       // already in the ledger, or repeated earlier in this import
  uint64_t rejected = 0;      // documents not imported
  uint64_t not_stored = 0;    // appended, but their commit failed (the import stopped)
  uint64_t observations = 0;  // of the added: observation events
  uint64_t manifests = 0;     // of the added: manifest events
};

struct ImportCallbacks {
  std::function<void(const DocumentOutcome&)> on_document;  // every document, in input order
  std::function<void()> on_batch;                           // after each appended batch
};

class Importer {
 public:
  // `log` (a local ledger or a remote log, ledger/event_sink.h) and `key` must outlive the
  // Importer.
  Importer(EventSink& log, const SecretKey& key, ImportOptions options = {});
  ~Importer();

  // Imports every document of `reader`. Rejections do not stop the import; a non-ok Status
  // means the source could not be read to its end (what was read before it is imported), or
  // that a commit failed (stopped()): then nothing after the first document not stored is
  // appended, from this source or any later one, and the Status says where it stopped.
  Status import(ManifestReader& reader, const ImportCallbacks& callbacks = {});

  const ImportTotals& totals() const { return totals_; }
  // Whether a failed commit stopped the import (every later import() returns at once).
  bool stopped() const { return !stop_.is_ok(); }

 private:
  struct Batch;
  // Checks, canonicalizes and signs the documents of `batch` on the pool.
  void prepare_batch(Batch& batch);
  // Picks the entries to append: one per digest not met before (reads and writes seen_).
  void dedupe_batch(Batch& batch);
  // Records an appended batch's outcomes in seen_ and the totals, and reports each document.
  void report(Batch& batch, const ImportCallbacks& callbacks);

  // "ledger L, size N" for messages.
  std::string log_size_text() const;

  EventSink& log_;
  const SecretKey& key_;
  ImportOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  ImportTotals totals_;
  // The outcome of every digest this import has met: a later document with the same digest
  // is answered from here (about 300 bytes per distinct manifest: 6 MB for 20,000).
  std::map<Digest, DocumentOutcome> seen_;
  // The digests that batches appended but not yet reported append.
  std::set<Digest> in_flight_;
  // The first failed commit: its cause, with the document that was not stored.
  Status stop_;
};

}  // namespace evl::cli
