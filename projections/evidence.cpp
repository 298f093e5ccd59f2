#include "projections/evidence.h"

#include <algorithm>
#include <cmath>

namespace evl {
namespace {

constexpr double kTwoTo53 = 9007199254740992.0;

bool exact_integer(double v) { return v >= 0 && v < kTwoTo53 && std::floor(v) == v; }

bool same_gpu(const Hardware& a, const Hardware& b) {
  return !a.product.empty() && !a.architecture.empty() && a.product == b.product &&
         a.architecture == b.architecture;
}

bool has_flag(const RunView& view, std::string_view kind) {
  for (const auto& c : view.corrections) {
    if (c.kind == kind && c.role == "target" && !c.void_cause && !c.ignored) return true;
  }
  return false;
}

bool has_verdict(const RunView& view, Verdict verdict) {
  for (const auto& r : view.reruns) {
    if (!r.void_cause && r.verdict == verdict) return true;
  }
  return false;
}

void add_missing(std::vector<std::string>& missing, const std::string& digest) {
  if (parse_digest_text(digest).has_value()) missing.push_back(digest);
}

bool raw_evidence(const Json& artifacts) {
  if (!artifacts.is_array()) return false;
  for (const Json& a : artifacts.as_array()) {
    const Json* raw = a.find("raw");
    if (raw != nullptr && raw->is_bool() && raw->as_bool()) return true;
  }
  return false;
}

}  // namespace

bool within_ratio(double rerun, double observed, uint64_t milli) {
  if (exact_integer(rerun) && exact_integer(observed)) {
    __extension__ typedef unsigned __int128 u128;
    return static_cast<u128>(rerun) * 1000u <=
           static_cast<u128>(observed) * (1000u + static_cast<u128>(milli));
  }
  return rerun * 1000.0 <= observed * (1000.0 + static_cast<double>(milli));
}

VerdictOutcome rerun_verdict(const std::string& rerun_status,
                             const std::optional<PrimaryMeasurement>& rerun,
                             const std::optional<Hardware>& rerun_hardware,
                             const std::optional<PrimaryMeasurement>& observed,
                             const std::optional<Hardware>& observed_hardware,
                             uint32_t tolerance_milli) {
  if (rerun_status != "passed") return {Verdict::kRefuted, std::nullopt};
  if (!rerun_hardware || !observed_hardware) return {Verdict::kPending, std::nullopt};
  if (!same_gpu(*rerun_hardware, *observed_hardware)) return {Verdict::kInconclusive, std::nullopt};
  if (!rerun || !observed || rerun->metric != observed->metric ||
      rerun->statistic != observed->statistic || rerun->unit != observed->unit ||
      !(observed->value > 0)) {
    return {Verdict::kInconclusive, std::nullopt};
  }
  VerdictOutcome out;
  out.ratio = rerun->value / observed->value;
  if (within_ratio(rerun->value, observed->value, tolerance_milli)) {
    out.verdict = Verdict::kConfirmed;
  } else if (!within_ratio(rerun->value, observed->value, 2 * uint64_t{tolerance_milli})) {
    out.verdict = Verdict::kContradicted;
  } else {
    out.verdict = Verdict::kInconclusive;
  }
  return out;
}

EvidenceLevel evidence_level(const std::vector<Confirmation>& confirmations, bool source_available,
                             bool identity_complete, bool raw_evidence) {
  for (size_t i = 0; i < confirmations.size(); ++i) {
    for (size_t j = i + 1; j < confirmations.size(); ++j) {
      const auto& a = confirmations[i];
      const auto& b = confirmations[j];
      if (a.owner && b.owner && a.host && b.host && *a.owner != *b.owner && *a.host != *b.host) {
        return EvidenceLevel::kReplicated;
      }
    }
  }
  if (!confirmations.empty()) return EvidenceLevel::kVerified;
  if (source_available && identity_complete && raw_evidence) return EvidenceLevel::kReproducible;
  return EvidenceLevel::kReported;
}

bool has_comparison_inputs(const RunView& view) {
  return view.operation_digest && view.correctness_key && !view.workload_digest.empty() &&
         !view.protocol_digest.empty() && !view.environment_digest.empty();
}

std::optional<ComparisonInputs> view_comparison_inputs(const RunView& view) {
  if (!has_comparison_inputs(view)) return std::nullopt;
  return ComparisonInputs{*view.operation_digest, view.workload_digest,
                          view.protocol_digest,   view.environment_digest,
                          *view.correctness_key,  comparison_metric(view.primary)};
}

void refresh_run_view(RunView& view) {
  for (RerunRecord& r : view.reruns) {
    auto outcome =
        rerun_verdict(r.status, r.primary, r.hardware, view.primary, view.gpu, r.tolerance_milli);
    r.verdict = outcome.verdict;
    r.ratio = outcome.ratio;
  }

  view.comparison_key.reset();
  if (auto inputs = view_comparison_inputs(view)) {
    view.comparison_key = digest_text(comparison_key(*inputs));
  }

  view.missing.clear();
  if (!view.has_protocol) add_missing(view.missing, view.protocol_digest);
  if (!view.has_environment) add_missing(view.missing, view.environment_digest);
  if (!view.has_workload) add_missing(view.missing, view.workload_digest);
  if (!view.has_implementation) add_missing(view.missing, view.implementation_digest);
  for (const RerunRecord& r : view.reruns) {
    if (!r.hardware) add_missing(view.missing, r.environment_digest);
  }
  std::sort(view.missing.begin(), view.missing.end());
  view.missing.erase(std::unique(view.missing.begin(), view.missing.end()), view.missing.end());

  std::vector<Confirmation> confirmations;
  for (const RerunRecord& r : view.reruns) {
    if (!r.void_cause && r.verdict == Verdict::kConfirmed)
      confirmations.push_back({r.owner, r.host});
  }
  const bool identity_complete =
      view.has_protocol && view.has_environment && view.has_workload && view.has_implementation;
  view.evidence = evidence_level(confirmations, view.source_available, identity_complete,
                                 raw_evidence(view.artifacts));

  view.flags.clear();
  if (has_verdict(view, Verdict::kContradicted)) view.flags.push_back("contradicted");
  if (has_verdict(view, Verdict::kRefuted)) view.flags.push_back("refuted");
  if (has_flag(view, "retract")) view.flags.push_back("retracted");
  if (has_flag(view, "supersede")) view.flags.push_back("superseded");
  if (has_flag(view, "disqualify")) view.flags.push_back("disqualified");

  view.superseded_by.reset();
  for (const auto& c : view.corrections) {
    if (c.kind == "supersede" && c.role == "target" && !c.void_cause)
      view.superseded_by = c.replacement;
  }
}

}  // namespace evl
