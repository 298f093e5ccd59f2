#include "tools/publish.h"

#include <cstdio>
#include <filesystem>

#include "events/file_write.h"
#include "events/jcs.h"
#include "events/utf8.h"
#include "keys/signer.h"
#include "ledger/remote_log.h"
#include "tools/ledger_cli.h"

namespace evl::cli {

const char* const kDestinationHelp =
    "Where the events go: --ledger DIR, a ledger on this machine (each commit's checkpoint\n"
    "signed with --log-key, default DIR/keys/log.key), or --to URL, a log server ('evledger\n"
    "serve'): the events are built and signed here exactly as for a ledger, and posted to\n"
    "URL/add-event; secret keys never leave this machine. The answers are printed the same.\n"
    "  --retry-for SECONDS  with --to: how long one request may go unanswered (refused, reset,\n"
    "                       503 with Retry-After) before the command gives up, says what was\n"
    "                       stored and sends nothing more (default 60; resending is safe:\n"
    "                       what the log holds is answered present)\n"
    "  --receipts DIR       keep each event's receipt as DIR/<event id hex>.tlog-proof (C2SP\n"
    "                       tlog-proof; 'evledger proof verify' checks it with the log key)\n"
    "  --vkey LOGVKEY       verify every receipt against the log's verifier key (a file or\n"
    "                       the key itself); one that does not verify fails the command\n";

namespace {

constexpr uint64_t kDefaultRetrySeconds = 60;

// An EventSink that keeps the receipts of another: each stored entry's receipt must be there
// (and verified, when the log was opened with a key), and is written under `dir` when given.
class ReceiptKeeper final : public EventSink {
 public:
  ReceiptKeeper(EventSink& log, std::optional<std::string> dir) : log_(log), dir_(std::move(dir)) {}

  std::vector<SinkOutcome> append(std::span<const Bytes> batch,
                                  const std::function<void()>& queued) override {
    std::vector<SinkOutcome> out = log_.append(batch, queued);
    for (SinkOutcome& s : out) {
      AppendOutcome& o = s.outcome;
      if (!o.status) continue;
      const std::string hex = digest_text(o.id).substr(7);
      Status kept = s.receipt_status;
      if (kept && dir_) kept = replace_file(*dir_ + "/" + hex + ".tlog-proof", s.receipt, Durability::kVisible);
      if (!kept) {
        o.status = Status(kept.code(), "stored at index " + std::to_string(o.index) + " as " +
                                           digest_text(o.id) + ", but " + kept.message());
      }
    }
    return out;
  }
  std::optional<uint64_t> find(const Digest& id) const override { return log_.find(id); }
  std::optional<uint64_t> size() const override { return log_.size(); }
  std::string where() const override { return log_.where(); }

 private:
  EventSink& log_;
  std::optional<std::string> dir_;
};

// The options that only one kind of destination takes, refused for the other.
Status check_exclusive(const Args& args) {
  if (args.has("to") && args.has("ledger")) {
    return usage_error("--to and --ledger are exclusive: --ledger DIR appends to a ledger on "
                       "this machine, --to URL posts to a log server; give one");
  }
  if (!args.has("to") && !args.has("ledger")) {
    return usage_error("say where the events go: --ledger DIR (a ledger on this machine) or "
                       "--to URL (a log server, e.g. http://127.0.0.1:8080/)");
  }
  if (args.has("to") && args.has("log-key")) {
    return usage_error("--log-key is for --ledger: with --to the server signs its own "
                       "checkpoints");
  }
  if (!args.has("to") && args.has("retry-for")) {
    return usage_error("--retry-for is for --to: a ledger on this machine answers at once");
  }
  return Status::ok();
}

Result<std::unique_ptr<EventSink>> open_remote(const Args& args,
                                               std::optional<VerifierKey> log_key) {
  auto retry = args.get_u64("retry-for", kDefaultRetrySeconds,
                            {0, 86400, "seconds; 0 sends each request once"});
  if (!retry) return retry.error();
  RemoteLogOptions options;
  options.retry_for = std::chrono::seconds(*retry);
  // Receipts only for a publisher that keeps or checks them: they are the server's dearest
  // part of an append (a proof per entry).
  options.receipts = args.has("receipts") || log_key.has_value();
  options.log_key = std::move(log_key);
  options.notice = [](const std::string& text) {
    std::fprintf(stderr, "evledger: note: %s\n", text.c_str());
  };
  auto remote = RemoteLog::open(*args.get("to"), std::move(options));
  if (!remote) return remote.error().with_context("--to");
  return std::unique_ptr<EventSink>(std::move(remote.value()));
}

}  // namespace

std::vector<OptionSpec> with_destination_options(std::vector<OptionSpec> options) {
  for (const char* name : {"ledger", "log-key", "to", "retry-for", "receipts", "vkey"}) {
    bool given = false;
    for (const auto& o : options) given = given || o.name == name;
    if (!given) options.push_back({name});
  }
  return options;
}

Result<Destination> open_destination(const Args& args) {
  EVL_RETURN_IF_ERROR(check_exclusive(args));
  std::optional<VerifierKey> log_key;
  if (auto vkey = args.get("vkey")) {
    auto key = load_verifier_key(*vkey);
    if (!key) return key.error().with_context("--vkey");
    log_key = std::move(key.value());
  }
  const std::optional<std::string> dir = args.get("receipts");
  if (dir) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec || !std::filesystem::is_directory(*dir)) {
      return io_error("--receipts " + *dir + ": cannot make the directory: " +
                      (ec ? ec.message() : "a file of that name is in the way"));
    }
  }
  Destination d;
  if (args.has("to")) {
    auto remote = open_remote(args, log_key);
    if (!remote) return remote.error();
    d.log = std::move(remote.value());
  } else {
    auto ledger = open_ledger_to_append(args);
    if (!ledger) return ledger.error();
    d.ledger = std::move(ledger.value());
    d.log = std::make_unique<LocalLog>(*d.ledger, dir.has_value(), log_key);
  }
  if (dir || log_key) d.keeper = std::make_unique<ReceiptKeeper>(*d.log, dir);
  return d;
}

std::string Destination::size_text() const {
  const auto size = log->size();
  const std::string n = size ? std::to_string(*size) : std::string("unknown");
  return remote() ? "log size " + n + " at " + log->where() : "ledger size " + n;
}

std::vector<AppendOutcome> outcomes_of(std::vector<SinkOutcome> answered) {
  std::vector<AppendOutcome> out;
  out.reserve(answered.size());
  for (SinkOutcome& s : answered) out.push_back(std::move(s.outcome));
  return out;
}

int publish_and_report(Destination& destination, const SecretKey& key, const EventBody& body,
                       const std::string& what, const char* hint, const Args& args,
                       const Json& json_line, const std::string& text_suffix) {
  if (destination.ledger) {
    const Ledger& ledger = *destination.ledger;
    if (Status s = ledger.policy().check(ledger.size(), body); !s) {
      return fail(Status(s.code(), what + " rejected: " + s.message() + "; " + hint));
    }
  }
  auto entry = sign_event(key, body);
  if (!entry) return fail(entry.error());
  std::vector<Bytes> batch{std::move(entry.value())};
  const AppendOutcome o = destination.sink().append(batch).at(0).outcome;
  if (o.commit_failed) {
    return fail(Status(o.status.code(),
                       what + " not stored: " + o.status.message() + "; once " +
                           (destination.remote() ? destination.log->where() + " answers again"
                                                 : std::string("the cause is fixed")) +
                           ", run the same command again"));
  }
  if (!o.status) {
    std::string message = what + " rejected: " + o.status.message();
    if (o.status.code() == Code::kDenied) message += std::string("; ") + hint;
    return fail(Status(o.status.code(), message));
  }
  if (args.has("json")) {
    Json j = Json::object();
    j.set("status", o.added ? "added" : "present");
    j.set("index", o.index);
    j.set("event", digest_text(o.id));
    for (const auto& [name, value] : json_line.as_object()) j.set(name, value);
    std::printf("%s\n", jcs_serialize(j).c_str());
  } else {
    std::printf("%s %s at index %llu (%s)%s\n", visible_text(what).c_str(),
                o.added ? "appended" : "already present",
                static_cast<unsigned long long>(o.index), digest_text(o.id).c_str(),
                visible_text(text_suffix).c_str());
  }
  return kExitOk;
}

}  // namespace evl::cli
