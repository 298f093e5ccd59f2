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

#include <cstdint>
#include <optional>
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

// The source's own figures: "SOL 0.9464 · 10.26× reference · 16/16 cases faster" (those it
// has), "" when it has none.
std::string source_native_text(const Json& view);

// The page as sections of items, for the CLI's text and the server's HTML alike.
struct RunPageItem {
  enum class Kind { kLine, kRow, kListItem };
  Kind kind = Kind::kLine;
  std::string label;  // a row's label
  std::string text;   // what it says (a row's value)
  std::optional<uint64_t> index;  // the log entry a list item came from
  std::string run;    // a run the item names ("sha256:..."), or ""
  std::string group;  // a comparison group it names, or ""
  bool copy = false;  // the value is worth a copy button (the run digest)
};
struct RunPageSection {
  std::string title;
  std::vector<RunPageItem> items;
};
struct RunPage {
  std::string heading;  // "Run 0067a718"
  std::string title;    // the run's title
  std::vector<RunPageSection> sections;
};
RunPage run_page(const Json& view, const RunPageContext& context);

// The page as text, lines ending in '\n'.
std::string run_page_text(const Json& view, const RunPageContext& context);

}  // namespace evl::cli
