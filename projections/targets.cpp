// The events that name a run: reruns, attestations, corrections; and the records kept aside
// for a run that is not observed yet (orphans), the void and the skipped records.
#include "projections/internal/apply.h"

#include <algorithm>

#include "events/bytes.h"
#include "events/jcs.h"
#include "events/kernelindex.h"
#include "projections/internal/registry.h"
#include "projections/internal/store_keys.h"

namespace evl {
namespace {

std::optional<std::string> scope_value(const std::vector<std::string>& scope,
                                       std::string_view prefix) {
  for (const std::string& entry : scope) {
    if (entry.size() > prefix.size() && entry.compare(0, prefix.size(), prefix) == 0) {
      return entry.substr(prefix.size());
    }
  }
  return std::nullopt;
}

const char* correction_kind_name(Correction::Kind kind) {
  switch (kind) {
    case Correction::Kind::kRetract:
      return "retract";
    case Correction::Kind::kSupersede:
      return "supersede";
    case Correction::Kind::kDisqualify:
      return "disqualify";
  }
  return "unknown";
}

template <typename T>
void insert_by_index(std::vector<T>& list, T record) {
  auto at = std::upper_bound(list.begin(), list.end(), record.index,
                             [](uint64_t index, const T& r) { return index < r.index; });
  list.insert(at, std::move(record));
}

void add_record(RunView& view, TargetRecord record) {
  if (auto* r = std::get_if<RerunRecord>(&record)) {
    add_history(view, HistoryItem{r->index, r->event, "rerun", r->void_cause});
    insert_by_index(view.reruns, std::move(*r));
  } else if (auto* a = std::get_if<AttestationRecord>(&record)) {
    add_history(view, HistoryItem{a->index, a->event, "attestation", a->void_cause});
    insert_by_index(view.attestations, std::move(*a));
  } else if (auto* c = std::get_if<CorrectionRecord>(&record)) {
    if (c->kind == "disqualify" && c->role == "target" && c->source != view.source) {
      c->ignored =
          "the run is reported by source \"" + view.source + "\", not \"" + c->source + "\"";
    }
    add_history(view, HistoryItem{c->index, c->event, "correction", c->void_cause});
    insert_by_index(view.corrections, std::move(*c));
  }
}

Json orphan_json(const TargetRecord& record) {
  Json out = Json::object();
  if (const auto* r = std::get_if<RerunRecord>(&record)) {
    out.set("type", "rerun");
    out.set("record", rerun_record_json(*r));
  } else if (const auto* a = std::get_if<AttestationRecord>(&record)) {
    out.set("type", "attestation");
    out.set("record", attestation_record_json(*a));
  } else {
    out.set("type", "correction");
    out.set("record", correction_record_json(std::get<CorrectionRecord>(record)));
  }
  return out;
}

Result<TargetRecord> parse_orphan(std::string_view text) {
  auto j = parse_json(text);
  const Json* record = j ? j->find("record") : nullptr;
  auto type = j ? json_string(*j, "type") : std::nullopt;
  if (record == nullptr || !type) return corrupt("a stored orphan record is damaged");
  if (*type == "rerun") {
    auto r = parse_rerun_record(*record);
    if (!r) return r.error();
    return TargetRecord(std::move(r).value());
  }
  if (*type == "attestation") {
    auto a = parse_attestation_record(*record);
    if (!a) return a.error();
    return TargetRecord(std::move(a).value());
  }
  auto c = parse_correction_record(*record);
  if (!c) return c.error();
  return TargetRecord(std::move(c).value());
}

const char* record_role(const TargetRecord& record) {
  const auto* c = std::get_if<CorrectionRecord>(&record);
  return c != nullptr ? c->role.c_str() : "target";
}

uint64_t record_index(const TargetRecord& record) {
  return std::visit([](const auto& r) { return r.index; }, record);
}

Json event_record(const ProjectedEvent& event) {
  Json out = Json::object();
  out.set("index", event.index);
  out.set("event", digest_text(event.id));
  out.set("kind", event_kind_name(event.body->kind()));
  out.set("author", event.author_name);
  auto target = event_target(*event.body);
  out.set("target", target ? Json(digest_text(*target)) : Json());
  return out;
}

}  // namespace

std::optional<Digest> event_target(const EventBody& body) {
  if (const auto* r = std::get_if<Rerun>(&body.payload)) return r->target;
  if (const auto* a = std::get_if<Attestation>(&body.payload)) return a->target;
  if (const auto* c = std::get_if<Correction>(&body.payload)) return c->target;
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
    return sha256(as_bytes(m->manifest.canonical));
  }
  if (const auto* o = std::get_if<Observation>(&body.payload)) {
    return sha256(as_bytes(o->manifest.canonical));
  }
  return std::nullopt;
}

Status resolve_rerun_hardware(FoldState& state, RerunRecord& rerun) {
  if (rerun.hardware) return Status::ok();
  auto digest = parse_digest_text(rerun.environment_digest);
  if (!digest) return Status::ok();
  auto found = state.find_manifest(*digest);
  if (!found) return found.error();
  if (*found == nullptr) return Status::ok();
  rerun.hardware = (*found)->hardware;
  return Status::ok();
}

Status attach(ApplyContext& ctx, const Digest& target, TargetRecord record) {
  auto view = ctx.state.find_run(target);
  if (!view) return view.error();
  if (*view == nullptr) {
    ctx.state.put(store_keys::orphan(target, record_index(record), record_role(record)),
                  jcs_serialize(orphan_json(record)));
    return Status::ok();
  }
  ViewBefore before = view_before(**view);
  add_record(**view, std::move(record));
  return store_run_view(ctx, **view, before);
}

Status replay_orphans(ApplyContext& ctx, RunView& view) {
  std::vector<std::pair<std::string, std::string>> orphans;
  EVL_RETURN_IF_ERROR(ctx.state.scan(store_keys::orphan_prefix(view.run),
                                     [&](std::string_view k, std::string_view v) {
                                       orphans.emplace_back(k, v);
                                       return true;
                                     }));
  for (const auto& [key, text] : orphans) {
    auto record = parse_orphan(text);
    if (!record) return record.error();
    if (auto* r = std::get_if<RerunRecord>(&*record)) {
      EVL_RETURN_IF_ERROR(resolve_rerun_hardware(ctx.state, *r));
    }
    add_record(view, std::move(record).value());
    ctx.state.erase(key);
  }
  return Status::ok();
}

Status apply_rerun(ApplyContext& ctx, const Rerun& rerun) {
  auto manifest = parse_json(rerun.run.canonical);
  if (!manifest || json_string(*manifest, "kind") != "BenchmarkRun") {
    return record_skipped(ctx,
                          "a rerun carries a BenchmarkRun manifest; this one " +
                              (manifest ? std::string("is not one") : manifest.error().message()));
  }
  static const Json kEmpty = Json::object();
  const Json* spec_member = manifest->find("spec");
  const Json& spec = spec_member != nullptr && spec_member->is_object() ? *spec_member : kEmpty;
  const ProjectedEvent& e = ctx.event;
  RerunRecord r;
  r.index = e.index;
  r.event = e.id;
  r.manifest = sha256(as_bytes(rerun.run.canonical));
  r.runner = e.author_name;
  r.owner = scope_value(e.author_scope, "owner:");
  r.host = scope_value(e.author_scope, "host:");
  r.status = json_string(spec, "status").value_or("");
  r.primary = primary_measurement(spec);
  r.environment_digest = json_string(spec, "environmentDigest").value_or("");
  r.tolerance_milli = e.rerun_tolerance_milli;
  r.cases = rerun.cases;
  r.void_cause = e.void_cause;
  EVL_RETURN_IF_ERROR(resolve_rerun_hardware(ctx.state, r));
  return attach(ctx, rerun.target, std::move(r));
}

Status apply_attestation(ApplyContext& ctx, const Attestation& attestation) {
  const ProjectedEvent& e = ctx.event;
  AttestationRecord a;
  a.index = e.index;
  a.event = e.id;
  a.author = e.author_name;
  a.type = attestation_type_name(attestation.type);
  a.text = attestation.text;
  a.evidence_url = attestation.evidence_url;
  a.observed_ns = attestation.observed_ns;
  a.environment = attestation.environment;
  a.void_cause = e.void_cause;
  return attach(ctx, attestation.target, std::move(a));
}

Status apply_correction(ApplyContext& ctx, const Correction& correction) {
  const ProjectedEvent& e = ctx.event;
  CorrectionRecord c;
  c.index = e.index;
  c.event = e.id;
  c.author = e.author_name;
  c.kind = correction_kind_name(correction.kind);
  c.role = "target";
  c.reason = correction.reason;
  c.target = correction.target;
  if (correction.kind == Correction::Kind::kSupersede) c.replacement = correction.replacement;
  if (correction.kind == Correction::Kind::kDisqualify) {
    c.source = correction.source;
    c.at_ms = correction.at_ms;
  }
  c.void_cause = e.void_cause;
  EVL_RETURN_IF_ERROR(attach(ctx, correction.target, c));
  if (correction.kind != Correction::Kind::kSupersede) return Status::ok();
  c.role = "replacement";
  return attach(ctx, correction.replacement, std::move(c));
}

Status record_skipped(ApplyContext& ctx, const std::string& reason) {
  Json out = event_record(ctx.event);
  out.set("reason", reason);
  ctx.state.put_once(store_keys::skipped(ctx.event.index), jcs_serialize(out));
  return Status::ok();
}

Status record_void(ApplyContext& ctx) {
  Json out = event_record(ctx.event);
  out.set("cause", *ctx.event.void_cause);
  ctx.state.put_once(store_keys::void_event(ctx.event.index), jcs_serialize(out));
  return Status::ok();
}

}  // namespace evl
