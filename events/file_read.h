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
// An input of any length that is consumed as it arrives (a catalog for `evledger import`) is read
// through a FileStream: the same kinds of file are refused, no more than max_bytes are read in
// all, and the deadline applies to each read (a pipe whose writer stalls, a hung filesystem),
// not to the whole stream.
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
#include <cstdint>
#include <memory>
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

// One input read piece by piece. Thread safety: one thread at a time.
class FileStream {
 public:
  // Opens the regular file `path`, or standard input for "-", under the rules above. Errors as
  // read_file's, before any byte is read: a regular file larger than max_bytes is kRejected.
  static Result<std::unique_ptr<FileStream>> open(const std::string& path,
                                                  const ReadLimit& limit);
  ~FileStream();  // closes the file; standard input stays open
  FileStream(const FileStream&) = delete;
  FileStream& operator=(const FileStream&) = delete;

  // Up to `n` bytes into `buf`: how many were read, 0 at the end of the input. kIo with the
  // system's reason, or when no data came within limit.timeout; kRejected once the input holds
  // more than max_bytes. After an error the stream reads nothing more.
  Result<size_t> read(char* buf, size_t n);

  // The bytes a regular file holds (from standard input: what is left of a redirected file);
  // nullopt for a pipe or a terminal.
  std::optional<uint64_t> size() const { return size_; }
  const std::string& name() const { return name_; }  // "<what> <path>", as messages say it

 private:
  FileStream(int fd, bool owned, bool stream, std::optional<uint64_t> size, std::string name,
             const ReadLimit& limit);

  int fd_;
  bool owned_;   // closed by the destructor (not standard input)
  bool stream_;  // a pipe or a terminal: wait for data with poll()
  std::optional<uint64_t> size_;
  std::string name_;
  ReadLimit limit_;
  uint64_t read_ = 0;
  bool failed_ = false;
};

}  // namespace evl
