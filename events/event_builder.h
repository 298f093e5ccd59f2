// events/event_builder.h — the rules that turn a publisher's input into an event body, in one
// place: the CLI's write commands, the importer, the activity generator and publishing to a
// remote log all build their bodies here, so the same input gives the same body, byte for
// byte, wherever it is built and wherever it is sent.
//
// Claimed time (events/FORMAT.md "Claimed time"): the time the input itself states, where it
// states one; the author's clock only where it states none.
//   observation, rerun   the BenchmarkRun's spec.observedAt
//   manifest             0: a manifest states no time, and is registered once by digest
//   disqualification     its `at` (when the source withdrew the run)
//   attestation, retraction, supersession, key grant, key revoke
//                        `clock_ms`, the author's clock when signing: the act is the fact
// So a body whose input carries a time is a function of the input and the author alone: a
// re-import, a repeated rerun or a resend after a lost answer is the same event (present),
// never a second one.
//
// Size budget: every body built here fits in an entry together with kMaxSignatures
// signatures (kMaxBodyBytes), so it can always be signed, co-signed and appended. A manifest's
// own budget is check_manifest's entry-size rule (events/manifest_check.h).
//
// Errors: kRejected naming the rule in brackets ("[rerun-only]") or the event field rule
// (check_body_fields); kUsage for a request that cannot mean anything (a run that reruns or
// supersedes itself).
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "events/event.h"
#include "events/manifest_check.h"

namespace evl {

// The largest body an entry holds with kMaxSignatures signatures: an entry of b body words and
// n signatures is 18 + b + 14·(n − 1) words (events/FORMAT.md), at most kMaxEntryBytes.
inline constexpr size_t kMaxBodyBytes =
    (kMaxEntryBytes / 8 - 18 - 14 * (kMaxSignatures - 1)) * 8;

// How far ahead of a log's clock an event may claim to be: a year, far more than any skewed
// clock or any honest date (the generated catalogs reach some months ahead). A log admits no
// event claimed later (ledger/ledger.h): a run "observed" in 2099 would stay last in its
// group's history forever. This is the log's admission rule, not part of an entry's validity: the
// audit has no clock to hold an entry to, so it never applies it.
inline constexpr int64_t kMaxClaimAheadMs = 366LL * 24 * 3600 * 1000;

// kRejected when `claimed_ms` is more than kMaxClaimAheadMs after `clock_ms`.
Status check_claimed_time(int64_t claimed_ms, int64_t clock_ms);

// The rule id of a catalog document that only a rerun may carry.
inline constexpr std::string_view kRuleRerunOnly = "rerun-only";

// The event `evledger import` appends for a checked catalog document: an observation for a
// BenchmarkRun with spec.sourceNative, a manifest event for every other kind. kRejected with
// every problem, one per line, when `checked` has problems; kRejected [rerun-only] for a
// BenchmarkRun without spec.sourceNative. On success the manifest text is moved out of
// `checked`.
Result<EventBody> catalog_event(const PublicKey& author, CheckedManifest&& checked);

// A controlled rerun of the observed run `target`, measured as `run` (its own BenchmarkRun,
// without spec.sourceNative), with per-case results `cases` (RFC 8785 JSON of an array, or
// empty). kRejected with `run`'s problems, or [rerun-only] when `run` is an observation or
// another kind; kUsage when `target` is `run`'s own digest; kRejected when the manifest,
// its metadata and the cases pass the manifest budget (kMaxManifestTextBytes).
Result<EventBody> rerun_event(const PublicKey& author, const Digest& target,
                              CheckedManifest&& run, std::string cases);

// An attestation, claimed at `clock_ms`. kRejected by the attestation's field rules (text
// length, evidence URL) or the size budget.
Result<EventBody> attestation_event(const PublicKey& author, Attestation attestation,
                                    int64_t clock_ms);

// A retraction, supersession or disqualification. A disqualification claims its `at_ms` (set
// it to the clock when the source's time is not known); the others claim `clock_ms`.
// kUsage for a supersession by the run itself; kRejected by the field rules or the budget.
Result<EventBody> correction_event(const PublicKey& author, Correction correction,
                                   int64_t clock_ms);

// A key grant, claimed at `clock_ms`; the roles and scope are put in order and each kept
// once (the field rules want them strictly increasing). kRejected by the field rules.
Result<EventBody> key_grant_event(const PublicKey& author, KeyGrant grant, int64_t clock_ms);

// A key revocation, claimed at `clock_ms`. kRejected by the field rules (voidFrom only, and
// always, for a compromise).
Result<EventBody> key_revoke_event(const PublicKey& author, KeyRevoke revoke, int64_t clock_ms);

// Ok when `body` passes check_body_fields and its encoding fits kMaxBodyBytes.
Status check_event_budget(const EventBody& body);

// Every problem of a checked manifest, one per line ("" when it has none).
std::string manifest_problems_text(const CheckedManifest& checked);

}  // namespace evl
