// tools/publish.h — where a write command's entries go, the same for every write command:
// --ledger DIR, a ledger on this machine, or --to URL, a log server's POST /add-event
// (ledger/remote_log.h); and what becomes of each entry's receipt (--receipts DIR, --vkey).
// A command builds and signs exactly as it does for a local ledger, then appends through the
// Destination's sink, so both paths give the same answers in the same shapes. Secret keys
// never leave this machine: only signed entries are posted.
//
// Thread safety: used from the command's thread (the sink as ledger/event_sink.h says).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/json.h"
#include "keys/key.h"
#include "ledger/event_sink.h"
#include "ledger/ledger.h"
#include "tools/cli.h"

namespace evl::cli {

// The options of every write command for its destination, added to the command's own:
// --ledger, --log-key, --to, --retry-for, --receipts, --vkey.
std::vector<OptionSpec> with_destination_options(std::vector<OptionSpec> options);

// The help paragraph about them, for every write command's usage text.
extern const char* const kDestinationHelp;

struct Destination {
  std::unique_ptr<Ledger> ledger;     // --ledger: the ledger, open for writing; null with --to
  std::unique_ptr<EventSink> log;     // a LocalLog over `ledger`, or a RemoteLog
  std::unique_ptr<EventSink> keeper;  // with --receipts or --vkey: keeps `log`'s receipts
  // Where to append: `log`, through `keeper` when there is one.
  EventSink& sink() { return keeper ? *keeper : *log; }
  bool remote() const { return ledger == nullptr; }
  // "ledger size N", or "log size N at URL" ("size unknown" before any answer).
  std::string size_text() const;
};

// Opens --ledger DIR (as open_ledger_to_append(args) does) or --to URL. kUsage when both or
// neither are given, or an option of the other kind is (--log-key without --ledger,
// --retry-for without --to); the errors of opening the ledger or the URL otherwise.
//
// Receipts: with --receipts DIR each stored entry's tlog-proof is written, atomically, to
// DIR/<event id hex>.tlog-proof; with --vkey each receipt is first verified against that log
// key. An entry whose receipt is missing, does not verify, or cannot be written is answered
// as an error (stored at its index, "but ..."): kRejected for a receipt that does not verify,
// kIo otherwise.
Result<Destination> open_destination(const Args& args);

// The outcomes without their receipts, for reports shaped as the ledger's.
std::vector<AppendOutcome> outcomes_of(std::vector<SinkOutcome> answered);

// Signs `body`, appends it and reports "<what> appended at index N (id)<text_suffix>", or
// with --json the members of `json_line` after status, index and event. With a local ledger,
// key policy is checked before signing, so that a refusal can say who may sign (`hint`); a
// remote log's refusal for the key (403) gets the hint too. Returns the exit code.
int publish_and_report(Destination& destination, const SecretKey& key, const EventBody& body,
                       const std::string& what, const char* hint, const Args& args,
                       const Json& json_line, const std::string& text_suffix);

}  // namespace evl::cli
