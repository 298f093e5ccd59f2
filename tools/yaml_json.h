// tools/yaml_json.h — YAML manifests as JSON values, by the YAML 1.2 core schema.
//
// Scalars resolve to JSON types by the core schema; features with no JSON meaning (anchors
// and aliases, merge keys, non-core tags, non-scalar or null keys), duplicate keys, .inf and
// .nan, overflowing numbers and Unicode noncharacters are refused. Nesting is limited to 64.
// Text that YAML does not allow unescaped (invalid UTF-8, control characters other than tab
// and line breaks, C1 controls but U+0085) is refused before parsing, with its position.
// Messages never carry the input's raw bytes: what they quote is shown by visible_text
// (events/utf8.h).
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "events/json.h"
#include "events/status.h"

namespace evl::cli {

// Converts a text of YAML documents to JSON values, as ManifestReader does for one document
// (for tests and tools). kRejected with "line L, column C: ..." for the first problem.
Result<std::vector<Json>> yaml_to_json(const std::string& text);

}  // namespace evl::cli
