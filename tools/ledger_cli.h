// tools/ledger_cli.h — helpers for subcommands that open a ledger and append one event.
#pragma once

#include <memory>
#include <string>

#include "keys/key.h"
#include "ledger/ledger.h"
#include "tools/cli.h"

namespace evl::cli {

// Opens --ledger (required) for writing or reading. Writers sign checkpoints with --log-key
// (default <ledger>/keys/log.key).
Result<std::unique_ptr<Ledger>> open_ledger(const Args& args, bool write);

// Loads the secret key named by option `option` (e.g. --signer).
Result<SecretKey> load_signer(const Args& args, const std::string& option);

// Stamps `body` with the signer as author and the current time, signs it, appends it and
// prints "<what> at index N (id)" — or the rejection. Returns the exit code.
int append_one(Ledger& ledger, const SecretKey& signer, EventBody body, const std::string& what);

}  // namespace evl::cli
