// evledger status — one screen about a log, a server or a mirror (ledger/log_status.h): size,
// the published checkpoint and its age, cosignatures per witness, the lag behind an upstream.
// Thin: options, the library's report, its rendering.
#include <nlohmann/json.hpp>

#include "events/utf8.h"
#include "ledger/log_status.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger status (--url URL | --ledger DIR) [--policy FILE] [--vkey VKEY]\n"
    "                       [--upstream URL] [--json]\n"
    "\n"
    "One screen for an operator or a mirror: the log's size, the checkpoint it publishes (a\n"
    "server's /checkpoint; a ledger's witnessed checkpoint from serve --policy, else its newest)\n"
    "and its age (since its newest cosignature: checkpoints carry no time of their own), and\n"
    "the cosignatures on it per witness. --policy FILE (a C2SP tlog-policy) verifies each\n"
    "cosignature and says whether the quorum is met; without it the lines are listed as\n"
    "unverified. --vkey checks the log's signature on a URL's checkpoint (a ledger's own key\n"
    "is used otherwise). --upstream URL (a mirror's source, or any copy of the log) adds how\n"
    "many entries the published checkpoint is behind the upstream's. --json prints one object.\n"
    "Exit 0; 1 when --policy is given and the published checkpoint does not meet its quorum\n"
    "(or there is none); 3 when the source cannot be read.\n";

std::string size_text(const std::optional<uint64_t>& n) {
  return n ? std::to_string(*n) : "unknown";
}

nlohmann::ordered_json status_json(const LogStatus& s) {
  nlohmann::ordered_json j;
  j["source"] = s.source;
  j["logSize"] = s.log_size ? nlohmann::ordered_json(*s.log_size) : nlohmann::ordered_json();
  if (s.published) {
    j["published"] = {{"origin", s.published->origin},
                      {"size", s.published->size},
                      {"root", base64_encode(s.published->root)},
                      {"witnessed", s.witnessed},
                      {"logSignatureChecked", s.log_signature_checked}};
  } else {
    j["published"] = nullptr;
    j["unpublished"] = s.unpublished_reason;
  }
  j["ageSeconds"] = s.age_seconds ? nlohmann::ordered_json(*s.age_seconds) : nlohmann::ordered_json();
  nlohmann::ordered_json cosignatures = nlohmann::ordered_json::array();
  for (const WitnessCosignature& c : s.cosignatures) {
    cosignatures.push_back({{"witness", c.witness},
                            {"state", std::string(cosignature_state_name(c.state))},
                            {"time", c.time}});
  }
  j["cosignatures"] = cosignatures;
  if (s.quorum) {
    j["quorum"] = *s.quorum;
    if (!*s.quorum) j["quorumDetail"] = s.quorum_detail;
  }
  if (!s.upstream.empty()) {
    j["upstream"] = s.upstream;
    j["upstreamSize"] = s.upstream_size ? nlohmann::ordered_json(*s.upstream_size) : nlohmann::ordered_json();
    if (s.upstream_size && s.published) {
      j["lag"] = *s.upstream_size > s.published->size ? *s.upstream_size - s.published->size : 0;
    }
  }
  return j;
}

void print_status(const LogStatus& s) {
  std::printf("source        %s\n", visible_text(s.source).c_str());
  std::printf("log size      %s entries\n", size_text(s.log_size).c_str());
  if (s.published) {
    std::printf("published     size %llu, root %s%s%s\n",
                static_cast<unsigned long long>(s.published->size),
                base64_encode(s.published->root).c_str(),
                s.witnessed ? " (the witnessed checkpoint of serve --policy)" : "",
                s.log_signature_checked ? "" : " (log signature not checked: give --vkey)");
    if (s.age_seconds) {
      std::printf("age           %llu s (since its newest cosignature)\n",
                  static_cast<unsigned long long>(*s.age_seconds));
    } else {
      std::printf("age           unknown (no cosignature carries a time)\n");
    }
  } else {
    std::printf("published     none: %s\n", visible_text(s.unpublished_reason).c_str());
  }
  if (s.quorum) {
    std::printf("quorum        %s\n", *s.quorum ? "met" : ("NOT met: " + visible_text(s.quorum_detail)).c_str());
  }
  std::printf("cosignatures  %zu\n", s.cosignatures.size());
  for (const WitnessCosignature& c : s.cosignatures) {
    std::printf("  %-24s %-10s", visible_text(c.witness).c_str(),
                std::string(cosignature_state_name(c.state)).c_str());
    if (c.time != 0) std::printf(" time %llu", static_cast<unsigned long long>(c.time));
    std::printf("\n");
  }
  if (!s.upstream.empty() && s.upstream_size) {
    const uint64_t mine = s.published ? s.published->size : 0;
    std::printf("upstream      %s at size %llu: %llu entries behind\n", visible_text(s.upstream).c_str(),
                static_cast<unsigned long long>(*s.upstream_size),
                static_cast<unsigned long long>(*s.upstream_size > mine ? *s.upstream_size - mine : 0));
  }
}

int run(const Args& args) {
  if (!args.positional().empty()) return fail(usage_error("status takes no arguments"));
  if (args.has("url") == args.has("ledger")) {
    return fail(usage_error("status needs exactly one of --url and --ledger"));
  }
  StatusOptions options;
  if (Status s = load_policy_option(args, options.policy); !s) return fail(s);
  if (auto vkey = args.get("vkey")) {
    auto key = load_verifier_key(*vkey);
    if (!key) return fail(key.error().with_context("--vkey"));
    options.log_key = *key;
  }
  options.upstream = args.get("upstream").value_or("");
  Result<LogStatus> status = usage_error("");
  if (auto url = args.get("url")) {
    status = url_status(*url, options);
  } else {
    auto ledger = open_ledger(args, false);
    if (!ledger) return fail(ledger.error());
    status = ledger_status(**ledger, options);
  }
  if (!status) return fail(status.error());
  if (args.has("json")) {
    print_json_line(status_json(*status));
  } else {
    print_status(*status);
  }
  if (options.policy && !(status->published && status->quorum.value_or(false))) return kExitRejected;
  return kExitOk;
}

}  // namespace

int cmd_status(const std::vector<std::string>& argv) {
  return run_command(argv, {{"url"}, {"ledger"}, {"policy"}, {"vkey"}, {"upstream"}, {"json", false}},
                     kUsage, run);
}

}  // namespace evl::cli
