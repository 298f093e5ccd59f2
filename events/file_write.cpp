#include "events/file_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace evl {

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Status write_all(int fd, std::string_view bytes, const std::string& shown) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error("cannot write " + shown + ": " + errno_text());
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::ok();
}

Status sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open " + path + " to sync it: " + errno_text());
  const bool ok = ::fsync(fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) return io_error("cannot sync " + path + ": " + why);
  return Status::ok();
}

Status replace_file(const std::string& path, std::string_view bytes, Durability durability) {
  // "dir/name" -> "dir/" and "name"; a bare name is in the working directory.
  const size_t cut = path.rfind('/') + 1;  // 0 when there is no '/'
  const std::string dir = cut == 0 ? "." : cut == 1 ? "/" : path.substr(0, cut - 1);
  const std::string tmp = path.substr(0, cut) + "." + path.substr(cut) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create " + tmp + ": " + errno_text());
  Status s = write_all(fd, bytes, tmp);
  if (s && durability == Durability::kDurable && ::fsync(fd) != 0) {
    s = io_error("cannot sync " + tmp + ": " + errno_text());
  }
  if (::close(fd) != 0 && s) s = io_error("cannot write " + tmp + ": " + errno_text());
  if (s && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = io_error("cannot rename " + tmp + " to " + path + ": " + errno_text());
  }
  if (!s) {
    ::unlink(tmp.c_str());
    return s;
  }
  return durability == Durability::kDurable ? sync_path(dir) : Status::ok();
}

Status create_file(const std::string& path, std::string_view bytes, unsigned mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return io_error("cannot create " + path + ": " + errno_text());
  Status s = write_all(fd, bytes, path);
  if (s && ::fsync(fd) != 0) s = io_error("cannot sync " + path + ": " + errno_text());
  if (::close(fd) != 0 && s) s = io_error("cannot write " + path + ": " + errno_text());
  return s;
}

}  // namespace evl
