// projections/internal/prepared.h — what the fold derives from a manifest or observation event
// alone: the manifest's digest, whether it parses, its kind, its summary's text, the facts runs
// read of it and, for an observation, the view it starts. The parsed manifest itself is not
// kept: it is freed on the thread that made it.
//
// These are pure functions of the event's bytes, so they are made off the fold's thread: a
// rebuild prepares them on its decoding thread, a chunk ahead of the fold, and an append on the
// ledger's checking threads, before the single writer (AppendHook::prepare; both in
// projections/ledger_hook.cpp). The fold takes the summary's text and the view out of them; it
// prepares them itself when an event comes without, or when it took them once already (a
// commit staged again after the map grew). Either way it uses the same values.
//
// Thread safety: value types and pure functions.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/event.h"
#include "events/json.h"
#include "events/sha256.h"
#include "ledger/append_hook.h"
#include "projections/internal/registry.h"
#include "projections/run_view.h"

namespace evl {

struct PreparedManifest final : PreparedEntry {
  Digest digest{};                // sha256 of the canonical manifest
  bool parsed = false;            // the text is JSON
  std::string parse_error;        // why not, then
  bool object = false;            // ... and an object: only then are the members below set
  std::string kind;               // the manifest's kind ("" when absent)
  std::string summary_text;       // jcs_serialize(manifest_summary(...)), when asked for
  ManifestFacts facts;            // manifest_facts() of that summary
  std::optional<RunView> view;    // an observed BenchmarkRun's new view (without its event)
  bool taken = false;             // the fold moved the view out
};

// `observation`: the event observes the run the manifest describes, so a BenchmarkRun also gets
// the view it starts. Only a parsed JSON object has facts, and a summary's text when
// `summary_text` asks for it (a run's page shows it; the fold needs the facts only).
// `digest`: the manifest's digest when the caller has it already (else it is computed here).
PreparedManifest prepare_manifest(const ManifestText& text, bool observation,
                                  const Digest* digest = nullptr, bool summary_text = false);
// A manifest or observation event's prepare_manifest(); null for other events.
std::unique_ptr<PreparedManifest> prepare_event(const EventBody& body,
                                                const Digest* digest = nullptr);
// Whether the fold registers the manifest `body` (the event at `index`) carries, when no earlier
// event registered its digest: a manifest event's when it is a JSON object, an observation's
// when it is a BenchmarkRun, and neither when the event is void. That registration, or nullopt.
std::optional<Registration> registered(const EventBody& body, uint64_t index, bool is_void);

// A ManifestLookup over events held in memory (a fold outside a ledger: tests, tools), added in
// log order. The bodies are not owned: they must outlive it, at the same addresses.
class EventManifests final : public ManifestLookup {
 public:
  void add(uint64_t index, const EventBody& body, bool is_void);
  Result<std::optional<Registration>> registered(const Digest& digest,
                                                 uint64_t before) const override;

 private:
  struct Carrier {
    uint64_t index;
    Digest digest;
    const EventBody* body;
    bool is_void;
  };
  std::vector<Carrier> carriers_;  // the events that carry a manifest, in log order
};

}  // namespace evl
