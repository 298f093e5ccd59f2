#include "events/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace evl {

namespace {

using Clock = std::chrono::steady_clock;

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string seconds_text(std::chrono::milliseconds ms) {
  auto s = ms.count() / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

Status too_large(const std::string& name, const std::string& how, const ReadLimit& limit) {
  return rejected(name + " " + how + " " + std::to_string(limit.max_bytes) +
                  " bytes, the limit for " + limit.what + "s; is it the right file?");
}

// Waits until `fd` is readable, at its end or in error (read() then says which), at most until
// `deadline`; false when the deadline passed.
Result<bool> wait_readable(int fd, Clock::time_point deadline, const std::string& name) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) {
      return io_error("cannot wait for " + name + ": " + std::strerror(errno));
    }
  }
}

// One read() of up to `n` bytes, retried when interrupted: how many, or nullopt when a
// non-blocking descriptor has nothing yet (EAGAIN: wait, then read again).
Result<std::optional<size_t>> read_some(int fd, char* buf, size_t n, const std::string& name) {
  for (;;) {
    ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return std::optional<size_t>(static_cast<size_t>(got));
    if (errno == EAGAIN) return std::optional<size_t>();
    if (errno != EINTR) return io_error("cannot read " + name + ": " + std::strerror(errno));
  }
}

// One bounded read of an open descriptor. `stream`: wait for data with poll() (a pipe, a
// terminal); otherwise each read() returns what the file has.
class BoundedRead {
 public:
  BoundedRead(int fd, std::string name, const ReadLimit& limit, bool stream)
      : fd_(fd), name_(std::move(name)), limit_(limit), stream_(stream),
        deadline_(Clock::now() + limit.timeout) {}

  Result<std::string> run(size_t expected) {
    std::string data;
    data.reserve(std::min(expected, limit_.max_bytes) + 1);
    char buf[1 << 16];
    for (;;) {
      if (stream_) {
        auto ready = wait_readable(fd_, deadline_, name_);
        if (!ready) return ready.error();
        if (!*ready) return timed_out();
      }
      size_t room = limit_.max_bytes + 1 - data.size();
      auto n = read_some(fd_, buf, std::min(sizeof buf, room), name_);
      if (!n) return n.error();
      if (n->has_value()) {
        if (**n == 0) return data;
        data.append(buf, **n);
        if (data.size() > limit_.max_bytes) return too_large(name_, "holds more than", limit_);
      }
      if (Clock::now() > deadline_) return timed_out();
    }
  }

 private:
  Status timed_out() const {
    return io_error(name_ + " was not read to its end within " + seconds_text(limit_.timeout) +
                    ", the deadline for reading " + limit_.what + "s; is its writer or its "
                    "filesystem stalled?");
  }

  int fd_;
  std::string name_;
  const ReadLimit& limit_;
  bool stream_;
  Clock::time_point deadline_;
};

// Refuses what is not a regular file (`via_link`: a symbolic link led there) or is too large.
Status check_regular(const struct stat& st, const std::string& name, const ReadLimit& limit,
                     bool via_link) {
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) <= limit.max_bytes) return Status::ok();
    return too_large(name, "is " + std::to_string(st.st_size) + " bytes, more than", limit);
  }
  return io_error(name + " is " + kind_of(st.st_mode) +
                  (via_link ? " (through a symbolic link)" : "") + ", not a regular file; " +
                  limit.what + "s are read only from regular files");
}

// Whether `fd` is an anonymous pipe (what a shell's process substitution, <(...), passes as
// /dev/fd/N): one with a writer by construction, read as a stream like standard input. A named
// FIFO on a filesystem may have no writer ever, and is refused.
bool is_anonymous_pipe(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[32];
  ssize_t n = ::readlink(link, target, sizeof target);
  return n > 5 && std::string_view(target, static_cast<size_t>(n)).starts_with("pipe:");
}

// One read of a stream's next piece, of at most `n` bytes, within limit.timeout: a pipe or a
// terminal (`stream`) is waited for with poll(); a read() of a file on a hung filesystem is not
// interrupted, but one that took too long ends the stream.
Result<size_t> read_by_deadline(int fd, bool stream, char* buf, size_t n,
                                const std::string& name, const ReadLimit& limit) {
  const auto deadline = Clock::now() + limit.timeout;
  const std::string fix = ", the deadline for each read of " + limit.what + "s; is its " +
                          (stream ? "writer" : "filesystem") + " stalled?";
  for (;;) {
    if (stream) {
      auto ready = wait_readable(fd, deadline, name);
      if (!ready) return ready.error();
      if (!*ready) {
        return io_error("no data came from " + name + " within " + seconds_text(limit.timeout) +
                        fix);
      }
    }
    auto got = read_some(fd, buf, n, name);
    if (!got) return got.error();
    if (!stream && Clock::now() > deadline) {
      return io_error("a read of " + name + " took more than " + seconds_text(limit.timeout) +
                      fix);
    }
    if (got->has_value()) return **got;
  }
}

// An input opened for reading, and how to read it.
struct OpenInput {
  int fd = -1;
  bool owned = true;    // a descriptor of our own (not standard input)
  bool stream = false;  // a pipe or a terminal: wait for data with poll()
  std::optional<uint64_t> size;
};

Result<OpenInput> open_standard_input(const std::string& name, const ReadLimit& limit) {
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) != 0) {
    return io_error("cannot read " + name + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return io_error(name + " is a directory; redirect a file into it");
  OpenInput in{STDIN_FILENO, false, !S_ISREG(st.st_mode), std::nullopt};
  // A redirected regular file is known by its size; anything else is a stream.
  if (S_ISREG(st.st_mode)) {
    off_t at = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
    uint64_t left = at >= 0 && st.st_size > at ? static_cast<uint64_t>(st.st_size - at) : 0;
    if (left > limit.max_bytes) {
      return too_large(name, "is " + std::to_string(left) + " bytes, more than", limit);
    }
    in.size = left;
  }
  return in;
}

// Opens `rel` under `dir_fd` and checks what it is; nullopt when no file of that name exists.
Result<std::optional<OpenInput>> open_input_at(int dir_fd, const std::string& rel,
                                               const std::string& name, const ReadLimit& limit) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer (and it is refused just below).
  int fd = ::openat(dir_fd, rel.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) return std::optional<OpenInput>();
  if (fd < 0) return io_error("cannot read " + name + ": " + std::strerror(errno));
  struct stat st {};
  Status s = Status::ok();
  if (::fstat(fd, &st) != 0) {
    s = io_error("cannot read " + name + ": " + std::strerror(errno));
  } else if (S_ISFIFO(st.st_mode) && is_anonymous_pipe(fd)) {
    return std::optional<OpenInput>(OpenInput{fd, true, true, std::nullopt});
  } else {
    struct stat own {};
    bool via_link = !S_ISREG(st.st_mode) &&
                    ::fstatat(dir_fd, rel.c_str(), &own, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(own.st_mode);
    s = check_regular(st, name, limit, via_link);
  }
  if (!s) {
    ::close(fd);
    return s;
  }
  return std::optional<OpenInput>(OpenInput{fd, true, false, static_cast<uint64_t>(st.st_size)});
}

// Reads an opened input whole, and closes it when it is ours.
Result<std::string> read_whole(const OpenInput& in, const std::string& name,
                               const ReadLimit& limit) {
  auto data = BoundedRead(in.fd, name, limit, in.stream).run(in.size.value_or(0));
  if (in.owned) ::close(in.fd);
  return data;
}

}  // namespace

Result<std::optional<std::string>> read_file_at(int dir_fd, const std::string& rel,
                                                const std::string& shown,
                                                const ReadLimit& limit) {
  const std::string name = limit.what + " " + shown;
  auto in = open_input_at(dir_fd, rel, name, limit);
  if (!in) return in.error();
  if (!in->has_value()) return std::optional<std::string>();
  auto data = read_whole(**in, name, limit);
  if (!data) return data.error();
  return std::optional<std::string>(std::move(*data));
}

Result<std::string> read_file(const std::string& path, const ReadLimit& limit) {
  if (path == "-") {
    const std::string name = limit.what + " from standard input";
    auto in = open_standard_input(name, limit);
    if (!in) return in.error();
    return read_whole(*in, name, limit);
  }
  auto data = read_file_at(AT_FDCWD, path, path, limit);
  if (!data) return data.error();
  if (!data->has_value()) {
    return io_error("cannot read " + limit.what + " " + path + ": " + std::strerror(ENOENT));
  }
  return std::move(**data);
}

// ---- FileStream ------------------------------------------------------------------------------

Result<std::unique_ptr<FileStream>> FileStream::open(const std::string& path,
                                                     const ReadLimit& limit) {
  std::string name = path == "-" ? limit.what + " from standard input" : limit.what + " " + path;
  std::optional<OpenInput> in;
  if (path == "-") {
    auto opened = open_standard_input(name, limit);
    if (!opened) return opened.error();
    in = *opened;
  } else {
    auto opened = open_input_at(AT_FDCWD, path, name, limit);
    if (!opened) return opened.error();
    if (!opened->has_value()) return io_error("cannot read " + name + ": " + std::strerror(ENOENT));
    in = **opened;
  }
  return std::unique_ptr<FileStream>(
      new FileStream(in->fd, in->owned, in->stream, in->size, std::move(name), limit));
}

FileStream::FileStream(int fd, bool owned, bool stream, std::optional<uint64_t> size,
                       std::string name, const ReadLimit& limit)
    : fd_(fd), owned_(owned), stream_(stream), size_(size), name_(std::move(name)),
      limit_(limit) {}

FileStream::~FileStream() {
  if (owned_) ::close(fd_);
}

Result<size_t> FileStream::read(char* buf, size_t n) {
  if (failed_) return io_error("cannot read " + name_ + " further after an error");
  auto got = read_by_deadline(fd_, stream_, buf, n, name_, limit_);
  if (got && (read_ += *got) > limit_.max_bytes) {
    got = too_large(name_, "holds more than", limit_);
  }
  failed_ = !got;
  return got;
}

}  // namespace evl
