#include "tools/run_page.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>

#include "events/kernelindex.h"
#include "tools/json_text.h"

namespace evl::cli {

namespace {


// A member as text, "-" when absent or null (text_of).
std::string str(const Json& v, std::string_view path) { return text_of(json_path(v, path)); }
bool present(const Json& v, std::string_view path) {
  const Json* member = json_path(v, path);
  return member != nullptr && !member->is_null();
}
bool is_string_equal(const Json& v, std::string_view path, std::string_view text) {
  const Json* member = json_path(v, path);
  return member != nullptr && member->is_string() && member->as_string() == text;
}
std::string format(const char* spec, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, value);
  return buf;
}

// 159785 ns -> "159.8 µs"; 1750000 -> "1.75 ms" (four significant digits, as the page shows).
std::string human_ns(double ns) {
  const char* unit = "ns";
  double v = ns;
  if (ns >= 1e9) {
    v = ns / 1e9;
    unit = "s";
  } else if (ns >= 1e6) {
    v = ns / 1e6;
    unit = "ms";
  } else if (ns >= 1e3) {
    v = ns / 1e3;
    unit = "µs";
  }
  return format("%.4g ", v) + unit;
}

// The primary value with its unit ("159.8 µs"), or "" when there is none.
std::string primary_value(const Json& view) {
  const Json* value = json_path(view, "primary.value");
  if (value == nullptr || !value->is_number()) return "";
  std::string unit = str(view, "primary.unit");
  return unit == "ns" ? human_ns(value->as_number()) : text_of(value) + " " + unit;
}

// The page's shortened digests: 20 hex digits.
std::string short_digest(const std::string& d) { return cli::short_digest(d, 20); }

// Which of the run's references a missing digest is: "workload", ..., or "rerun environment".
std::string reference_role(const Json& view, const std::string& digest) {
  for (const char* role : {"protocol", "environment", "workload", "implementation"}) {
    if (str(view, std::string(role) + "Digest") == digest) return role;
  }
  return "rerun environment";
}

std::string joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

// " [void: cause]" for a void item, "" otherwise.
std::string void_note(const Json& item) {
  return present(item, "void") ? " [void: " + str(item, "void") + "]" : "";
}

// Builds the sections; rows without a value are left out.
class Page {
 public:
  void line(const std::string& text) { items().push_back({RunPageItem::Kind::kLine, "", text}); }
  void section(const char* title) { page_.sections.push_back({title, {}}); }
  // A row with a value; none (nullptr) when the value is absent.
  RunPageItem* row(const std::string& label, const std::string& value) {
    if (value == "-" || value.empty()) return nullptr;
    items().push_back({RunPageItem::Kind::kRow, label, value});
    return &items().back();
  }
  // One item of the list `member` each, naming the log entry it came from, or `empty` when
  // there is none.
  void list(const Json& view, const char* member, const char* empty,
            const std::function<std::string(const Json&)>& describe) {
    const Json* listed = json_path(view, member);
    if (listed == nullptr || !listed->is_array() || listed->as_array().empty()) {
      line(empty);
      return;
    }
    for (const auto& item : listed->as_array()) {
      RunPageItem entry{RunPageItem::Kind::kListItem, "", describe(item)};
      if (const Json* index = json_path(item, "index"); index && index->is_number()) {
        entry.index = static_cast<uint64_t>(index->as_number());
      }
      items().push_back(std::move(entry));
    }
  }
  // A manifest the view references but the ledger does not hold yet.
  void absent_manifest(const Json& view, const char* role) {
    std::string digest = str(view, std::string(role) + "Digest");
    if (digest == "-") {
      line(std::string("The run names no ") + role + " manifest.");
    } else {
      line("Manifest " + short_digest(digest) +
           " is not in this ledger; the view completes when it is appended.");
    }
  }
  void link_last_to_run(const std::string& digest) { items().back().run = digest; }
  RunPage take() { return std::move(page_); }

 private:
  std::vector<RunPageItem>& items() { return page_.sections.back().items; }
  RunPage page_;
};

void primary_section(Page& page, const Json& view, const std::vector<RankExclusion>& unranked) {
  page.section("Primary measurement");
  std::string value = primary_text(view);
  page.line(value == "-" ? "no primary measurement" : value);
  const std::string observed = str(view, "observedAt").substr(0, 10);
  if (present(view, "rank")) {
    page.line("Rank " + str(view, "rank") + " of " + str(view, "groupSize") +
              " in its comparison group" +
              (str(view, "tied") == "true" ? " (tied)" : "") + " · observed " + observed);
    if (str(view, "rank") != "1" && present(view, "leader")) {
      page.line("Leader of the group: " + short_digest(str(view, "leader")));
      page.link_last_to_run(str(view, "leader"));
    }
  } else {
    auto reasons = unranked_reasons(view, unranked);
    page.line("Not ranked" + (reasons.empty() ? "" : ": " + joined(reasons, "; ")) +
              " · observed " + observed);
  }
  if (std::string native = source_native_text(view); !native.empty()) page.line(native);
  std::vector<std::string> flags;
  if (const Json* list = json_path(view, "flags"); list && list->is_array()) {
    for (const auto& f : list->as_array()) flags.push_back(text_of(&f));
  }
  page.line("Evidence: " + str(view, "evidence") +
            (flags.empty() ? "" : " · flags: " + joined(flags, ", ")));
}

void identity_section(Page& page, const Json& view) {
  page.section("Identity");
  if (present(view, "implementation")) {
    page.row("implementation", str(view, "implementation.title"));
    std::string commit = str(view, "implementation.commit");
    page.row("repository", str(view, "implementation.repository") +
                               (commit == "-" ? "" : " @ " + commit.substr(0, 12)));
    page.row("revision", str(view, "implementation.version"));
  } else if (present(view, "implementationDigest")) {
    page.row("implementation",
             short_digest(str(view, "implementationDigest")) + " (manifest not in this ledger)");
  }
  if (present(view, "implementation") || !present(view, "implementationDigest")) {
    page.row("source available", str(view, "sourceAvailable") == "true" ? "yes" : "no");
  }
  page.row("workload", str(view, "workload.title"));
  if (auto* key = page.row("comparison key", short_digest(str(view, "comparisonKey")))) {
    key->group = str(view, "comparisonKey");
  }
  page.row("source", str(view, "source"));
  page.row("benchmark", str(view, "benchmark"));
  page.row("external id", str(view, "externalId"));
  if (auto* digest = page.row("run digest", str(view, "run"))) digest->copy = true;
  std::vector<std::string> missing;
  if (const Json* list = json_path(view, "missing"); list && list->is_array()) {
    for (const auto& d : list->as_array()) {
      std::string digest = text_of(&d);
      missing.push_back(reference_role(view, digest) + " " + short_digest(digest));
    }
  }
  page.row("missing manifests", joined(missing, ", "));
}

void correctness_section(Page& page, const Json& view) {
  page.section("Correctness");
  std::string marked = "Marked " + str(view, "status") + " by the source";
  if (present(view, "correctness")) {
    std::vector<std::string> bounds{"comparator " + str(view, "correctness.comparator")};
    if (present(view, "correctness.maximumAbsoluteError")) {
      bounds.push_back("maximum absolute error " + str(view, "correctness.maximumAbsoluteError"));
    }
    if (present(view, "correctness.maximumRelativeError")) {
      bounds.push_back("maximum relative error " + str(view, "correctness.maximumRelativeError"));
    }
    if (present(view, "correctness.matchedRatio")) {
      bounds.push_back("matched ratio " + str(view, "correctness.matchedRatio"));
    }
    page.line(marked + "; measured with " + joined(bounds, ", ") + ".");
  } else if (present(view, "workload.comparator")) {
    page.line(marked + "; the workload's comparator is " + str(view, "workload.comparator") +
              ", and the run publishes no error bounds.");
  } else {
    page.line(marked + "; the correctness policy was not published" +
              (present(view, "workload") || !present(view, "workloadDigest")
                   ? std::string(".")
                   : " (the workload manifest is not in this ledger)."));
  }
}

void manifest_sections(Page& page, const Json& view) {
  page.section("Workload");
  if (present(view, "workload")) {
    page.row("definition comparator", str(view, "workload.comparator"));
    page.row("description", str(view, "workload.description"));
    page.row("cases", str(view, "workload.cases"));
    page.row("correctness key", short_digest(str(view, "workload.correctnessKey")));
  } else {
    page.absent_manifest(view, "workload");
  }

  page.section("Measurements");
  std::string value = primary_value(view);
  if (value.empty()) {
    page.line("No primary measurement.");
  } else {
    page.row(str(view, "primary.metric") + " · " + str(view, "primary.statistic"), value);
  }

  page.section("Protocol");
  if (present(view, "protocol")) {
    std::string version = str(view, "protocol.harnessVersion");
    page.row("harness", str(view, "protocol.harness") + (version == "-" ? "" : " " + version));
    page.row("timer", str(view, "protocol.timer"));
    page.row("primaryStatistic", str(view, "protocol.primaryStatistic"));
    page.row("correctnessReference", str(view, "protocol.correctnessReference"));
    page.row("comparabilityFamily", str(view, "protocol.family"));
  } else {
    page.absent_manifest(view, "protocol");
  }

  page.section("Environment");
  if (present(view, "environment") || present(view, "gpu")) {
    const char* from = present(view, "environment") ? "environment" : "gpu";
    std::string product = str(view, std::string(from) + ".product");
    std::string architecture = str(view, std::string(from) + ".architecture");
    page.row("gpu", product + (architecture == "-" ? "" : " (" + architecture + ")"));
  } else {
    page.absent_manifest(view, "environment");
  }
}

void evidence_sections(Page& page, const Json& view) {
  page.section("Artifacts");
  page.list(view, "artifacts", "No artifacts published with this run.", [](const Json& a) {
    if (str(a, "raw") == "true") {
      std::string digest = str(a, "digest");
      return str(a, "kind") + ": " + str(a, "uri") +
             (digest == "-" ? "" : " (" + short_digest(digest) + ")");
    }
    std::string commit = str(a, "commit");
    return str(a, "kind") + ": " + str(a, "repository") +
           (commit == "-" ? "" : " @ " + commit.substr(0, 12));
  });

  page.section("Controlled reruns");
  page.list(view, "reruns", "No controlled reruns yet.", [](const Json& r) {
    const Json* ratio = json_path(r, "ratio");
    return str(r, "verdict") +
           (ratio && ratio->is_number() ? format(" (ratio %.3f)", ratio->as_number()) : "") +
           " · " + str(r, "runner") + " · log index " + str(r, "index") + void_note(r);
  });

  page.section("Replications and notes");
  page.list(view, "attestations", "No attestations yet.", [](const Json& a) {
    std::string url = str(a, "evidenceUrl");
    return str(a, "type") + " by " + str(a, "author") + " (log index " + str(a, "index") +
           "): " + str(a, "text") + (url == "-" ? "" : " <" + url + ">") + void_note(a);
  });
  page.line("Community attestations never change the evidence level; only a controlled rerun "
            "does.");

  page.section("Corrections");
  page.list(view, "corrections", "None.", [](const Json& c) {
    std::string kind = str(c, "kind");
    std::string what = kind;
    if (kind == "supersede") {
      what = is_string_equal(c, "role", "replacement")
                 ? "supersede: this run replaces " + short_digest(str(c, "target"))
                 : "supersede: replaced by " + short_digest(str(c, "replacement"));
    } else if (kind == "disqualify" && present(c, "source")) {
      what = "disqualify (source " + str(c, "source") + ")";
    }
    return what + " · by " + str(c, "author") + " (log index " + str(c, "index") +
           "): " + str(c, "reason") +
           (present(c, "ignored") ? " [no effect: " + str(c, "ignored") + "]" : "") +
           void_note(c);
  });

  page.section("Log events behind this view");
  page.list(view, "history", "None.", [](const Json& h) {
    return "index " + str(h, "index") + " " + str(h, "kind") + " " + str(h, "event") +
           void_note(h);
  });
}

}  // namespace

std::string primary_text(const Json& view) {
  std::string value = primary_value(view);
  return value.empty() ? "-" : value + " " + str(view, "primary.statistic");
}

std::vector<std::string> unranked_reasons(const Json& view,
                                         const std::vector<RankExclusion>& exclusions) {
  std::vector<std::string> reasons;
  for (RankExclusion e : exclusions) {
    switch (e) {
      case RankExclusion::kVoid: reasons.push_back("void (" + str(view, "void") + ")"); break;
      case RankExclusion::kStatus: reasons.push_back("status " + str(view, "status")); break;
      case RankExclusion::kNoPrimary: reasons.push_back("no primary measurement"); break;
      case RankExclusion::kRetracted: reasons.push_back("retracted"); break;
      case RankExclusion::kSuperseded:
        reasons.push_back(present(view, "supersededBy")
                              ? "superseded by " + short_digest(str(view, "supersededBy"))
                              : std::string("superseded"));
        break;
      case RankExclusion::kDisqualified: reasons.push_back("disqualified"); break;
      case RankExclusion::kAwaitsWorkload:
        reasons.push_back("no comparison group until the workload manifest is in the ledger");
        break;
      case RankExclusion::kNoComparisonKey: reasons.push_back("no comparison key"); break;
    }
  }
  return reasons;
}

std::string source_native_text(const Json& view) {
  std::vector<std::string> native;
  if (const Json* sol = json_path(view, "sourceNative.solScore"); sol && sol->is_number()) {
    native.push_back(format("SOL %.4f", sol->as_number()));
  }
  const Json* speedup = json_path(view, "sourceNative.speedup");
  if (speedup != nullptr && speedup->is_number()) {
    native.push_back(format("%.2f× reference", speedup->as_number()));
  }
  if (present(view, "sourceNative.casesFaster") && present(view, "sourceNative.casesTotal")) {
    native.push_back(str(view, "sourceNative.casesFaster") + "/" +
                     str(view, "sourceNative.casesTotal") + " cases faster");
  }
  return joined(native, " · ");
}

RunPage run_page(const Json& view, const RunPageContext& context) {
  Page page;
  primary_section(page, view, context.unranked);
  identity_section(page, view);
  correctness_section(page, view);
  manifest_sections(page, view);
  evidence_sections(page, view);

  const std::string run = str(view, "run");
  page.section("Cite this record");
  page.line(str(view, "title") + ". evledger log " +
            (context.origin.empty() ? std::string("-") : context.origin) + ", entry " +
            str(view, "index") + ", event " + str(view, "event") + "; run " + run + "." +
            (context.checkpoint_line.empty() ? "" : " " + context.checkpoint_line));
  page.line("Verify: evledger proof inclusion --ledger DIR --index " + str(view, "index") +
            ", then evledger proof verify with the log's key. The observation and its manifest: "
            "evledger get --ledger DIR " + str(view, "index") + " --json.");
  RunPage made = page.take();
  made.heading = "Run " + (run.size() >= 15 ? run.substr(7, 8) : run);
  made.title = str(view, "title");
  return made;
}

std::string run_page_text(const Json& view, const RunPageContext& context) {
  constexpr size_t kLabelWidth = 22;
  const RunPage page = run_page(view, context);
  std::string out = page.heading + " · evledger\n" + page.title + "\n";
  for (const auto& section : page.sections) {
    out += "\n" + section.title + "\n";
    for (const auto& item : section.items) {
      switch (item.kind) {
        case RunPageItem::Kind::kLine: out += "  " + item.text + "\n"; break;
        case RunPageItem::Kind::kListItem: out += "  - " + item.text + "\n"; break;
        // Values aligned after labels of up to 22 characters; longer labels kept whole.
        case RunPageItem::Kind::kRow:
          out += "  " + padded(item.label, kLabelWidth) + " " + item.text + "\n";
          break;
      }
    }
  }
  return out;
}

}  // namespace evl::cli
