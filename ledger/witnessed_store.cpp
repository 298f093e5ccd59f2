// The publication of ledger/witnessing.h on disk, and receipts in it.
#include <fcntl.h>

#include "events/file_read.h"
#include "events/file_write.h"
#include "keys/note.h"
#include "ledger/proofs.h"
#include "ledger/witnessing.h"

namespace evl {

Status store_witnessed_checkpoint(const std::string& dir, std::string_view note) {
  return replace_file(witnessed_checkpoint_path(dir), note, Durability::kDurable);
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
