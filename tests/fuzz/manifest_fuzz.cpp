// KernelIndex manifests as `evledger import` reads them: JSON, JSON arrays, JSONL and YAML
// streams through the importer's ManifestReader (the form told by content), each document
// then through check_manifest, the one place that checks manifests.
#include <algorithm>
#include <sstream>
#include <string>

#include "events/jcs.h"
#include "events/manifest_check.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/import_reader.h"

EVL_FUZZ_TARGET(manifest) {
  using namespace evl;
  const std::string text(fuzz::as_text(data, size));
  std::istringstream in(text);
  auto reader = cli::ManifestReader::from_stream(in, "fuzz");
  const uint64_t lines = std::count(text.begin(), text.end(), '\n') + 1;
  uint64_t documents = 0, last_line = 0;
  for (;;) {
    cli::SourceDocument doc;
    auto more = reader->next(doc);
    if (!more || !*more) break;
    // Every document is accounted for, in order, at its own line.
    ++documents;
    EVL_FUZZ_CHECK(doc.index == documents);
    EVL_FUZZ_CHECK(doc.line >= last_line && doc.line <= lines);
    last_line = doc.line;
    EVL_FUZZ_CHECK(doc.value.has_value() == doc.status.is_ok());
    EVL_FUZZ_CHECK(documents <= size + 1);
    if (!doc.value) continue;
    CheckedManifest checked = check_manifest(*doc.value, doc.index, doc.where);
    if (checked.ok()) EVL_FUZZ_CHECK(jcs_check_canonical(checked.text.canonical).is_ok());
  }
}
