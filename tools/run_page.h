// tools/run_page.h — a run view as a person reads it: the text of KernelIndex's run page
// (primary measurement, rank or why there is none, SOL score · speedup · cases faster, identity,
// correctness, workload, measurements, protocol, environment, artifacts, controlled reruns,
// replications and notes, corrections, the log events behind the view) and a citation that
// names what a reader needs to verify it.
//
// Rendering only: every fact comes from the view and from why it has no rank, both as
// projections/query.h reads them (it adds rank, group and the manifests' summaries to the view);
// no rule of the fold is decided here.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "events/json.h"
#include "projections/run_view.h"

namespace evl::cli {

struct RunPageContext {
  std::string origin;           // the log's name, for the citation ("" when unknown)
  std::string checkpoint_line;  // "In the checkpoint of size N, root R." ("" when none)
  std::vector<RankExclusion> unranked;  // why it has no rank (read_run_view), empty if ranked
};

// The exclusions as short phrases, with the view's details ("void (key compromised)",
// "superseded by sha256:4b0fec8eac456efb3692…").
std::vector<std::string> unranked_reasons(const Json& view,
                                         const std::vector<RankExclusion>& exclusions);

// The primary measurement as people read it: "159.8 µs mean" (nanoseconds in the largest unit
// that keeps the value at least 1, four significant digits), "12.5 TFLOP/s max" for other
// units; "-" when the view has none.
std::string primary_text(const Json& view);

// The page, lines ending in '\n'.
std::string run_page_text(const Json& view, const RunPageContext& context);

}  // namespace evl::cli
