// evledger attest — sign and append a community attestation about an observed run.
#include <cstdio>
#include <string>

#include "events/event_builder.h"
#include "events/jcs.h"
#include "events/utf8.h"
#include "keys/signer.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/publish.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger attest (--ledger DIR [--log-key FILE] | --to URL [--retry-for SECONDS])\n"
    "                       --key FILE --target RUN\n"
    "                       --type reproduced|could_not_reproduce|environment_note|\n"
    "                              regression_observed\n"
    "                       --text TEXT [--evidence-url https://...] [--observed-ns N]\n"
    "                       [--environment TEXT] [--receipts DIR] [--vkey LOGVKEY] [--json]\n"
    "\n"
    "Appends an attestation about the observed run RUN (its manifest digest, sha256:<64 hex>),\n"
    "signed by --key: any key the ledger has granted may attest. Attestations are shown with\n"
    "the run (replications and notes) but never change its evidence level; only controlled\n"
    "reruns do.\n"
    "\n"
    "--text           what was seen, at most 2000 characters (Unicode code points)\n"
    "--evidence-url   where the evidence lives: an https:// URL, at most 2000 characters\n"
    "--observed-ns    the latency you measured, in whole nanoseconds (1 to 2^53-1)\n"
    "--environment    a one-line summary of your GPU, driver and toolkit\n"
    "--json           print {\"status\",\"index\",\"event\",\"target\",\"type\"} as one JSON line\n"
    "--text and --environment hold no control characters (--text may hold line feeds and\n"
    "tabs).\n"
    "The claimed time is the clock's: an attestation's input states no time of its own, so the\n"
    "same command run twice appends two attestations.\n"
    "\n"
    "Exit status: 0 appended; 1 the ledger's key policy refused it, or its receipt does not\n"
    "verify; 2 usage, including any argument that breaks a rule above (checked before\n"
    "anything is signed); 3 a file or the ledger cannot be read, or the server did not answer.\n";

constexpr const char* kAttestorHint =
    "any key the ledger has granted may attest; an admin grants one with "
    "'evledger key grant --role attestor'";



// The largest --observed-ns: 2^53-1, the largest latency a KernelIndex manifest holds (its
// latencyNs maximum) and the largest integer every JSON reader keeps exact.
constexpr uint64_t kMaxObservedNs = (uint64_t{1} << 53) - 1;

// Event text must be UTF-8 without NUL bytes (the decoder's rule for every Text field), and
// what evledger writes holds no control character (C0, DEL, C1) but a line feed or a tab where
// `lines` allows them: they would reach other people's terminals (which show them escaped,
// events/utf8.h visible_text, as they do the text of older events).
Status check_text(const std::string& option, const std::string& value, bool lines) {
  if (value.find('\0') != std::string::npos || !is_valid_utf8(value)) {
    return usage_error("--" + option + " is not valid UTF-8 text; write it in UTF-8");
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    const bool c1 = c == 0xC2 && i + 1 < value.size() &&
                    static_cast<unsigned char>(value[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(value[i + 1]) <= 0x9F;
    if ((c < 0x20 && !(lines && (c == '\n' || c == '\t'))) || c == 0x7F || c1) {
      return usage_error("--" + option + " holds the control character " +
                         visible_text(value.substr(i, c1 ? 2 : 1)) + " at byte " +
                         std::to_string(i) + "; write plain text" +
                         (lines ? " (line feeds and tabs may stay)" : " on one line"));
    }
  }
  return Status::ok();
}

Result<Attestation> attestation_from(const Args& args) {
  Attestation a;
  auto target = digest_option(args, "target", "a run digest");
  if (!target) return target.error();
  a.target = *target;
  auto type_name = args.require("type");
  if (!type_name) return type_name.error();
  auto type = parse_attestation_type(*type_name);
  if (!type) {
    return usage_error("--type " + *type_name +
                       " is not an attestation type; types are reproduced, "
                       "could_not_reproduce, environment_note, regression_observed");
  }
  a.type = *type;
  auto text = args.require("text");
  if (!text) return text.error();
  EVL_RETURN_IF_ERROR(check_text("text", *text, true));
  if (text->empty()) return usage_error("--text is empty; say what you saw");
  // Named by its option here; the limit is the event's (events/event.h).
  if (utf8_length(*text) > kMaxAttestationText) {
    return usage_error("--text has " + std::to_string(utf8_length(*text)) +
                       " characters; an attestation's text is at most " +
                       std::to_string(kMaxAttestationText) +
                       ": shorten it and put the details behind --evidence-url");
  }
  a.text = *text;
  a.evidence_url = args.get("evidence-url").value_or("");
  if (args.has("evidence-url") && a.evidence_url.empty()) {
    return usage_error("--evidence-url is empty; leave it out when there is no evidence page");
  }
  auto ns = args.get_u64("observed-ns", 0,
                         {1, kMaxObservedNs, "whole nanoseconds up to 2^53-1; leave it out "
                                             "when you measured nothing"});
  if (!ns) return ns.error();
  a.observed_ns = *ns;
  a.environment = args.get("environment").value_or("");
  EVL_RETURN_IF_ERROR(check_text("environment", a.environment, false));
  // The event's own field rules (text length, evidence URL), checked before any signing.
  EventBody probe;
  probe.payload = a;
  if (Status fields = check_body_fields(probe); !fields) return usage_error(fields.message());
  return a;
}


int run(const Args& args) {
  if (!args.positional().empty()) {
    return fail(usage_error("unexpected argument '" + args.positional()[0] +
                            "'; quote --text when it holds spaces"));
  }
  auto attestation = attestation_from(args);
  if (!attestation) return fail(attestation.error());
  auto key = load_signer(args, "key");
  if (!key) return fail(key.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());
  // Claimed now: an attestation's input states no time (events/event_builder.h).
  auto body = attestation_event(key->public_key(), *attestation, now_ms());
  if (!body) return fail(body.error());
  std::string type = attestation_type_name(attestation->type);
  Json line = Json::object();
  line.set("target", digest_text(attestation->target));
  line.set("type", type);
  return publish_and_report(*destination, *key, *body,
                           type + " attestation of " + digest_text(attestation->target),
                           kAttestorHint, args, line, "");
}

}  // namespace

int cmd_attest(const std::vector<std::string>& argv) {
  static const std::string usage = std::string(kUsage) + "\n" + kDestinationHelp;
  return run_command(argv,
                     with_destination_options({{"key"}, {"target"}, {"type"}, {"text"},
                                               {"evidence-url"}, {"observed-ns"},
                                               {"environment"}, {"json", false}}),
                     usage.c_str(), run);
}

}  // namespace evl::cli
