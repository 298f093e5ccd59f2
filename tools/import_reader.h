// tools/import_reader.h — reading KernelIndex catalogs, and the import pipeline behind
// `evledger import`.
//
// ManifestReader reads one SOURCE (a file, or standard input) in any of these forms, told
// apart by content, never by the file name:
//   json-array  a JSON array of manifests (first non-blank byte '[')
//   json-lines  JSONL: one manifest per line (first byte '{' and the first line is a whole value)
//   json        one JSON value, or several one after another, each spanning lines ('{' otherwise)
//   yaml        YAML documents separated by '---' (anything else; so a YAML document written
//               in flow style, starting with '{' or '[', is read as JSON: start it with '---').
//               YAML is converted with the
//               YAML 1.2 core schema: plain null/true/false/integers/floats become JSON null,
//               booleans and numbers, everything else a string ("2026-08-01T12:00:00Z" and
//               "1.2.0" stay strings; quoted scalars are always strings). Refused, because
//               JSON has no meaning for them: anchors and aliases, '<<' merge keys, tags other
//               than the core schema's (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq),
//               mapping keys that are null or collections, duplicate keys, .inf and .nan,
//               integers written in hex or octal beyond 2^53, invalid UTF-8 and Unicode
//               noncharacters. A top-level YAML sequence is a list of manifests.
// Inputs are streamed: the reader holds one document at a time (plus, for YAML, the text of
// one '---' document), so catalogs of any length take bounded memory. A document that cannot
// be read (bad JSON on one JSONL line, bad YAML in one '---' document, an array element that
// does not parse) is reported as that document's error and reading goes on; only a broken
// outer structure (a JSON array missing its ',') or an I/O failure ends a source early.
// Every document is limited to kMaxDocumentBytes of text.
//
// Importer runs the pipeline: read a batch → parse, check (events/manifest_check.h),
// canonicalize and sign in parallel → append the batch in one call → report each outcome.
// Bodies are deterministic: author = the import key, claimed time = the run's own
// spec.observedAt for a BenchmarkRun and 0 (no claim) for every other kind, never the wall
// clock. So importing the same catalog twice yields the same event ids, and the second import
// finds every event already present: it looks each id up before signing (Ledger::find), so a
// re-import signs and verifies nothing. (The ledger's digest dedup, when present, makes this
// hold across keys and metadata too.) Within one import a manifest digest is appended once;
// later documents with that digest are answered from the first one's outcome.
//
// Thread safety: a ManifestReader or an Importer is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/json.h"
#include "tools/yaml_json.h"
#include "events/sha256.h"
#include "events/status.h"
#include "keys/key.h"
#include "ledger/ledger.h"

namespace evl {
class ThreadPool;
}

namespace evl::cli {

// A manifest must fit in one entry (64 KiB); pretty-printed or commented text may be larger,
// but not by more than this.
inline constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
inline constexpr size_t kDefaultImportBatch = 5000;

enum class InputForm : uint8_t { kEmpty, kJson, kJsonArray, kJsonLines, kYaml };
const char* input_form_name(InputForm form);

struct SourceDocument {
  uint64_t index = 0;  // 1-based position in its source
  uint64_t line = 0;   // 1-based line of the source where it starts
  std::string where;   // "<source> line <line>", for messages
  std::optional<Json> value;  // the document, once read and parsed
  Status status;              // ok, or why this document could not be read
  std::string json_text;      // JSON forms, before parse(): the document's text
  // Parses json_text into value (no-op when value is set or status is not ok). Documents may
  // be parsed on different threads at once.
  void parse();
};

class ManifestReader {
 public:
  ~ManifestReader();

  // Opens a file, or standard input for "-". kIo when it cannot be opened.
  static Result<std::unique_ptr<ManifestReader>> open(const std::string& path);
  // Reads `in`, which must outlive the reader; `name` is used in messages.
  static std::unique_ptr<ManifestReader> from_stream(std::istream& in, std::string name);

  // The next document, parsed (out.value set), or with out.status saying why it could not be
  // read. Returns false at the end of the input. A non-ok Status means the source cannot be
  // read further (I/O, or its outer structure is broken); documents before it are valid.
  Result<bool> next(SourceDocument& out);

  // Up to `max` documents appended to `out`, parsed on `pool` (or on this thread when null).
  // Returns false when the input is exhausted; errors as for next().
  Result<bool> read_batch(std::vector<SourceDocument>& out, size_t max, ThreadPool* pool);

  const std::string& name() const;
  InputForm form() const;       // kEmpty until the first document is read
  uint64_t bytes_read() const;  // for progress
  std::optional<uint64_t> size() const;  // total bytes when known (regular files)

 private:
  struct Impl;
  explicit ManifestReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- the import pipeline -------------------------------------------------------------------

struct ImportOptions {
  size_t batch = kDefaultImportBatch;  // documents per append call
  unsigned threads = 0;                // parse/check/sign workers; 0: one per hardware thread
};

enum class ImportStatus : uint8_t { kAdded, kPresent, kRejected };

struct DocumentOutcome {
  std::string label;  // "document 4 (catalog.yaml line 30; WorkloadCase w)"
  std::string kind, name;
  ImportStatus status = ImportStatus::kRejected;
  std::string rule;  // rejected: "read", a manifest_check rule, "rerun-only", "sign", "ledger"
  std::string message;  // rejected: every problem, one per line
  std::optional<Digest> digest;  // the manifest digest, when it was computed
  uint64_t entry_index = 0;      // added or present: the ledger index
  Digest event_id{};             // added or present
};

struct ImportTotals {
  uint64_t documents = 0;
  uint64_t added = 0;         // new events
  uint64_t present = 0;       // already in the ledger, or repeated earlier in this import
  uint64_t rejected = 0;      // documents not imported
  uint64_t observations = 0;  // of the added: observation events
  uint64_t manifests = 0;     // of the added: manifest events
};

struct ImportCallbacks {
  std::function<void(const DocumentOutcome&)> on_document;  // every document, in input order
  std::function<void()> on_batch;                           // after each appended batch
};

class Importer {
 public:
  // `ledger` and `key` must outlive the Importer.
  Importer(Ledger& ledger, const SecretKey& key, ImportOptions options = {});
  ~Importer();

  // Imports every document of `reader`. Rejections do not stop the import; a non-ok Status
  // means the source could not be read to its end (what was read before it is imported).
  Status import(ManifestReader& reader, const ImportCallbacks& callbacks = {});

  const ImportTotals& totals() const { return totals_; }

 private:
  void append_batch(std::vector<SourceDocument>& docs, const ImportCallbacks& callbacks);

  Ledger& ledger_;
  const SecretKey& key_;
  ImportOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  ImportTotals totals_;
  // The outcome of every digest this import has met: a later document with the same digest
  // is answered from here (about 300 bytes per distinct manifest: 6 MB for 20,000).
  std::map<Digest, DocumentOutcome> seen_;
};

}  // namespace evl::cli
