// evledger rerun — sign and append a controlled rerun of an observed run.
#include <cstdio>
#include <sstream>
#include <string>

#include "events/file_read.h"
#include "events/jcs.h"
#include "events/event_builder.h"
#include "events/manifest_check.h"
#include "keys/signer.h"
#include "tools/commands.h"
#include "tools/import_reader.h"
#include "tools/ledger_cli.h"
#include "tools/publish.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger rerun (--ledger DIR [--log-key FILE] | --to URL [--retry-for SECONDS])\n"
    "                      --key FILE --target RUN [--cases FILE] [--receipts DIR]\n"
    "                      [--vkey LOGVKEY] [--json] MANIFEST\n"
    "\n"
    "Appends a controlled rerun of the observed run RUN (its manifest digest, sha256:<64 hex>),\n"
    "signed by --key, which needs the runner role. The projections read the runner's owner and\n"
    "host from its grant's scope entries owner:<id> and host:<id>: two confirming reruns count\n"
    "as a replication only when both differ.\n"
    "\n"
    "MANIFEST is the rerun's own KernelIndex BenchmarkRun (a file or '-', JSON or YAML, one\n"
    "document). It passes the checks 'evledger import' applies and has no spec.sourceNative:\n"
    "a rerun is the runner's measurement, not a source's report. Its protocolDigest and\n"
    "environmentDigest name the manifests the rerun followed; register any new one first with\n"
    "'evledger import --key FILE' (a runner key may register manifests). The verdict is derived,\n"
    "never asserted: refuted when the status is not passed, inconclusive on another GPU, else\n"
    "by the ratio of the primary measurements (tolerance in the genesis).\n"
    "\n"
    "--cases FILE  per-case results: a JSON array (stored as RFC 8785 canonical JSON).\n"
    "--json        print {\"status\",\"index\",\"event\",\"target\",\"run\"} as one JSON line.\n"
    "The target need not be in the ledger yet; the projections attach the rerun when it\n"
    "arrives.\n"
    "\n"
    "The event's claimed time is the manifest's spec.observedAt, so submitting the same rerun\n"
    "again reports it already present.\n"
    "\n"
    "Exit status: 0 appended or already present; 1 the manifest, the cases or the ledger's\n"
    "key policy refused it, or its receipt does not verify; 2 usage (a malformed --target); 3\n"
    "a file or the ledger cannot be read, or the server did not answer.\n";

constexpr const char* kRunnerHint =
    "a controlled rerun is signed by a key with the runner role; an admin grants one with "
    "'evledger key grant --role runner --scope owner:ID --scope host:ID'";


// The one document of `path`, checked and canonicalized (events/event_builder.h's rerun_event
// says whether it may be a rerun's). The file is one document, so it is read whole under the
// importer's limit for one document.
Result<CheckedManifest> read_rerun_manifest(const std::string& path) {
  auto text = read_file(path, ReadLimit{"manifest file", kMaxDocumentBytes});
  if (!text) return text.error();
  std::istringstream in(std::move(*text));
  auto reader = ManifestReader::from_stream(in, path == "-" ? "standard input" : path);
  SourceDocument doc;
  auto more = reader->next(doc);
  if (!more) return more.error();
  if (!*more) return rejected(path + " holds no manifest; MANIFEST is one BenchmarkRun");
  if (!doc.status) return doc.status.with_context(path);
  SourceDocument extra;
  auto again = reader->next(extra);
  if (!again) return again.error();
  if (*again) {
    return rejected(path + " holds more than one document; MANIFEST is the one BenchmarkRun of "
                           "this rerun (import other manifests with 'evledger import')");
  }
  return check_manifest(*doc.value, 1, doc.where);
}

// The canonical text of the --cases array, or "" without the option.
Result<std::string> read_cases(const Args& args) {
  auto path = args.get("cases");
  if (!path) return std::string();
  auto text = read_file(*path, ReadLimit{"cases file", kMaxDocumentBytes});
  if (!text) return text.error();
  auto value = parse_json(*text);
  if (!value) return value.error().with_context("--cases " + *path);
  if (!value->is_array()) {
    return rejected("--cases " + *path + " holds a JSON " + json_type_name(value->type()) +
                    "; per-case results are a JSON array, one element per case");
  }
  return jcs_serialize(*value);
}


int run(const Args& args) {
  if (args.positional().size() != 1) {
    return fail(usage_error("rerun takes one MANIFEST (a file or -)"));
  }
  auto target = digest_option(args, "target", "a run digest");
  if (!target) return fail(target.error());
  auto manifest = read_rerun_manifest(args.positional()[0]);
  if (!manifest) return fail(manifest.error());
  auto cases = read_cases(args);
  if (!cases) return fail(cases.error());
  auto key = load_signer(args, "key");
  if (!key) return fail(key.error());
  const Digest run_digest = manifest->digest;
  auto body = rerun_event(key->public_key(), *target, std::move(*manifest), std::move(*cases));
  if (!body) return fail(body.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());

  Json line = Json::object();
  line.set("target", digest_text(*target));
  line.set("run", digest_text(run_digest));
  return publish_and_report(*destination, *key, *body, "rerun of " + digest_text(*target),
                           kRunnerHint, args, line,
                           "; rerun manifest " + digest_text(run_digest));
}

}  // namespace

int cmd_rerun(const std::vector<std::string>& argv) {
  static const std::string usage = std::string(kUsage) + "\n" + kDestinationHelp;
  return run_command(argv,
                     with_destination_options({{"key"}, {"target"}, {"cases"}, {"json", false}}),
                     usage.c_str(), run);
}

}  // namespace evl::cli
