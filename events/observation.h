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

// The manifest an event registers by digest (manifest and observation events), or null. Its
// digest is SHA-256 of `canonical`.
const ManifestText* registered_manifest(const EventBody& body);

// Every manifest an event carries (manifest, observation, rerun) must be RFC 8785 canonical
// JSON, because its digest is taken over exactly those bytes; metadata too, when present.
// kRejected names the event part and says how to canonicalize.
Status check_manifest_texts(const EventBody& body);

// Every check of a log entry that needs no ledger state, as the audit, the ledger's append and
// a mirror's pull all run it: check_entry, the scope subject, the manifests' canonical form.
// Key policy at the entry's index (KeyPolicy::check with `subject`) is the caller's. Fills
// `checked` (its id as soon as the entry decoded, also when a later check fails) and `subject`.
Status check_log_entry(ByteView entry, CheckedEntry& checked, std::string& subject);

}  // namespace evl
