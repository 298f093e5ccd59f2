#include "events/event_builder.h"

#include <algorithm>
#include <utility>

namespace evl {

namespace {

std::string rerun_only_message(const CheckedManifest& checked) {
  return checked.label +
         ": a BenchmarkRun without spec.sourceNative is a controlled rerun's manifest "
         "[rerun-only]; import takes source-reported runs: add spec.sourceNative {source, "
         "benchmark, externalId, metrics}, or submit the run with its target through a rerun";
}

// The body's field rules and budget, or the body itself.
Result<EventBody> checked_body(EventBody body) {
  EVL_RETURN_IF_ERROR(check_event_budget(body));
  return body;
}

EventBody body_of(const PublicKey& author, int64_t claimed_time_ms, Payload payload) {
  EventBody body;
  body.author = author;
  body.claimed_time_ms = claimed_time_ms;
  body.payload = std::move(payload);
  return body;
}

template <typename T>
void sort_unique(std::vector<T>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

std::string manifest_problems_text(const CheckedManifest& checked) {
  std::string all;
  for (const auto& p : checked.problems) all += (all.empty() ? "" : "\n") + p.message;
  return all;
}

Status check_event_budget(const EventBody& body) {
  EVL_RETURN_IF_ERROR(check_body_fields(body));
  const size_t size = encode_body(body).size();
  if (size > kMaxBodyBytes) {
    return rejected("the " + std::string(event_kind_name(body.kind())) + " body would be " +
                    std::to_string(size) + " bytes; a body is at most " +
                    std::to_string(kMaxBodyBytes) + ", so that it fits an entry of " +
                    std::to_string(kMaxEntryBytes) + " bytes with " +
                    std::to_string(kMaxSignatures) + " signatures: shorten its texts");
  }
  return Status::ok();
}

Status check_claimed_time(int64_t claimed_ms, int64_t clock_ms) {
  if (claimed_ms <= clock_ms || claimed_ms - clock_ms <= kMaxClaimAheadMs) return Status::ok();
  const int64_t ahead_h = (claimed_ms - clock_ms) / (3600 * 1000);
  return rejected("the event claims a time " + std::to_string(ahead_h / 24) + " days and " +
                  std::to_string(ahead_h % 24) + " hours after the log's clock; an event may "
                  "claim at most 366 days ahead (events/FORMAT.md, claimed time): check the "
                  "input's observedAt, or the signer's clock");
}

Result<EventBody> catalog_event(const PublicKey& author, CheckedManifest&& checked) {
  if (!checked.ok()) return rejected(manifest_problems_text(checked));
  if (checked.use == ManifestUse::kRerunOnly) return rejected(rerun_only_message(checked));
  // observed_at_ms is 0 for every kind but BenchmarkRun: a manifest claims no time.
  const int64_t claimed = checked.observed_at_ms;
  if (checked.use == ManifestUse::kObservation) {
    return body_of(author, claimed, Observation{std::move(checked.text)});
  }
  return body_of(author, claimed, ManifestEvent{std::move(checked.text)});
}

Result<EventBody> rerun_event(const PublicKey& author, const Digest& target,
                              CheckedManifest&& run, std::string cases) {
  if (!run.ok()) return rejected(manifest_problems_text(run));
  if (run.use == ManifestUse::kObservation) {
    return rejected(run.label +
                    ": spec.sourceNative is present [rerun-only]; a rerun's manifest is the "
                    "runner's own measurement: remove spec.sourceNative (a result reported by "
                    "source " + run.source + " is imported with 'evledger import')");
  }
  if (run.use != ManifestUse::kRerunOnly) {
    return rejected(run.label + ": is a " + run.kind +
                    " [rerun-only]; a rerun's manifest is a BenchmarkRun (register other "
                    "manifests with 'evledger import')");
  }
  if (run.digest == target) {
    return usage_error("the rerun's target is the rerun manifest's own digest; name the "
                       "observed run that this rerun repeats");
  }
  const size_t text_bytes = run.text.canonical.size() + run.text.metadata.size() + cases.size();
  if (text_bytes > kMaxManifestTextBytes) {
    return rejected("the rerun's manifest and cases take " + std::to_string(text_bytes) +
                    " bytes; an entry holds at most " + std::to_string(kMaxManifestTextBytes) +
                    " of them: leave per-case detail out of the cases or shorten metadata");
  }
  const int64_t claimed = run.observed_at_ms;
  return checked_body(body_of(author, claimed, Rerun{target, std::move(run.text), std::move(cases)}));
}

Result<EventBody> attestation_event(const PublicKey& author, Attestation attestation,
                                    int64_t clock_ms) {
  return checked_body(body_of(author, clock_ms, std::move(attestation)));
}

Result<EventBody> correction_event(const PublicKey& author, Correction correction,
                                   int64_t clock_ms) {
  if (correction.kind == Correction::Kind::kSupersede &&
      correction.target == correction.replacement) {
    return usage_error("the replacement is the same run as the target; a run cannot supersede "
                       "itself: name the run that replaces it");
  }
  // A disqualification states when the source withdrew the run: that is its claim.
  const int64_t claimed =
      correction.kind == Correction::Kind::kDisqualify ? correction.at_ms : clock_ms;
  return checked_body(body_of(author, claimed, std::move(correction)));
}

Result<EventBody> key_grant_event(const PublicKey& author, KeyGrant grant, int64_t clock_ms) {
  sort_unique(grant.roles);
  sort_unique(grant.scope);
  return checked_body(body_of(author, clock_ms, std::move(grant)));
}

Result<EventBody> key_revoke_event(const PublicKey& author, KeyRevoke revoke, int64_t clock_ms) {
  return checked_body(body_of(author, clock_ms, revoke));
}

}  // namespace evl
