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
      if (stream_) EVL_RETURN_IF_ERROR(wait_readable());
      size_t room = limit_.max_bytes + 1 - data.size();
      ssize_t n = ::read(fd_, buf, std::min(sizeof buf, room));
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return io_error("cannot read " + name_ + ": " + std::strerror(errno));
      if (n == 0) return data;
      data.append(buf, static_cast<size_t>(n));
      if (data.size() > limit_.max_bytes) {
        return too_large(name_, "holds more than", limit_);
      }
      if (Clock::now() > deadline_) return timed_out();
    }
  }

 private:
  Status wait_readable() {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      if (left.count() <= 0) return timed_out();
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (rc > 0) return Status::ok();  // readable, at its end, or in error: read() says which
      if (rc < 0 && errno != EINTR) {
        return io_error("cannot wait for " + name_ + ": " + std::strerror(errno));
      }
    }
  }

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

Result<std::string> read_standard_input(const ReadLimit& limit) {
  const std::string name = limit.what + " from standard input";
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) != 0) {
    return io_error("cannot read " + name + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return io_error(name + " is a directory; redirect a file into it");
  // A redirected regular file is known by its size; anything else is a stream.
  size_t expected = 0;
  if (S_ISREG(st.st_mode)) {
    off_t at = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
    uint64_t left = at >= 0 && st.st_size > at ? static_cast<uint64_t>(st.st_size - at) : 0;
    if (left > limit.max_bytes) {
      return too_large(name, "is " + std::to_string(left) + " bytes, more than", limit);
    }
    expected = static_cast<size_t>(left);
  }
  return BoundedRead(STDIN_FILENO, name, limit, !S_ISREG(st.st_mode)).run(expected);
}

}  // namespace

Result<std::optional<std::string>> read_file_at(int dir_fd, const std::string& rel,
                                                const std::string& shown,
                                                const ReadLimit& limit) {
  const std::string name = limit.what + " " + shown;
  // O_NONBLOCK: opening a FIFO does not wait for a writer (and it is refused just below).
  int fd = ::openat(dir_fd, rel.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) return std::optional<std::string>();
  if (fd < 0) return io_error("cannot read " + name + ": " + std::strerror(errno));
  struct stat st {};
  Status s = Status::ok();
  if (::fstat(fd, &st) != 0) {
    s = io_error("cannot read " + name + ": " + std::strerror(errno));
  } else if (S_ISFIFO(st.st_mode) && is_anonymous_pipe(fd)) {
    auto data = BoundedRead(fd, name, limit, true).run(0);
    ::close(fd);
    if (!data) return data.error();
    return std::optional<std::string>(std::move(*data));
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
  auto data = BoundedRead(fd, name, limit, false).run(static_cast<size_t>(st.st_size));
  ::close(fd);
  if (!data) return data.error();
  return std::optional<std::string>(std::move(*data));
}

Result<std::string> read_file(const std::string& path, const ReadLimit& limit) {
  if (path == "-") return read_standard_input(limit);
  auto data = read_file_at(AT_FDCWD, path, path, limit);
  if (!data) return data.error();
  if (!data->has_value()) {
    return io_error("cannot read " + limit.what + " " + path + ": " + std::strerror(ENOENT));
  }
  return std::move(**data);
}

}  // namespace evl
