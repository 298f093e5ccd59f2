// tools/ledger_cli.h — helpers for subcommands that open a ledger and append one event.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "events/json.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "keys/tlog_policy.h"
#include "ledger/ledger.h"
#include "ledger/proofs.h"
#include "projections/ledger_hook.h"
#include "tools/cli.h"

namespace evl::cli {

// Opens --ledger (required) for writing or reading. Writers sign checkpoints with --log-key
// (default <ledger>/keys/log.key), and say on standard error when they fold the projections
// afresh (at open: missing, behind the log, or of another projection format; in an append: a
// compromise that voids earlier events).
Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write);
// As above, with the projections' options when writing (a rebuild's progress, say), and an
// observer of the writer's commits (OpenOptions::on_commit).
Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write,
                                            const ProjectionHookOptions& projections,
                                            std::function<void(const CommitInfo&)> on_commit = {});
// As open_ledger(args, true, writer_projection_options(), on_commit), for a writer that appends
// entries of its own (import, append, serve): a mirror's directory is refused with kUsage,
// saying how to publish instead, and nothing is written (OpenOptions::own_entries).
Result<std::unique_ptr<Ledger>> open_ledger_to_append(
    const Args& args, std::function<void(const CommitInfo&)> on_commit = {});
// The projections' options of open_ledger(args, write): a writer says when it folds afresh.
ProjectionHookOptions writer_projection_options();

// Loads the secret key named by option `option` (e.g. --signer).
Result<SecretKey> load_signer(const Args& args, const std::string& option);

// Stamps `body` with the signer as author and the current time, signs it, appends it and
// prints "<what> at index N (id)" — or the rejection. Returns the exit code.
int append_one(Ledger& ledger, const SecretKey& signer, EventBody body, const std::string& what);

// The digest given as --NAME (sha256:<64 hex>); kUsage naming `what` otherwise.
Result<Digest> digest_option(const Args& args, const std::string& name, const char* what);


// The size of the newest checkpoint, for messages ("unknown" when unreadable).
std::string newest_size_text(const Ledger& ledger);

// The newest checkpoint or the one of `size` entries, opened with the genesis's log key: a
// stored checkpoint that does not verify is corruption. `option` names the option that asked
// for the size, for the message when there is no checkpoint of that size.
Result<StoredCheckpoint> ledger_checkpoint(const Ledger& ledger, std::optional<uint64_t> size,
                                           const std::string& option);

// --policy FILE, when given: a C2SP tlog-policy (keys/tlog_policy.h) into `policy`; a file
// that does not parse is kUsage, one that cannot be read kIo.
Status load_policy_option(const Args& args, std::optional<TlogPolicy>& policy);

}  // namespace evl::cli
