#include "tools/ledger_cli.h"

#include <cstdio>
#include <memory>

#include "events/utf8.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "events/jcs.h"
#include "keys/signer.h"
#include "projections/ledger_hook.h"
#include "tools/render.h"

namespace evl::cli {

ProjectionHookOptions writer_projection_options() {
  ProjectionHookOptions projections;
  // Said once, at the first progress report of the first fold (every 512 entries, or at the
  // end of a shorter one): a fold of a long log takes a while.
  projections.rebuild_progress = [told = std::make_shared<bool>(false)](uint64_t,
                                                                        uint64_t total) {
    if (*told) return;
    *told = true;
    std::fprintf(stderr,
                 "evledger: folding the projections of %llu entries afresh (they were missing, "
                 "behind the log or of another projection format, or a compromise voided "
                 "events)\n",
                 static_cast<unsigned long long>(total));
  };
  return projections;
}

namespace {

Result<std::unique_ptr<Ledger>> open_ledger_with(const Args& args, bool write, bool own_entries,
                                                 const ProjectionHookOptions& projections,
                                                 std::function<void(const CommitInfo&)> on_commit) {
  auto dir = args.require("ledger");
  if (!dir) return dir.error();
  OpenOptions options;
  options.dir = *dir;
  options.read_only = !write;
  options.notice = [](const std::string& text) {
    std::fprintf(stderr, "evledger: note: %s\n", visible_lines(text).c_str());
  };
  if (write) {
    options.log_key_path = args.get("log-key").value_or("");
    options.hook = make_projection_hook(projections);  // kept in every append
    options.on_commit = std::move(on_commit);
    options.own_entries = own_entries;
  }
  return Ledger::open(options);
}

}  // namespace

Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write) {
  return open_ledger(args, write, writer_projection_options());
}

Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write,
                                            const ProjectionHookOptions& projections,
                                            std::function<void(const CommitInfo&)> on_commit) {
  return open_ledger_with(args, write, false, projections, std::move(on_commit));
}

Result<std::unique_ptr<Ledger>> open_ledger_to_append(
    const Args& args, std::function<void(const CommitInfo&)> on_commit) {
  return open_ledger_with(args, true, true, writer_projection_options(), std::move(on_commit));
}

Result<SecretKey> load_signer(const Args& args, const std::string& option) {
  auto path = args.require(option);
  if (!path) return path.error();
  return SecretKey::load(*path);
}

namespace {

// How a failed append is told: a rejection, or a commit that failed (the disk, say).
std::string outcome_word(const AppendOutcome& o) {
  return o.commit_failed ? " not stored" : " rejected";
}

}  // namespace

int append_one(Ledger& ledger, const SecretKey& signer, EventBody body, const std::string& what) {
  body.author = signer.public_key();
  body.claimed_time_ms = now_ms();
  auto entry = sign_event(signer, body);
  if (!entry) return fail(entry.error());
  std::vector<Bytes> batch{std::move(entry.value())};
  auto outcomes = ledger.append(batch);
  const AppendOutcome& o = outcomes.at(0);
  if (!o.status) return fail(o.status.with_context(what + outcome_word(o)));
  std::printf("%s %s at index %llu (%s)\n", visible_text(what).c_str(),
              o.added ? "appended" : "already present",
              static_cast<unsigned long long>(o.index), digest_text(o.id).c_str());
  return kExitOk;
}

std::string newest_size_text(const Ledger& ledger) {
  auto size = newest_checkpoint_size(ledger);
  return size ? std::to_string(*size) : "unknown";
}

Result<StoredCheckpoint> ledger_checkpoint(const Ledger& ledger, std::optional<uint64_t> size,
                                           const std::string& option) {
  auto cp = stored_checkpoint(ledger, size);
  if (!cp && cp.error().code() == Code::kNotFound && size) {
    return not_found("--" + option + " " + std::to_string(*size) +
                     ": the log has no checkpoint of that size (it signs one per commit, at the "
                     "size where the commit ended); the newest is of size " +
                     newest_size_text(ledger) + ", the default");
  }
  return cp;
}

Result<Digest> digest_option(const Args& args, const std::string& name, const char* what) {
  auto text = args.require(name);
  if (!text) return text.error();
  auto digest = parse_digest_text(*text);
  if (!digest) {
    return usage_error("--" + name + " " + *text + " is not " + what +
                       ": write \"sha256:\" followed by 64 lowercase hex digits, the manifest "
                       "digest as 'evledger import --json' prints it");
  }
  return *digest;
}

Status load_policy_option(const Args& args, std::optional<TlogPolicy>& policy) {
  auto path = args.get("policy");
  if (!path) return Status::ok();
  auto loaded = load_tlog_policy(*path);
  if (!loaded) {
    if (loaded.error().code() == Code::kIo) return loaded.error();
    return usage_error("--policy: " + loaded.error().message());
  }
  policy = std::move(*loaded);
  return Status::ok();
}

}  // namespace evl::cli
