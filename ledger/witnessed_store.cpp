// The publication of ledger/witnessing.h on disk, and receipts in it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "events/file_read.h"
#include "keys/note.h"
#include "ledger/proofs.h"
#include "ledger/witnessing.h"

namespace evl {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Writes `bytes` to dir/name through a temporary file: data, rename and directory all synced
// before it returns, so a crash leaves the old file or the new one.
Status write_durably(const std::string& dir, const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot write " + tmp + ": " + errno_text());
  bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
            ::fsync(fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) return io_error("cannot write " + tmp + ": " + why);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return io_error("cannot rename " + tmp + " to " + path + ": " + errno_text());
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return io_error("cannot open " + dir + ": " + errno_text());
  ok = ::fsync(dfd) == 0;
  ::close(dfd);
  return ok ? Status::ok() : io_error("cannot sync " + dir + ": " + errno_text());
}

}  // namespace

Status store_witnessed_checkpoint(const std::string& dir, std::string_view note) {
  return write_durably(dir, witnessed_checkpoint_path(dir), note);
}

std::string witnessing_dir(const std::string& ledger_dir) { return ledger_dir + "/witnessing"; }

std::string witnessed_checkpoint_path(const std::string& dir) { return dir + "/checkpoint"; }

Result<std::string> read_witnessed_checkpoint(const std::string& dir) {
  const std::string path = witnessed_checkpoint_path(dir);
  auto text = read_file_at(AT_FDCWD, path, path, ReadLimit{"witnessed checkpoint", kMaxNoteFileBytes});
  if (!text) return text.error();
  if (!*text) return not_found(path + " does not exist: this ledger was never served with "
                                      "--policy, or no checkpoint had its quorum yet");
  return std::move(**text);
}

Result<std::vector<std::string>> witnessed_receipts(const Ledger& ledger,
                                                    std::span<const uint64_t> indexes,
                                                    const Publication& publication) {
  auto proofs = prove_inclusions(ledger, indexes, publication.checkpoint.size);
  if (!proofs) return proofs.error();
  std::vector<std::string> out;
  out.reserve(proofs->size());
  for (InclusionProofDoc& proof : *proofs) {
    proof.checkpoint_note = publication.note;
    out.push_back(format_tlog_proof(proof));
  }
  return out;
}

}  // namespace evl
