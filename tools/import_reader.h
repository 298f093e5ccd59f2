// tools/import_reader.h — reading KernelIndex catalogs for `evledger import` (the pipeline that
// checks, signs and appends what it reads is tools/importer.h).
//
// ManifestReader reads one SOURCE (a file, or standard input) in any of these forms, told
// apart by content, never by the file name:
//   json-array  a JSON array of manifests (first non-blank byte '[')
//   json-lines  JSONL: one manifest per line (first byte '{' and the first line is a whole value
//               or past the limit; or, after a broken first line, one of the next 8 lines is a
//               whole JSON object)
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
// does not parse or is cut off, a JSON comment, a line past the limit) is reported as that
// document's error, at its own line, and reading goes on after it: once the form is told, a
// valid document is read whatever its neighbours hold. Only an I/O failure, or the end of the input inside a JSON array, ends
// a source early. Every document is limited to kMaxDocumentBytes of text.
//
// Thread safety: a ManifestReader is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/json.h"
#include "tools/yaml_json.h"
#include "events/sha256.h"
#include "events/status.h"

namespace evl {
class ThreadPool;
}

namespace evl::cli {

// A manifest must fit in one entry (64 KiB); pretty-printed or commented text may be larger,
// but not by more than this.
inline constexpr size_t kMaxDocumentBytes = size_t{1} << 20;

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

  // Opens a file, or standard input for "-", read as events/file_read.h's FileStream: only a
  // regular file, standard input or a shell's <(...), and each read waits at most 30 s. kIo,
  // naming the catalog and the reason, when it cannot be opened or is another kind of file.
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
  uint64_t bytes_read() const;  // for progress; from any thread, while another reads
  std::optional<uint64_t> size() const;  // total bytes when known (regular files)

 private:
  struct Impl;
  explicit ManifestReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace evl::cli
