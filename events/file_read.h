// events/file_read.h — the one way evledger reads a file that came from outside: bounded in
// bytes, in kind and in time.
//
// An input file (an entry, a body, a tile, a checkpoint note, a proof, a key file, a manifest)
// is untrusted: it may be a 2 TB sparse file, a symbolic link to /dev/zero, a FIFO that no one
// writes, or a file on a stalled network filesystem. Here each read names the most its file can
// legally hold (ReadLimit::max_bytes) and reads at most max_bytes + 1 bytes, so memory follows
// the limit and never the file.
//
// Rules, for every read:
// - Only regular files are read. A symbolic link is followed and judged by what it points to:
//   a directory, FIFO, socket or device is refused without reading a byte (the open does not
//   wait for a FIFO's writer).
// - "-" is standard input, a stream (a pipe, a terminal, a redirected file or device): the same
//   limit applies, and the deadline, which is waited for with poll(). So is an anonymous pipe
//   named by /dev/fd/N (a shell's process substitution, <(...)), which has a writer by
//   construction; a named FIFO on a filesystem may never have one, and is refused.
// - The whole read must end within ReadLimit::timeout. For regular files the deadline is
//   checked between reads: a read() that a hung filesystem never returns is not interrupted.
//
// This lives in events/, the lowest module, because keys/ (key files), ledger/ (tile layouts)
// and tools/ (every command's input files) all read through it; it knows no format.
//
// Errors (each message names the file as "<what> <path>" and, where it applies, the limit):
//   kIo        the file cannot be opened or read (with the system's reason), is not a regular
//              file, or did not arrive within the timeout
//   kRejected  the file holds more than max_bytes
//
// Thread safety: reentrant; reading standard input from two threads at once is a caller bug.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "events/status.h"

namespace evl {

struct ReadLimit {
  std::string what;      // how messages name the file: "entry file", "tile", "verifier key file"
  size_t max_bytes = 0;  // the most such a file can legally hold
  std::chrono::milliseconds timeout{30000};  // as ledger/http_fetch.h's deadline per step
};

// The bytes of the regular file `path`, or of standard input for "-".
Result<std::string> read_file(const std::string& path, const ReadLimit& limit);

// The bytes of the regular file `rel`, relative to the open directory `dir_fd` (AT_FDCWD: the
// working directory), or nullopt when no file of that name exists. `shown` names it in messages.
Result<std::optional<std::string>> read_file_at(int dir_fd, const std::string& rel,
                                                const std::string& shown,
                                                const ReadLimit& limit);

}  // namespace evl
