// events/observation.h — the facts of an event that key policy needs before it is sequenced.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "events/event.h"

namespace evl {

// The source slug an observation is reported by: its manifest's spec.sourceNative.source.
// kRejected when the manifest is not a BenchmarkRun with that field.
Result<std::string> observation_source(const Observation& observation);

// The scope subject policy checks for `body`: an observation's source slug, else empty.
Result<std::string> scope_subject(const EventBody& body);

}  // namespace evl
