#include "projections/projector.h"

#include <algorithm>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/digest.h"
#include "projections/evidence.h"
#include "projections/internal/apply.h"
#include "projections/internal/prepared.h"
#include "projections/internal/registry.h"
#include "projections/internal/store_keys.h"

namespace evl {
namespace {

// Takes the facts a view needs from a registered manifest, wherever the view references it.
void resolve_into(RunView& view, const std::string& digest, const ManifestFacts& facts) {
  if (!view.has_protocol && view.protocol_digest == digest) view.has_protocol = true;
  if (!view.has_environment && view.environment_digest == digest) {
    view.has_environment = true;
    view.gpu = facts.hardware;
  }
  if (!view.has_workload && view.workload_digest == digest) {
    view.has_workload = true;
    view.operation_digest = facts.operation_spec_digest;
    view.correctness_key = facts.correctness_key;
  }
  if (!view.has_implementation && view.implementation_digest == digest) {
    view.has_implementation = true;
    view.source_available = facts.source_available;
  }
  for (RerunRecord& r : view.reruns) {
    if (!r.hardware && r.environment_digest == digest) r.hardware = facts.hardware;
  }
}

Status resolve_references(FoldState& state, RunView& view) {
  for (const std::string* ref : {&view.protocol_digest, &view.environment_digest,
                                 &view.workload_digest, &view.implementation_digest}) {
    auto digest = parse_digest_text(*ref);
    if (!digest) continue;
    auto found = state.find_manifest(*digest);
    if (!found) return found.error();
    if (*found != nullptr) resolve_into(view, *ref, **found);
  }
  return Status::ok();
}

// Runs that wait on a manifest, in the order of their observations.
Result<std::vector<Digest>> waiting_runs(FoldState& state, const Digest& manifest) {
  std::vector<Digest> runs;
  bool damaged = false;
  Status s =
      state.scan(store_keys::waiting_prefix(manifest), [&](std::string_view, std::string_view v) {
        auto run = hex_decode(v);
        if (!run || run->size() != 32) {
          damaged = true;
          return false;
        }
        runs.emplace_back();
        std::copy(run->begin(), run->end(), runs.back().begin());
        return true;
      });
  if (!s) return s;
  if (damaged)
    return corrupt("a waiting entry of manifest " + digest_text(manifest) + " is damaged");
  return runs;
}

// The event's prepared manifest, for the fold to take from: the one it came with unless taken
// already (a commit staged again after the map grew), or else `local`, prepared now (with the
// manifest's `digest`, hashed already).
PreparedManifest& prepared(ApplyContext& ctx, const ManifestText& text, const Digest& digest,
                           bool observation, std::optional<PreparedManifest>& local) {
  PreparedManifest* p = ctx.event.prepared;
  if (p == nullptr || p->taken) p = &local.emplace(prepare_manifest(text, observation, &digest));
  p->taken = true;
  return *p;
}

// The digest of the manifest an event carries: its prepared one, or hashed now.
Digest manifest_digest(const ApplyContext& ctx, const ManifestText& text) {
  return ctx.event.prepared != nullptr ? ctx.event.prepared->digest
                                       : sha256(as_bytes(text.canonical));
}

// Registers the prepared manifest (a JSON object) under this event: the state keeps its facts;
// the log keeps the registration (registered(), prepared.h, says the same).
void register_manifest(ApplyContext& ctx, const PreparedManifest& p) {
  EVL_ASSERT(p.object);
  ctx.state.put_manifest(p.digest, p.facts);
}

Status apply_manifest(ApplyContext& ctx, const ManifestEvent& event) {
  std::optional<PreparedManifest> local;
  const Digest digest = manifest_digest(ctx, event.manifest);
  auto waiting = waiting_runs(ctx.state, digest);
  if (!waiting) return waiting.error();
  if (ctx.event.void_cause) {  // listed on the runs that wait for it, nothing else
    for (const Digest& run : *waiting) {
      auto view = ctx.state.find_run(run);
      if (!view) return view.error();
      if (*view == nullptr) continue;
      ViewBefore before = view_before(**view);
      add_history(**view, history_item(ctx.event));
      EVL_RETURN_IF_ERROR(store_run_view(ctx, **view, before));
    }
    return Status::ok();
  }
  auto registered = ctx.state.find_manifest(digest);
  if (!registered) return registered.error();
  if (*registered != nullptr) return Status::ok();  // first registration wins
  PreparedManifest& p = prepared(ctx, event.manifest, digest, false, local);
  if (!p.object) {
    return record_skipped(ctx, "the manifest is not a JSON object: " +
                                   (p.parsed ? std::string("wrong type") : p.parse_error));
  }
  register_manifest(ctx, p);
  const ManifestFacts& facts = p.facts;
  const std::string text = digest_text(digest);
  for (const Digest& run : *waiting) {
    auto view = ctx.state.find_run(run);
    if (!view) return view.error();
    if (*view == nullptr) continue;
    ViewBefore before = view_before(**view);
    resolve_into(**view, text, facts);
    add_history(**view, history_item(ctx.event));
    EVL_RETURN_IF_ERROR(store_run_view(ctx, **view, before));
  }
  return Status::ok();
}

// A void view becomes the view of an observation of the same manifest that stands.
Status take_over(ApplyContext& ctx, RunView& view, PreparedManifest& p) {
  ViewBefore before = view_before(view);
  view.void_cause.reset();
  view.event = ctx.event.id;
  view.index = ctx.event.index;
  add_history(view, history_item(ctx.event));
  register_manifest(ctx, p);
  return store_run_view(ctx, view, before);
}

Status apply_observation(ApplyContext& ctx, const Observation& observation) {
  std::optional<PreparedManifest> local;
  const Digest digest = manifest_digest(ctx, observation.manifest);
  auto existing = ctx.state.find_run(digest);
  if (!existing) return existing.error();
  if (*existing != nullptr && (!(*existing)->void_cause || ctx.event.void_cause)) {
    return Status::ok();  // the run is already observed
  }
  auto registered = ctx.state.find_manifest(digest);
  if (!registered) return registered.error();
  if (*registered != nullptr) return Status::ok();  // first registration wins
  PreparedManifest& p = prepared(ctx, observation.manifest, digest, true, local);
  if (!p.parsed || p.kind != "BenchmarkRun") {
    return record_skipped(ctx, "an observation carries a BenchmarkRun manifest; this one " +
                                   (p.parsed ? std::string("is not one") : p.parse_error));
  }
  if (*existing != nullptr) return take_over(ctx, **existing, p);

  RunView& view = ctx.state.add_run(std::move(*p.view));
  view.event = ctx.event.id;
  view.index = ctx.event.index;
  view.void_cause = ctx.event.void_cause;
  add_history(view, history_item(ctx.event));
  EVL_RETURN_IF_ERROR(resolve_references(ctx.state, view));
  EVL_RETURN_IF_ERROR(replay_orphans(ctx, view));
  if (!view.void_cause) register_manifest(ctx, p);
  if (!view.benchmark.empty()) {
    ctx.state.put_once(store_keys::benchmark(view.benchmark, digest), "");
  }
  return store_run_view(ctx, view, std::nullopt);
}

const char* leadership_cause(const EventBody& body) {
  if (const auto* c = std::get_if<Correction>(&body.payload)) {
    switch (c->kind) {
      case Correction::Kind::kRetract:
        return "retracted";
      case Correction::Kind::kSupersede:
        return "superseded";
      case Correction::Kind::kDisqualify:
        return "disqualified";
    }
  }
  if (body.kind() == EventKind::kManifest) return "resolved";
  return "new_run";
}

// Checks that the event comes in log order; the first event folded into a state also writes
// the state's format.
Status start_event(FoldState& state, uint64_t index) {
  auto next = state.next();
  if (!next) return next.error();
  if (!next->has_value()) {
    state.put(store_keys::kVersion, kProjectionFormat);
    return Status::ok();
  }
  const uint64_t expected = **next;
  if (index < expected) {
    return usage_error("event " + std::to_string(index) +
                       " applied out of order: the projections "
                       "already hold events up to " +
                       std::to_string(expected - 1) + "; apply each event once, in log order");
  }
  return Status::ok();
}

Status apply_event(FoldState& state, const ProjectedEvent& event) {
  if (event.body == nullptr)
    return usage_error("projected event " + std::to_string(event.index) + " has no body");
  EVL_RETURN_IF_ERROR(start_event(state, event.index));
  state.set_manifest_lookup(event.manifests, event.index);
  ApplyContext ctx{state, event, {}};
  if (event.void_cause) EVL_RETURN_IF_ERROR(record_void(ctx));
  const Payload& payload = event.body->payload;
  Status status;
  if (const auto* m = std::get_if<ManifestEvent>(&payload)) {
    status = apply_manifest(ctx, *m);
  } else if (const auto* o = std::get_if<Observation>(&payload)) {
    status = apply_observation(ctx, *o);
  } else if (const auto* r = std::get_if<Rerun>(&payload)) {
    status = apply_rerun(ctx, *r);
  } else if (const auto* a = std::get_if<Attestation>(&payload)) {
    status = apply_attestation(ctx, *a);
  } else if (const auto* c = std::get_if<Correction>(&payload)) {
    status = apply_correction(ctx, *c);
  }
  EVL_RETURN_IF_ERROR(status);
  EVL_RETURN_IF_ERROR(ctx.leaders.write(state, event.index, leadership_cause(*event.body)));
  state.set_next(event.index + 1);
  return Status::ok();
}

}  // namespace

Status Projector::apply(ProjectionStore& store, const ProjectedEvent& event) const {
  FoldState state(store);
  EVL_RETURN_IF_ERROR(apply_event(state, event));
  return state.flush();
}

ProjectionBatch::ProjectionBatch(ProjectionStore& store, ThreadPool* pool)
    : state_(std::make_unique<FoldState>(store)), pool_(pool) {}

ProjectionBatch::ProjectionBatch(SummingStore& store, ThreadPool* pool)
    : state_(std::make_unique<FoldState>(store)), pool_(pool) {}

ProjectionBatch::~ProjectionBatch() = default;

Status ProjectionBatch::apply(const ProjectedEvent& event) { return apply_event(*state_, event); }

Status ProjectionBatch::flush() { return state_->flush(pool_); }

Status ProjectionBatch::flush_and_forget() {
  EVL_RETURN_IF_ERROR(state_->flush(pool_));
  state_->forget();
  return Status::ok();
}

// ---- views ---------------------------------------------------------------------------------

ViewBefore view_before(const RunView& view) {
  return ViewBefore{run_membership(view), view.missing, view.index};
}

Status store_run_view(ApplyContext& ctx, RunView& view, const std::optional<ViewBefore>& before) {
  refresh_run_view(view);
  ctx.state.run_changed(view);
  // Waiting entries: w/<manifest>/<view index> for each missing manifest (both lists sorted).
  static const std::vector<std::string> kNone;
  const bool same_index = before && before->index == view.index;
  const auto& old_missing = before ? before->missing : kNone;
  for (const std::string& m : old_missing) {
    auto d = parse_digest_text(m);
    if (!d || (same_index && std::binary_search(view.missing.begin(), view.missing.end(), m)))
      continue;
    ctx.state.erase(store_keys::waiting(*d, before->index));
  }
  const std::string run_hex = store_keys::hex(view.run);
  for (const std::string& m : view.missing) {
    auto d = parse_digest_text(m);
    if (!d || (same_index && std::binary_search(old_missing.begin(), old_missing.end(), m)))
      continue;
    ctx.state.put(store_keys::waiting(*d, view.index), run_hex);
  }
  return move_membership(ctx.state, before ? before->membership : std::nullopt,
                         run_membership(view), view, ctx.leaders);
}

void add_history(RunView& view, const HistoryItem& item) {
  auto at = std::lower_bound(view.history.begin(), view.history.end(), item.index,
                             [](const HistoryItem& h, uint64_t index) { return h.index < index; });
  if (at != view.history.end() && at->index == item.index) return;
  view.history.insert(at, item);
}

HistoryItem history_item(const ProjectedEvent& event) {
  return HistoryItem{event.index, event.id, event_kind_name(event.body->kind()), event.void_cause};
}

}  // namespace evl
