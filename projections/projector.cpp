#include "projections/projector.h"

#include <algorithm>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/evidence.h"
#include "projections/internal/apply.h"
#include "projections/internal/registry.h"
#include "projections/internal/store_keys.h"

namespace evl {
namespace {

Json parse_metadata(const std::string& text) {
  if (text.empty()) return Json();
  auto parsed = parse_json(text);
  return parsed && parsed->is_object() ? *parsed : Json();
}

void add_artifact(Json& artifacts, const Json& spec, std::string_view path, const char* kind) {
  const Json* at = json_path(spec, path);
  auto uri = at != nullptr ? json_string(*at, "uri") : std::nullopt;
  if (!uri) return;
  Json a = Json::object();
  a.set("kind", kind);
  a.set("uri", *uri);
  a.set("digest", at->find("digest") != nullptr ? *at->find("digest") : Json());
  a.set("raw", true);
  artifacts.as_array().push_back(std::move(a));
}

Json run_artifacts(const Json& spec) {
  Json artifacts = Json::array();
  add_artifact(artifacts, spec, "evidence.logs", "logs");
  add_artifact(artifacts, spec, "evidence.rawSamples", "rawSamples");
  add_artifact(artifacts, spec, "timing.rawSamples", "timingRawSamples");
  if (auto repository = json_string(spec, "evidence.harness.repository")) {
    Json a = Json::object();
    a.set("kind", "harness");
    a.set("repository", *repository);
    a.set("commit", json_string(spec, "evidence.harness.commit").value_or(""));
    a.set("raw", false);
    artifacts.as_array().push_back(std::move(a));
  }
  return artifacts;
}

// A view from the observed manifest alone.
RunView new_run_view(const Digest& run, const Json& manifest, const Json& metadata) {
  static const Json kEmpty = Json::object();
  const Json* spec_member = manifest.find("spec");
  const Json& spec = spec_member != nullptr && spec_member->is_object() ? *spec_member : kEmpty;
  RunView v;
  v.run = run;
  v.name = json_string(metadata, "name").value_or("");
  v.title = json_string(metadata, "title").value_or("");
  v.benchmark = json_string(spec, "sourceNative.benchmark").value_or("");
  v.source = json_string(spec, "sourceNative.source").value_or("");
  v.external_id = json_string(spec, "sourceNative.externalId").value_or("");
  v.status = json_string(spec, "status").value_or("");
  v.observed_at = json_string(spec, "observedAt").value_or("");
  v.protocol_digest = json_string(spec, "protocolDigest").value_or("");
  v.environment_digest = json_string(spec, "environmentDigest").value_or("");
  v.workload_digest = json_string(spec, "workloadDigest").value_or("");
  v.implementation_digest = json_string(spec, "implementationDigest").value_or("");
  v.primary = primary_measurement(spec);
  v.source_native = source_native_metrics(spec);
  if (const Json* c = spec.find("correctness")) v.correctness = *c;
  v.artifacts = run_artifacts(spec);
  return v;
}

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

Status apply_manifest(ApplyContext& ctx, const ManifestEvent& event) {
  const Digest digest = sha256(as_bytes(event.manifest.canonical));
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
  auto manifest = parse_json(event.manifest.canonical);
  if (!manifest || !manifest->is_object()) {
    return record_skipped(ctx,
                          "the manifest is not a JSON object: " +
                              (manifest ? std::string("wrong type") : manifest.error().message()));
  }
  ManifestRecord record{
      digest, json_string(*manifest, "kind").value_or(""), ctx.event.index, ctx.event.id,
      manifest_summary(digest, *manifest, parse_metadata(event.manifest.metadata))};
  const ManifestFacts facts = manifest_facts(record.summary);
  ctx.state.put_manifest(std::move(record));
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
Status take_over(ApplyContext& ctx, RunView& view, const Json& manifest, const Json& metadata) {
  ViewBefore before = view_before(view);
  view.void_cause.reset();
  view.event = ctx.event.id;
  view.index = ctx.event.index;
  add_history(view, history_item(ctx.event));
  ctx.state.put_manifest(ManifestRecord{view.run, "BenchmarkRun", ctx.event.index, ctx.event.id,
                                       manifest_summary(view.run, manifest, metadata)});
  return store_run_view(ctx, view, before);
}

Status apply_observation(ApplyContext& ctx, const Observation& observation) {
  const Digest digest = sha256(as_bytes(observation.manifest.canonical));
  auto existing = ctx.state.find_run(digest);
  if (!existing) return existing.error();
  if (*existing != nullptr && (!(*existing)->void_cause || ctx.event.void_cause)) {
    return Status::ok();  // the run is already observed
  }
  auto registered = ctx.state.find_manifest(digest);
  if (!registered) return registered.error();
  if (*registered != nullptr) return Status::ok();  // first registration wins
  auto manifest = parse_json(observation.manifest.canonical);
  if (!manifest || json_string(*manifest, "kind") != "BenchmarkRun") {
    return record_skipped(ctx,
                          "an observation carries a BenchmarkRun manifest; this one " +
                              (manifest ? std::string("is not one") : manifest.error().message()));
  }
  Json metadata = parse_metadata(observation.manifest.metadata);
  if (*existing != nullptr) return take_over(ctx, **existing, *manifest, metadata);

  RunView& view = ctx.state.add_run(new_run_view(digest, *manifest, metadata));
  view.event = ctx.event.id;
  view.index = ctx.event.index;
  view.void_cause = ctx.event.void_cause;
  add_history(view, history_item(ctx.event));
  EVL_RETURN_IF_ERROR(resolve_references(ctx.state, view));
  EVL_RETURN_IF_ERROR(replay_orphans(ctx, view));
  if (!view.void_cause) {
    ctx.state.put_manifest(ManifestRecord{digest, "BenchmarkRun", ctx.event.index, ctx.event.id,
                                          manifest_summary(digest, *manifest, metadata)});
  }
  if (!view.benchmark.empty()) ctx.state.put(store_keys::benchmark(view.benchmark, digest), "");
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

Status check_order(FoldState& state, uint64_t index) {
  auto next = state.next();
  if (!next) return next.error();
  if (!next->has_value()) return Status::ok();
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
  EVL_RETURN_IF_ERROR(check_order(state, event.index));
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

ProjectionBatch::ProjectionBatch(ProjectionStore& store)
    : state_(std::make_unique<FoldState>(store)) {}

ProjectionBatch::~ProjectionBatch() = default;

Status ProjectionBatch::apply(const ProjectedEvent& event) { return apply_event(*state_, event); }

Status ProjectionBatch::flush() { return state_->flush(); }

Status ProjectionBatch::flush_and_forget() {
  EVL_RETURN_IF_ERROR(state_->flush());
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
                         run_membership(view), ctx.leaders);
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
