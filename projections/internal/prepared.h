// projections/internal/prepared.h — what the fold derives from a manifest or observation event
// alone: the manifest's digest, its parsed form and summary, the summary's stored text, the
// facts runs read of it and, for an observation, the view it starts.
//
// These are pure functions of the event's bytes, so a rebuild prepares them on its decoding
// thread, a chunk ahead of the fold (projections/ledger_hook.cpp). The fold prepares them itself
// when an event comes without (the append path: preparing on the ledger's checking threads
// instead cost more CPU than it took off the writer). Either way it uses the same values.
//
// Thread safety: value types and pure functions.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "events/event.h"
#include "events/json.h"
#include "events/sha256.h"
#include "projections/internal/registry.h"
#include "projections/run_view.h"

namespace evl {

struct PreparedManifest {
  Digest digest{};                // sha256 of the canonical manifest
  bool parsed = false;            // the text is JSON
  std::string parse_error;        // why not, then
  bool object = false;            // ... and an object: only then are the members below set
  std::string kind;               // the manifest's kind ("" when absent)
  Json summary;                   // manifest_summary(digest, manifest, metadata)
  std::string summary_text;       // jcs_serialize(summary)
  ManifestFacts facts;            // manifest_facts(summary)
  std::optional<RunView> view;    // an observed BenchmarkRun's new view (without its event)
};

// `observation`: the event observes the run the manifest describes, so a BenchmarkRun also gets
// the view it starts. Only a parsed JSON object has a summary.
PreparedManifest prepare_manifest(const ManifestText& text, bool observation);
// A manifest or observation event's prepare_manifest(); null for other events.
std::unique_ptr<PreparedManifest> prepare_event(const EventBody& body);

}  // namespace evl
