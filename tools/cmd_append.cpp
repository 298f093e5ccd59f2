// evledger append — append signed entries from files or a length-prefixed stream.
#include <cstdio>
#include <iostream>

#include "events/file_read.h"
#include "tools/commands.h"
#include "tools/ledger_cli.h"
#include "tools/render.h"
#include "tools/publish.h"

namespace evl::cli {

namespace {

constexpr const char* kUsage =
    "usage: evledger append DEST [--json] FILE...\n"
    "       evledger append DEST [--json] -\n"
    "DEST: --ledger DIR [--log-key FILE] or --to URL [--retry-for SECONDS], with\n"
    "[--receipts DIR] [--vkey LOGVKEY] (below)\n"
    "\n"
    "Appends entries: each FILE holds one entry (canonical SignedEvent bytes, as evledger sign\n"
    "writes them); '-' reads a stream of entries from standard input, each preceded by its\n"
    "length as a big-endian uint16 (the C2SP entry-bundle framing). Entries are verified in\n"
    "parallel and committed in groups; an event already present keeps its index. Prints one\n"
    "line per entry. Exit status 1 when any entry was rejected (the others are appended).\n"
    "A commit that fails (a full disk, say), or a server that stops answering, stops the\n"
    "append: nothing after the first entry not stored is appended; exit status 3.\n";

// Reads up to `max` length-prefixed entries from stdin; false at a clean end of input.
Result<bool> read_stream(std::vector<Bytes>& out, size_t max) {
  while (out.size() < max) {
    uint8_t len_bytes[2];
    size_t got = std::fread(len_bytes, 1, 2, stdin);
    if (got == 0 && std::feof(stdin)) return false;
    if (got != 2) return rejected("standard input ends inside an entry's length prefix");
    size_t len = static_cast<size_t>(len_bytes[0]) << 8 | len_bytes[1];
    Bytes entry(len);
    if (len > 0 && std::fread(entry.data(), 1, len, stdin) != len) {
      return rejected("standard input ends inside an entry: expected " + std::to_string(len) +
                      " bytes");
    }
    out.push_back(std::move(entry));
  }
  return true;
}

struct Totals {
  uint64_t added = 0, present = 0, rejected = 0, not_stored = 0;
  std::string first_not_stored;  // the name of the first entry whose commit failed
  Status stop;                   // and why
};

void report(const std::vector<std::string>& names, const std::vector<AppendOutcome>& outcomes,
            bool json, Totals& totals) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const auto& o = outcomes[i];
    if (o.commit_failed) {
      // Said once, in the summary: every later entry shares the cause.
      if (totals.not_stored++ == 0) {
        totals.first_not_stored = names[i];
        totals.stop = o.status;
      }
      if (json) {
        std::printf("{\"entry\":\"%s\",\"status\":\"not_stored\"}\n", names[i].c_str());
      }
      continue;
    }
    if (!o.status) {
      ++totals.rejected;
      std::fprintf(stderr, "evledger: %s: rejected: %s\n", names[i].c_str(),
                   visible_lines(o.status.message()).c_str());
      if (json) {
        std::printf("{\"entry\":\"%s\",\"status\":\"rejected\"}\n", names[i].c_str());
      }
      continue;
    }
    ++(o.added ? totals.added : totals.present);
    if (json) {
      std::printf("{\"entry\":\"%s\",\"status\":\"%s\",\"index\":%llu,\"id\":\"%s\"}\n",
                  names[i].c_str(), o.added ? "added" : "present",
                  static_cast<unsigned long long>(o.index), digest_text(o.id).c_str());
    } else {
      std::printf("%s: %s at index %llu %s\n", names[i].c_str(),
                  o.added ? "appended" : "already present",
                  static_cast<unsigned long long>(o.index), digest_text(o.id).c_str());
    }
  }
  std::fflush(stdout);  // a batch's lines go out once it is durable (a stream has many)
}

// What a failed commit stopped, and how to go on.
void report_stop(const Totals& totals, bool from_stdin) {
  std::fprintf(stderr,
               "evledger: %s was not stored: %s\nevledger: %llu entries were not stored, and "
               "nothing after %s was appended; entries before it were processed as reported. "
               "Once the cause is fixed, %s again: entries already in the ledger keep their "
               "index\n",
               totals.first_not_stored.c_str(), visible_lines(totals.stop.message()).c_str(),
               static_cast<unsigned long long>(totals.not_stored),
               totals.first_not_stored.c_str(),
               from_stdin ? "send the stream from that entry (or the whole stream)"
                          : "append the same files");
}

int run(const Args& args) {
  if (args.positional().empty()) return fail(usage_error("append needs FILE... or -"));
  bool from_stdin = args.positional().size() == 1 && args.positional()[0] == "-";
  std::vector<Bytes> batch;
  std::vector<std::string> names;
  if (!from_stdin) {
    for (const auto& path : args.positional()) {
      if (path == "-") return fail(usage_error("'-' cannot be mixed with files"));
      auto bytes = read_file(path, ReadLimit{"entry file", kMaxEntryBytes});
      if (!bytes) return fail(bytes.error());
      batch.emplace_back(bytes->begin(), bytes->end());
      names.push_back(path);
    }
  }
  auto destination = open_destination(args);
  if (!destination) return fail(destination.error());
  EventSink& log = destination->sink();
  Totals totals;
  bool json = args.has("json");
  if (!from_stdin) {
    report(names, outcomes_of(log.append(batch)), json, totals);
  } else {
    constexpr size_t kStreamBatch = 16384;  // bounded memory for any stream length
    uint64_t position = 0;
    // A failed commit ends the stream: nothing after it may be appended.
    for (bool more = true; more && totals.not_stored == 0;) {
      batch.clear();
      auto r = read_stream(batch, kStreamBatch);
      if (!r) {
        std::fprintf(stderr, "evledger: entry %llu of the stream: %s (entries before it were "
                     "processed)\n", static_cast<unsigned long long>(position + batch.size()),
                     visible_lines(r.error().message()).c_str());
        totals.rejected++;
        more = false;
      } else {
        more = *r;
      }
      names.clear();
      for (size_t i = 0; i < batch.size(); ++i) {
        names.push_back("stream entry " + std::to_string(position + i));
      }
      report(names, outcomes_of(log.append(batch)), json, totals);
      position += batch.size();
    }
  }
  std::fflush(stdout);
  if (totals.not_stored != 0) report_stop(totals, from_stdin);
  std::fprintf(stderr, "%llu appended, %llu already present, %llu rejected%s; %s\n",
               static_cast<unsigned long long>(totals.added),
               static_cast<unsigned long long>(totals.present),
               static_cast<unsigned long long>(totals.rejected),
               totals.not_stored == 0
                   ? ""
                   : (", " + std::to_string(totals.not_stored) + " not stored").c_str(),
               destination->size_text().c_str());
  if (totals.not_stored != 0) return exit_code(totals.stop.code());
  return totals.rejected == 0 ? kExitOk : kExitRejected;
}

}  // namespace

int cmd_append(const std::vector<std::string>& argv) {
  static const std::string usage = std::string(kUsage) + "\n" + kDestinationHelp;
  return run_command(argv, with_destination_options({{"json", false}}), usage.c_str(), run);
}

}  // namespace evl::cli
