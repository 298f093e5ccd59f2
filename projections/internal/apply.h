// projections/internal/apply.h — the steps of Projector::apply, shared by projector.cpp
// (manifests, observations, views) and targets.cpp (reruns, attestations, corrections).
//
// Thread safety: as Projector: one state, one thread.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "projections/internal/fold_state.h"
#include "projections/internal/groups.h"
#include "projections/projector.h"
#include "projections/run_view.h"

namespace evl {

struct ApplyContext {
  FoldState& state;
  const ProjectedEvent& event;
  LeaderChanges leaders;
};

// What a view looked like before a change: its group entry, the manifests it waited on and
// the index its waiting entries are filed under.
struct ViewBefore {
  std::optional<Membership> membership;
  std::vector<std::string> missing;
  uint64_t index = 0;
};
ViewBefore view_before(const RunView& view);

// Refreshes the derived members, stores the view (one from ctx.state: find_run or add_run),
// files its waiting entries and moves its group membership. `before` is nullopt for a new view.
Status store_run_view(ApplyContext& ctx, RunView& view, const std::optional<ViewBefore>& before);
// Adds a history item, keeping the history in index order with one item per event.
void add_history(RunView& view, const HistoryItem& item);
HistoryItem history_item(const ProjectedEvent& event);

// Fills a rerun's hardware from the registry when its environment manifest is there.
Status resolve_rerun_hardware(FoldState& state, RerunRecord& rerun);

using TargetRecord = std::variant<RerunRecord, AttestationRecord, CorrectionRecord>;
// Puts a record on its target's view, or keeps it aside until the target is observed.
Status attach(ApplyContext& ctx, const Digest& target, TargetRecord record);
// Moves the records kept aside for a new view onto it (before it is first stored).
Status replay_orphans(ApplyContext& ctx, RunView& view);

Status apply_rerun(ApplyContext& ctx, const Rerun& rerun);
Status apply_attestation(ApplyContext& ctx, const Attestation& attestation);
Status apply_correction(ApplyContext& ctx, const Correction& correction);

// The run or manifest an event names: a rerun's, attestation's or correction's target, the
// digest of the manifest a manifest event or observation carries; nullopt for key events.
std::optional<Digest> event_target(const EventBody& body);

// s/<index>: an event whose content the fold cannot use, with why.
Status record_skipped(ApplyContext& ctx, const std::string& reason);
// v/<index>: a void event, its kind, cause and target.
Status record_void(ApplyContext& ctx);

}  // namespace evl
