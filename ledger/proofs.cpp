#include "ledger/proofs.h"

#include "events/jcs.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/merkle.h"

namespace evl {
namespace {

Status own_proof_failed(const Status& why) {
  return corrupt("the ledger's own " + why.message() + "; run evledger verify");
}

std::string newest_size_text(const Ledger& ledger) {
  auto size = newest_checkpoint_size(ledger);
  return size ? std::to_string(*size) : "unknown";
}

}  // namespace

std::optional<uint64_t> newest_checkpoint_size(const Ledger& ledger) {
  auto note = ledger.checkpoint();
  if (!note) return std::nullopt;
  auto parsed = parse_note(*note);
  if (!parsed) return std::nullopt;
  auto checkpoint = parse_checkpoint_body(parsed->text);
  if (!checkpoint) return std::nullopt;
  return checkpoint->size;
}

Result<StoredCheckpoint> stored_checkpoint(const Ledger& ledger, std::optional<uint64_t> size) {
  auto note = ledger.checkpoint(size);
  if (!note && note.error().code() == Code::kNotFound && size) {
    return not_found("the log has no checkpoint of size " + std::to_string(*size) +
                     " (it signs one per commit, at the size where the commit ended); the "
                     "newest is of size " + newest_size_text(ledger));
  }
  if (!note) return note.error().with_context("checkpoint");
  auto key = ledger.log_verifier();
  if (!key) return key.error().with_context("the log's verifier key");
  auto checkpoint = open_checkpoint(*note, *key);
  if (!checkpoint) return corrupt("stored " + checkpoint.error().message() + "; run evledger verify");
  return StoredCheckpoint{std::move(*note), std::move(*checkpoint), std::move(*key)};
}

std::string checkpoint_json(const StoredCheckpoint& checkpoint) {
  std::string out = "{\"origin\":";
  jcs_append_string(out, checkpoint.checkpoint.origin);
  out += ",\"size\":" + std::to_string(checkpoint.checkpoint.size) + ",\"root\":";
  jcs_append_string(out, base64_encode(checkpoint.checkpoint.root));
  out += ",\"note\":";
  jcs_append_string(out, checkpoint.note);
  return out + "}";
}

Result<CheckpointPage> stored_checkpoints(const Ledger& ledger, uint64_t from_size,
                                          size_t limit) {
  auto key = ledger.log_verifier();
  if (!key) return key.error().with_context("the log's verifier key");
  CheckpointPage page;
  Status s = ledger.scan_checkpoints(from_size, [&](uint64_t size, std::string_view note) {
    if (page.checkpoints.size() == limit) {
      page.next = size;
      return Status(Code::kNotFound, "");  // stops the scan: the page is full
    }
    auto checkpoint = open_checkpoint(note, *key);
    if (!checkpoint) {
      return corrupt("stored " + checkpoint.error().message() + "; run evledger verify");
    }
    if (checkpoint->size != size) {
      return corrupt("the checkpoint stored for size " + std::to_string(size) + " is of size " +
                     std::to_string(checkpoint->size) + "; run evledger verify");
    }
    page.checkpoints.push_back(StoredCheckpoint{std::string(note), std::move(*checkpoint), *key});
    return Status::ok();
  });
  if (!s && !page.next) return s;
  return page;
}

Result<ProvenInclusion> prove_inclusion(const Ledger& ledger, uint64_t index,
                                        std::optional<uint64_t> size) {
  auto cp = stored_checkpoint(ledger, size);
  if (!cp) return cp.error();
  if (index >= cp->checkpoint.size) {
    return not_found("entry " + std::to_string(index) + " is not in the tree of size " +
                     std::to_string(cp->checkpoint.size) + "; ask for a later size");
  }
  auto entry = ledger.entry(index);
  if (!entry) return entry.error();
  auto hashes = ledger.inclusion_proof(index, cp->checkpoint.size);
  if (!hashes) return hashes.error();
  const Hash leaf = leaf_hash(*entry);
  InclusionProofDoc proof{index, std::move(*hashes), std::move(cp->note), {}, leaf};
  auto check = verify_inclusion_proof(proof, leaf, cp->log_key);
  if (!check) return own_proof_failed(check.error());
  return ProvenInclusion{std::move(proof), std::move(cp->checkpoint)};
}

Result<std::vector<InclusionProofDoc>> prove_inclusions(const Ledger& ledger,
                                                        std::span<const uint64_t> indexes,
                                                        uint64_t size) {
  auto cp = stored_checkpoint(ledger, size);
  if (!cp) return cp.error();
  std::vector<InclusionProofDoc> proofs;
  proofs.reserve(indexes.size());
  Status s = ledger.read_tree([&](const HashReader& reader, uint64_t tree_size) -> Status {
    if (tree_size < size) {
      return corrupt("the ledger's tree holds " + std::to_string(tree_size) +
                     " entries, fewer than its checkpoint of size " + std::to_string(size));
    }
    for (uint64_t index : indexes) {
      if (index >= size) {
        return not_found("entry " + std::to_string(index) + " is not in the tree of size " +
                         std::to_string(size));
      }
      const uint64_t leaf_index = stored_hash_index(0, index);
      auto leaf = reader.read_hashes(std::span(&leaf_index, 1));
      if (!leaf) return leaf.error();
      auto hashes = prove_record(size, index, reader);
      if (!hashes) return hashes.error();
      Status ok = verify_inclusion(index, size, (*leaf)[0], *hashes, cp->checkpoint.root);
      if (!ok) return own_proof_failed(ok);
      proofs.push_back({index, std::move(*hashes), cp->note, {}, (*leaf)[0]});
    }
    return Status::ok();
  });
  if (!s) return s;
  return proofs;
}

Result<ConsistencyProofDoc> prove_consistency(const Ledger& ledger, uint64_t from,
                                              std::optional<uint64_t> to) {
  if (from == 0) {
    return usage_error("a consistency proof starts at size 1 or more: every tree extends the "
                       "empty one, so a proof from size 0 proves nothing");
  }
  auto cp = stored_checkpoint(ledger, to);
  if (!cp) return cp.error();
  const uint64_t size = cp->checkpoint.size;
  if (from > size) {
    return usage_error("size " + std::to_string(from) + " is beyond the tree of size " +
                       std::to_string(size) + "; a proof goes from an older size to a newer");
  }
  auto hashes = ledger.consistency_proof(from, size);
  if (!hashes) return hashes.error();
  auto old_root = ledger.root(from);
  if (!old_root) return old_root.error();
  Status check = verify_consistency(from, size, *hashes, *old_root, cp->checkpoint.root);
  if (!check) return own_proof_failed(check);
  return ConsistencyProofDoc{from, size, std::move(*hashes), std::move(cp->note)};
}

}  // namespace evl
