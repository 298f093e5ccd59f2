// evledger import — import a KernelIndex catalog: manifests and source-reported runs.
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "events/utf8.h"
#include "tools/commands.h"
#include "tools/importer.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"
#include "tools/publish.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger import (--ledger DIR [--log-key FILE] | --to URL [--retry-for SECONDS])\n"
    "                       --key FILE [--batch N] [--receipts DIR] [--vkey LOGVKEY] [--json]\n"
    "                       SOURCE...\n"
    "\n"
    "Imports KernelIndex manifests. Each SOURCE is a file or '-' (standard input) holding a\n"
    "JSON object, a JSON array of manifests, JSON lines (one manifest per line) or YAML\n"
    "documents separated by '---'; the form is told by content. Every document is checked\n"
    "(apiVersion, kind, metadata.name, spec, sha256 references, run status, entry size),\n"
    "canonicalized (RFC 8785) and signed by --key: a BenchmarkRun with spec.sourceNative\n"
    "becomes an observation (the key needs the importer role for its source), every other\n"
    "kind a manifest event. A BenchmarkRun without spec.sourceNative is refused: it can only\n"
    "be a rerun's manifest. Events are appended N at a time (--batch, default 5000).\n"
    "\n"
    "The claimed time of an imported event is the run's spec.observedAt (0 for other kinds),\n"
    "not the clock, so importing the same catalog again reports everything already present.\n"
    "\n"
    "Prints a summary (with --json: one JSON line per document, then {\"summary\": ...}).\n"
    "Each rejected document is reported on standard error with its line and the rule it\n"
    "breaks (a line past 1 MiB, broken JSON or YAML, a JSON comment, a failed check); the\n"
    "others are imported, whatever surrounds them: documents = added + present + rejected\n"
    "+ not stored. A commit that fails (a full disk, say), or a server that answers no\n"
    "request for --retry-for, stops the import: nothing after the first document not stored\n"
    "is appended, and running the same import again once the cause is fixed resumes it (what\n"
    "the log holds is reported present; with --to it is signed again and the server answers\n"
    "it present).\n"
    "A SOURCE is a regular file, '-' or a shell's <(...), and each read of it waits at most\n"
    "30 s. Exit status: 0 when nothing was rejected, 1 when some document was (or a receipt\n"
    "does not verify), 2 usage, 3 when a SOURCE, the key or the ledger cannot be opened or\n"
    "read, a commit failed for the disk, or the server did not answer.\n";

const char* status_name(ImportStatus status) {
  switch (status) {
    case ImportStatus::kAdded: return "added";
    case ImportStatus::kPresent: return "present";
    case ImportStatus::kRejected: return "rejected";
    case ImportStatus::kNotStored: return "not_stored";
  }
  return "?";
}

nlohmann::json document_json(const DocumentOutcome& o) {
  nlohmann::json j = {{"document", o.label}, {"kind", o.kind}, {"name", o.name},
                      {"status", status_name(o.status)}};
  if (o.digest) j["digest"] = digest_text(*o.digest);
  if (o.status == ImportStatus::kRejected || o.status == ImportStatus::kNotStored) {
    j["rule"] = o.rule;
    j["message"] = o.message;
  } else {
    j["index"] = o.entry_index;
    j["event"] = digest_text(o.event_id);
  }
  return j;
}

// The log's size for the summary: null when a remote log never answered.
nlohmann::json log_size(Destination& destination) {
  const auto size = destination.log->size();
  return size ? nlohmann::json(*size) : nlohmann::json(nullptr);
}

int run(const Args& args) {
  if (args.positional().empty()) return fail(usage_error("import needs SOURCE... (or -)"));
  auto batch = args.get_u64("batch", kDefaultImportBatch, {1, 100000, "documents"});
  if (!batch) return fail(batch.error());
  // Open every source first, so that a mistyped path changes nothing.
  std::vector<std::unique_ptr<ManifestReader>> readers;
  uint64_t total_bytes = 0;
  for (const auto& path : args.positional()) {
    auto reader = ManifestReader::open(path);
    if (!reader) return fail(reader.error());
    total_bytes += (*reader)->size().value_or(0);
    readers.push_back(std::move(reader.value()));
  }
  auto key = load_signer(args, "key");
  if (!key) return fail(key.error());
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());

  bool json = args.has("json");
  bool tty = ::isatty(STDERR_FILENO) != 0;
  ImportOptions options;
  options.batch = *batch;
  if (destination->remote()) options.priority = PoolPriority::kBackground;
  Importer importer(destination->sink(), *key, options);
  // Standard input has no known size: its import runs without a bar.
  std::optional<Progress> progress;
  if (total_bytes > 0) progress.emplace("import", total_bytes);
  uint64_t done_bytes = 0;
  const ManifestReader* current = nullptr;
  ImportCallbacks callbacks;
  callbacks.on_document = [&](const DocumentOutcome& o) {
    if (o.status == ImportStatus::kRejected) {
      if (tty) std::fputs("\r\033[K", stderr);
      // One line per problem, each prefixed, so that grep finds every one. A message may
      // quote the document (its name, a key), so its control characters are made visible.
      size_t start = 0;
      while (start <= o.message.size()) {
        size_t end = o.message.find('\n', start);
        if (end == std::string::npos) end = o.message.size();
        std::string line = visible_text(std::string_view(o.message).substr(start, end - start));
        std::fprintf(stderr, "evledger: rejected: %s\n", line.c_str());
        start = end + 1;
      }
    }
    if (json) print_json_line(document_json(o));
  };
  callbacks.on_batch = [&] {
    // Each batch's JSON lines go out once it is durable, not when the buffer fills: a reader of
    // the pipe (or a process killed later) has every acknowledgement made so far.
    if (json) std::fflush(stdout);
    if (progress) progress->update(done_bytes + current->bytes_read());
  };

  bool broken = false;
  Status stopped;  // a failed commit: the summary says what was imported, and then exit
  for (auto& reader : readers) {
    current = reader.get();
    Status status = importer.import(*reader, callbacks);
    if (!status) {
      broken = true;
      if (tty) std::fputs("\r\033[K", stderr);
      std::fprintf(stderr, "evledger: %s\n", visible_lines(status.message()).c_str());
      if (importer.stopped()) {
        stopped = status;
        break;
      }
      if (status.code() == Code::kIo) return exit_code(status.code());
    }
    done_bytes += reader->size().value_or(reader->bytes_read());
    if (progress) progress->update(done_bytes);
  }

  const ImportTotals& t = importer.totals();
  if (json) {
    print_json_line(nlohmann::json{{"summary",
                      {{"documents", t.documents}, {"added", t.added}, {"present", t.present},
                       {"rejected", t.rejected}, {"notStored", t.not_stored},
                       {"observations", t.observations},
                       {"manifests", t.manifests}, {"ledgerSize", log_size(*destination)},
                       {"complete", !broken}}}});
  } else {
    std::printf("%llu documents: %llu new (%llu observations, %llu manifests), %llu already "
                "present, %llu rejected%s; %s\n",
                static_cast<unsigned long long>(t.documents),
                static_cast<unsigned long long>(t.added),
                static_cast<unsigned long long>(t.observations),
                static_cast<unsigned long long>(t.manifests),
                static_cast<unsigned long long>(t.present),
                static_cast<unsigned long long>(t.rejected),
                t.not_stored == 0 ? ""
                                  : (", " + std::to_string(t.not_stored) + " not stored (the "
                                     "import stopped)").c_str(),
                destination->size_text().c_str());
  }
  std::fflush(stdout);
  if (!stopped.is_ok()) return exit_code(stopped.code());
  return t.rejected == 0 && !broken ? kExitOk : kExitRejected;
}

}  // namespace

int cmd_import(const std::vector<std::string>& argv) {
  static const std::string usage = std::string(kUsage) + "\n" + kDestinationHelp;
  return run_command(argv, with_destination_options({{"key"}, {"batch"}, {"json", false}}),
                     usage.c_str(), run);
}

}  // namespace evl::cli
