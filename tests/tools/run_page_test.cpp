// The run page that `evledger show` prints (tools/run_page.h): each section from the view's
// members, and why an unranked run has no rank.
#include "tools/run_page.h"

#include <catch2/catch.hpp>
#include <string>

namespace evl::cli {
namespace {

const std::string kRun = "sha256:" + std::string(64, 'a');
const std::string kLeader = "sha256:" + std::string(64, 'b');
const std::string kOther = "sha256:" + std::string(64, 'c');
const std::string kWorkload = "sha256:" + std::string(64, 'd');
const std::string kImplementation = "sha256:" + std::string(64, 'e');

// A ranked run with every manifest resolved, with `members` (JSON members, each after a comma)
// replacing or adding to its own.
Json view_with(const std::string& members = "") {
  std::string text = R"({"run":")" + kRun + R"(","title":"Lab · op · B200","index":7,)" +
                     R"("event":")" + kOther + R"(","void":null,"status":"passed",)" +
                     R"("observedAt":"2026-07-07T02:26:56.362Z","source":"sol-execbench",)" +
                     R"("benchmark":"op","externalId":"17828",)" +
                     R"("primary":{"metric":"latency","statistic":"mean","unit":"ns",)" +
                     R"("value":159785},)" +
                     R"("sourceNative":{"solScore":0.946374,"speedup":10.2584,)" +
                     R"("casesFaster":16,"casesTotal":16},)" +
                     R"("workloadDigest":")" + kWorkload + R"(","implementationDigest":")" +
                     kImplementation + R"(","comparisonKey":")" + kOther + R"(",)" +
                     R"("workload":{"title":"suite of 16 cases","comparator":"sol_eval",)" +
                     R"("cases":16},"implementation":{"title":"Lab","version":"v1",)" +
                     R"("repository":"https://git.example.org/lab/k","commit":)" +
                     R"("0123456789abcdef0123"},"sourceAvailable":true,)" +
                     R"("protocol":{"harness":"stack","harnessVersion":"v1.0"},)" +
                     R"("environment":{"product":"NVIDIA B200","architecture":"sm_100"},)" +
                     R"("correctness":null,"artifacts":[],"reruns":[],"attestations":[],)" +
                     R"("corrections":[],"history":[],"missing":[],"evidence":"reported",)" +
                     R"("flags":[],"supersededBy":null,"rank":2,"tied":true,"groupSize":5,)" +
                     R"("leader":")" + kLeader + R"("})";
  Json view = parse_json(text).value();
  Json changes = parse_json(R"({"":null)" + members + "}").value();
  for (const auto& [key, value] : changes.as_object()) {
    if (!key.empty()) view.set(key, value);
  }
  return view;
}

bool has(const std::string& page, const std::string& text) {
  return page.find(text) != std::string::npos;
}

TEST_CASE("a ranked run shows its rank, the group's leader and the source's figures",
          "[tools][show]") {
  std::string page =
      run_page_text(view_with(), {"log.example/log", "In the checkpoint of size 9.", {}});
  CHECK(has(page, "Run aaaaaaaa · evledger\nLab · op · B200\n"));
  CHECK(has(page, "  159.8 µs mean\n"));
  CHECK(has(page, "  Rank 2 of 5 in its comparison group (tied) · observed 2026-07-07\n"));
  CHECK(has(page, "  Leader of the group: sha256:bbbbbbbbbbbbbbbbbbbb…\n"));
  CHECK(has(page, "  SOL 0.9464 · 10.26× reference · 16/16 cases faster\n"));
  CHECK(has(page, "  Evidence: reported\n"));
  CHECK(has(page, "repository             https://git.example.org/lab/k @ 0123456789ab\n"));
  CHECK(has(page, "source available       yes\n"));
  // The statistic is not repeated after the value; values line up after 22 characters.
  CHECK(has(page, "  latency · mean         159.8 µs\n"));
  CHECK(has(page, "  external id            17828\n"));
  CHECK(has(page, "Marked passed by the source; the workload's comparator is sol_eval"));
  CHECK(has(page, "Artifacts\n  No artifacts published with this run.\n"));
  CHECK(has(page, "evledger log log.example/log, entry 7, event " + kOther + "; run " + kRun +
                      ". In the checkpoint of size 9.\n"));
  CHECK(unranked_reasons(view_with(), {}).empty());
  // The leader itself names no other leader.
  CHECK_FALSE(has(run_page_text(view_with(R"(,"rank":1,"tied":false)"), {}), "Leader of"));
}

TEST_CASE("the primary measurement is read in the unit that suits it", "[tools][show]") {
  CHECK(primary_text(view_with()) == "159.8 µs mean");
  CHECK(primary_text(view_with(R"(,"primary":{"metric":"latency","statistic":"median",)"
                               R"("unit":"ns","value":1750000})")) == "1.75 ms median");
  CHECK(primary_text(view_with(R"(,"primary":{"metric":"latency","statistic":"mean",)"
                               R"("unit":"ns","value":812})")) == "812 ns mean");
  CHECK(primary_text(view_with(R"(,"primary":{"metric":"throughput","statistic":"max",)"
                               R"("unit":"TFLOP/s","value":12.5})")) == "12.5 TFLOP/s max");
  CHECK(primary_text(view_with(R"(,"primary":null)")) == "-");
  // A label longer than the column is kept whole.
  std::string page = run_page_text(
      view_with(R"(,"primary":{"metric":"throughput_tokens_per_second","statistic":"median",)"
                R"("unit":"tokens/s","value":5120})"),
      {});
  CHECK(has(page, "  throughput_tokens_per_second · median 5120 tokens/s\n"));
}

TEST_CASE("an unranked run says why, in the order the projections give", "[tools][show]") {
  using enum RankExclusion;
  Json view = view_with(R"(,"rank":null,"void":"key compromised","status":"failed",)"
                        R"("primary":null,"flags":["retracted","superseded","disqualified"],)"
                        R"("supersededBy":")" + kLeader + R"(","comparisonKey":null,)"
                        R"("missing":[")" + kWorkload + R"(",")" + kImplementation + "\"]");
  const std::vector<RankExclusion> all{kVoid,       kStatus,       kNoPrimary,
                                       kRetracted,  kSuperseded,   kDisqualified,
                                       kAwaitsWorkload};
  CHECK(unranked_reasons(view, all) ==
        std::vector<std::string>{"void (key compromised)", "status failed",
                                 "no primary measurement", "retracted",
                                 "superseded by sha256:bbbbbbbbbbbbbbbbbbbb…", "disqualified",
                                 "no comparison group until the workload manifest is in the "
                                 "ledger"});
  std::string page = run_page_text(view, {"", "", all});
  CHECK(has(page, "  Not ranked: void (key compromised); status failed; "));
  CHECK(has(page, "  no primary measurement\n"));
  CHECK(has(page, "Measurements\n  No primary measurement.\n"));
  CHECK(has(page, "missing manifests      workload sha256:dddddddddddddddddddd…, "
                  "implementation sha256:eeeeeeeeeeeeeeeeeeee…\n"));

  // Superseded without a replacement in the view, and a run without what a key needs.
  CHECK(unranked_reasons(view_with(R"(,"rank":null)"), {kSuperseded, kNoComparisonKey}) ==
        std::vector<std::string>{"superseded", "no comparison key"});
}

TEST_CASE("manifests not in the ledger are named where their facts would be", "[tools][show]") {
  std::string page = run_page_text(
      view_with(R"(,"workload":null,"implementation":null,"protocol":null,"environment":null,)"
                R"("gpu":null,"sourceAvailable":false,"protocolDigest":null)"),
      {});
  CHECK(has(page, "implementation         sha256:eeeeeeeeeeeeeeeeeeee… (manifest not in this "
                  "ledger)\n"));
  CHECK_FALSE(has(page, "source available"));  // unknown without the implementation manifest
  CHECK(has(page, "the correctness policy was not published (the workload manifest is not in "
                  "this ledger)."));
  CHECK(has(page, "Workload\n  Manifest sha256:dddddddddddddddddddd… is not in this ledger; "
                  "the view completes when it is appended.\n"));
  CHECK(has(page, "Protocol\n  The run names no protocol manifest.\n"));
  CHECK(has(page, "Environment\n  The run names no environment manifest.\n"));
}

TEST_CASE("the run's own correctness bounds and artifacts are listed", "[tools][show]") {
  std::string page = run_page_text(
      view_with(R"(,"correctness":{"comparator":"elementwise_close",)"
                R"("maximumAbsoluteError":0.0042,"matchedRatio":1},)"
                R"("artifacts":[{"kind":"logs","uri":"https://x.example/log.txt","digest":")" +
                kOther + R"(","raw":true},{"kind":"harness","repository":)"
                R"("https://git.example.org/h","commit":"fedcba9876543210fedc","raw":false}])"),
      {});
  CHECK(has(page, "Marked passed by the source; measured with comparator elementwise_close, "
                  "maximum absolute error 0.0042, matched ratio 1.\n"));
  CHECK(has(page, "  - logs: https://x.example/log.txt (sha256:cccccccccccccccccccc…)\n"));
  CHECK(has(page, "  - harness: https://git.example.org/h @ fedcba987654\n"));
}

TEST_CASE("reruns, notes and corrections show what they did and whether they count",
          "[tools][show]") {
  std::string page = run_page_text(
      view_with(
          R"(,"reruns":[{"verdict":"confirmed","ratio":0.98765,"runner":"r@k","index":11,)"
          R"("void":null},{"verdict":"pending","ratio":null,"runner":"r2@k","index":12,)"
          R"("void":"key compromised"}],)"
          R"("attestations":[{"type":"note","author":"a@x","index":13,"text":"Seen.",)"
          R"("evidenceUrl":"https://e.example/1","void":null}],)"
          R"("corrections":[{"kind":"supersede","role":"target","author":"c@k","index":14,)"
          R"("reason":"Fixed.","target":")" + kRun + R"(","replacement":")" + kLeader +
          R"(","void":null,"ignored":null},{"kind":"supersede","role":"replacement",)"
          R"("author":"c@k","index":15,"reason":"New.","target":")" + kOther +
          R"(","replacement":")" + kRun + R"(","void":null,"ignored":null},)"
          R"({"kind":"disqualify","role":"target","author":"c@k","index":16,"reason":"Gamed.",)"
          R"("source":"gpumode","void":null,"ignored":"the run is reported by sol-execbench"},)"
          R"({"kind":"retract","role":"target","author":"c@k","index":17,"reason":"Oops.",)"
          R"("void":"key compromised","ignored":null}])"),
      {});
  CHECK(has(page, "  - confirmed (ratio 0.988) · r@k · log index 11\n"));
  CHECK(has(page, "  - pending · r2@k · log index 12 [void: key compromised]\n"));
  CHECK(has(page, "  - note by a@x (log index 13): Seen. <https://e.example/1>\n"));
  CHECK(has(page, "  - supersede: replaced by sha256:bbbbbbbbbbbbbbbbbbbb… · by c@k (log index "
                  "14): Fixed.\n"));
  CHECK(has(page, "  - supersede: this run replaces sha256:cccccccccccccccccccc… · by c@k (log "
                  "index 15): New.\n"));
  CHECK(has(page, "  - disqualify (source gpumode) · by c@k (log index 16): Gamed. [no effect: "
                  "the run is reported by sol-execbench]\n"));
  CHECK(has(page, "  - retract · by c@k (log index 17): Oops. [void: key compromised]\n"));
}

}  // namespace
}  // namespace evl::cli
