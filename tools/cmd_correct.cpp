// evledger retract | supersede | disqualify — sign and append a correction of an observed run.
#include <cstdio>
#include <string>

#include "events/event_builder.h"
#include "events/jcs.h"
#include "events/manifest_check.h"
#include "events/utf8.h"
#include "keys/signer.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/publish.h"

namespace evl::cli {

namespace {

constexpr const char* kCommon =
    "Runs are named by their manifest digests (sha256:<64 hex>). A correction never edits\n"
    "the log: the run stays, flagged, and leaves the ranking. --json prints {\"status\",\n"
    "\"index\",\"event\",\"kind\",\"target\",...} as one JSON line. DEST is --ledger DIR\n"
    "[--log-key FILE] or --to URL [--retry-for SECONDS], with [--receipts DIR] [--vkey LOGVKEY].\n"
    "\n"
    "Exit status: 0 appended; 1 the ledger's key policy refused it, or its receipt does not\n"
    "verify; 2 usage, including a malformed digest, slug or time (checked before anything is\n"
    "signed); 3 a file or the ledger cannot be read, or the server did not answer.\n"
    "\n";

constexpr const char* kRetractUsage =
    "usage: evledger retract DEST --key FILE --target RUN --reason TEXT [--json]\n"
    "\n"
    "Appends a retraction of RUN, signed by --key, which needs the curator role.\n";

constexpr const char* kSupersedeUsage =
    "usage: evledger supersede DEST --key FILE --target OLD --by NEW --reason TEXT [--json]\n"
    "\n"
    "Appends a supersession: NEW replaces OLD (a resubmission, a corrected measurement).\n"
    "Signed by --key, which needs the curator role.\n";

constexpr const char* kDisqualifyUsage =
    "usage: evledger disqualify DEST --key FILE --target RUN --source SLUG [--at RFC3339]\n"
    "                           --reason TEXT [--json]\n"
    "\n"
    "Appends a disqualification of RUN by its source SLUG (e.g. sol-execbench): the source\n"
    "itself withdrew the result. --at is when the source did so, e.g. 2026-09-01T12:00:00Z\n"
    "(default: now); it is also the event's claimed time, so the same disqualification with\n"
    "--at is one event however often it is sent. Signed by --key: a curator, or an importer\n"
    "whose scope holds SLUG. The projections apply it only when SLUG is the source that\n"
    "reported RUN.\n";

constexpr const char* kCuratorHint =
    "retractions and supersessions are signed by a key with the curator role; a "
    "disqualification by a curator or by an importer whose scope holds the source (an admin "
    "grants roles with 'evledger key grant')";


Result<std::string> reason_option(const Args& args) {
  auto reason = args.require("reason");
  if (!reason) return reason.error();
  if (reason->empty()) return usage_error("--reason is empty; say why the run is corrected");
  if (reason->find('\0') != std::string::npos || !is_valid_utf8(*reason)) {
    return usage_error("--reason is not valid UTF-8 text; write it in UTF-8");
  }
  return *reason;
}

// The source slug rule of KernelIndex manifests (spec.sourceNative.source).
Status check_source_slug(const std::string& slug) {
  bool ok = !slug.empty() && slug.size() <= 100 && slug[0] != '-';
  for (char c : slug) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (ok) return Status::ok();
  return usage_error("--source " + slug +
                     " is not a source slug: 1..100 of a-z, 0-9 and '-', not starting with "
                     "'-', as the run's spec.sourceNative.source writes it (e.g. sol-execbench)");
}


const char* kind_name(Correction::Kind kind) {
  switch (kind) {
    case Correction::Kind::kRetract: return "retract";
    case Correction::Kind::kSupersede: return "supersede";
    case Correction::Kind::kDisqualify: return "disqualify";
  }
  return "?";
}

// The correction of `kind` the arguments describe; every rule is checked before any file
// is opened.
Result<Correction> correction_from(const Args& args, Correction::Kind kind) {
  if (!args.positional().empty()) {
    return usage_error("unexpected argument '" + args.positional()[0] +
                       "'; quote --reason when it holds spaces");
  }
  Correction c;
  c.kind = kind;
  auto target = digest_option(args, "target", "a run digest");
  if (!target) return target.error();
  c.target = *target;
  auto reason = reason_option(args);
  if (!reason) return reason.error();
  c.reason = *reason;
  if (kind == Correction::Kind::kSupersede) {
    auto by = digest_option(args, "by", "a run digest");
    if (!by) return by.error();
    if (*by == c.target) {
      return usage_error("--by is the same run as --target; a run cannot supersede itself: "
                         "name the run that replaces it");
    }
    c.replacement = *by;
  }
  if (kind == Correction::Kind::kDisqualify) {
    auto source = args.require("source");
    if (!source) return source.error();
    EVL_RETURN_IF_ERROR(check_source_slug(*source));
    c.source = *source;
    c.at_ms = now_ms();  // unless --at says when; it is also the claimed time
    if (auto at = args.get("at")) {
      auto ms = parse_utc_time_ms(*at);
      if (!ms) {
        return usage_error("--at " + *at +
                           " is not an RFC 3339 UTC time; write it like 2026-09-01T12:00:00Z");
      }
      c.at_ms = *ms;
    }
  }
  return c;
}

int run_correction(const Args& args, Correction::Kind kind) {
  auto correction = correction_from(args, kind);
  if (!correction) return fail(correction.error());
  auto key = load_signer(args, "key");
  if (!key) return fail(key.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());
  auto body = correction_event(key->public_key(), *correction, now_ms());
  if (!body) return fail(body.error());
  Json line = Json::object();
  line.set("kind", kind_name(kind));
  line.set("target", digest_text(correction->target));
  std::string what;
  switch (kind) {
    case Correction::Kind::kRetract:
      what = "retraction of " + digest_text(correction->target);
      break;
    case Correction::Kind::kSupersede:
      line.set("replacement", digest_text(correction->replacement));
      what = "supersession of " + digest_text(correction->target) + " by " +
             digest_text(correction->replacement);
      break;
    case Correction::Kind::kDisqualify:
      line.set("source", correction->source);
      line.set("atMs", correction->at_ms);
      what = "disqualification of " + digest_text(correction->target) + " by source " +
             correction->source;
      break;
  }
  return publish_and_report(*destination, *key, *body, what, kCuratorHint, args, line, "");
}

const std::vector<OptionSpec> kRetractOptions =
    with_destination_options({{"key"}, {"target"}, {"reason"}, {"json", false}});
const std::vector<OptionSpec> kSupersedeOptions =
    with_destination_options({{"key"}, {"target"}, {"by"}, {"reason"}, {"json", false}});
const std::vector<OptionSpec> kDisqualifyOptions = with_destination_options(
    {{"key"}, {"target"}, {"source"}, {"at"}, {"reason"}, {"json", false}});

const std::string kRetractHelp =
    std::string(kRetractUsage) + "\n" + kCommon + kDestinationHelp;
const std::string kSupersedeHelp =
    std::string(kSupersedeUsage) + "\n" + kCommon + kDestinationHelp;
const std::string kDisqualifyHelp =
    std::string(kDisqualifyUsage) + "\n" + kCommon + kDestinationHelp;

}  // namespace

int cmd_retract(const std::vector<std::string>& argv) {
  return run_command(argv, kRetractOptions, kRetractHelp.c_str(), [](const Args& args) {
    return run_correction(args, Correction::Kind::kRetract);
  });
}

int cmd_supersede(const std::vector<std::string>& argv) {
  return run_command(argv, kSupersedeOptions, kSupersedeHelp.c_str(), [](const Args& args) {
    return run_correction(args, Correction::Kind::kSupersede);
  });
}

int cmd_disqualify(const std::vector<std::string>& argv) {
  return run_command(argv, kDisqualifyOptions, kDisqualifyHelp.c_str(), [](const Args& args) {
    return run_correction(args, Correction::Kind::kDisqualify);
  });
}

}  // namespace evl::cli
