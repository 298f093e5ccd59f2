// ledger/split_view.h — evidence that a log signed two checkpoints that are not consistent (a
// split view), which anyone checks offline with the log's verifier key.
//
// The file (ledger/STORAGE.md, "Split-view evidence"):
//
//   evledger.dev/split-view@v1
//   sizes <older size> <newer size>
//   <base64 hash>                  the newer tree's consistency path to the older size
//   ...                            (prove_prefix_path; none when the sizes are equal)
//   <blank line>
//   <the checkpoint note of the older size, verbatim>
//   <blank line>
//   <the checkpoint note of the newer size, verbatim>
//
// What it proves: both notes carry a valid signature of the log key; then either the sizes are
// equal and the roots differ, or the path leads to the newer root (so, by SHA-256's collision
// resistance, it fixes the root that the newer tree holds for its first <older size> entries)
// and that root differs from the older checkpoint's. A failing consistency proof alone proves
// nothing (anyone can write a wrong proof); this one is pinned by the newer signature.
//
// Thread safety: value types and pure functions; write_split_view writes one new file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/key.h"
#include "ledger/merkle.h"

namespace evl {

inline constexpr std::string_view kSplitViewHeader = "evledger.dev/split-view@v1";

struct SplitView {
  std::string older;  // checkpoint note of the smaller (or equal) size
  std::string newer;
  std::vector<Hash> path;  // empty for equal sizes
};

std::string format_split_view(const SplitView& evidence);
// Strict parse of the format above. kRejected naming the line that is wrong.
Result<SplitView> parse_split_view(std::string_view text);

struct SplitViewFinding {
  Checkpoint older, newer;
  Hash older_in_newer{};  // the root the newer tree holds at the older size
};

// Checks what the evidence proves (see above). kRejected with the reason when it does not
// prove a split view: a signature that does not verify, sizes that do not match the notes, a
// path that does not lead to the newer root, or trees that are consistent after all.
Result<SplitViewFinding> check_split_view(const SplitView& evidence, const VerifierKey& log_key);

// Compares two checkpoint notes of one log (`a` and `b`, in any order, both already verified
// under `log_key`): nullopt when they are consistent, the checked evidence when they are not.
// `larger_tree` reads the stored hashes of the tree of the larger checkpoint (a ledger's own
// tree, or a tile layout's hash tiles). kCorrupt when its hashes do not lead to that
// checkpoint's root (the source holds another tree than the one it signed: no evidence of a
// split view, but no proof of consistency either); kRejected for a note that does not verify.
Result<std::optional<SplitView>> compare_checkpoints(std::string_view a, std::string_view b,
                                                     const VerifierKey& log_key,
                                                     const HashReader& larger_tree);

// Writes the evidence as a new file <dir>/evidence/split-view-<older>-<newer>-<8 hex of its
// SHA-256>.txt (durably; the same evidence twice is one file) and returns its path. kIo.
Result<std::string> write_split_view(const std::string& dir, const SplitView& evidence);

}  // namespace evl
