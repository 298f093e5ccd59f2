// events/file_write.h — the one way evledger writes a file of its own: whole or not at all, and
// durable when asked.
//
// The counterpart of events/file_read.h. A file that another process (or the next run) may
// read while it is written, or after a crash, is written to a temporary name beside it and
// renamed into place: a reader sees the old file or the new one, never half of one. Durable
// writes also sync the data before the rename and the directory after it, so that after a
// power cut the file holds what the call returned for.
//
// This lives in events/, the lowest module, because ledger/ (tile exports, the published
// witnessed checkpoint) and tools/ (init's key files, a publisher's receipts) all write so.
//
// Errors: kIo, naming the file and the system's reason. A failed replace_file removes its
// temporary file and leaves the old file as it was.
// Thread safety: reentrant; two writers of one path at once are a caller bug.
#pragma once

#include <string>
#include <string_view>

#include "events/status.h"

namespace evl {

enum class Durability : bool { kVisible = false, kDurable = true };

// Writes every byte of `bytes` to `fd` (retrying short writes and EINTR); `shown` names the
// file in messages.
Status write_all(int fd, std::string_view bytes, const std::string& shown);

// fsync of a file or a directory (a new name is durable once its directory is synced).
Status sync_path(const std::string& path);

// Replaces (or creates) `path` with `bytes` through the temporary file "<dir>/.<name>.tmp".
Status replace_file(const std::string& path, std::string_view bytes, Durability durability);

// Creates `path`, which must not exist (never replacing a file), with `bytes` and `mode`, and
// syncs its data; the caller syncs the directory once it has made all its files.
Status create_file(const std::string& path, std::string_view bytes, unsigned mode);

}  // namespace evl
