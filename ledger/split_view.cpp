#include "ledger/split_view.h"

#include <filesystem>

#include "events/bytes.h"
#include "events/file_write.h"
#include "events/sha256.h"

namespace evl {

namespace {

constexpr std::string_view kSignatureLineStart = "\xe2\x80\x94 ";  // "— "

// The next line of `text` from `pos` (without its newline), advancing `pos`; nullopt at the end
// or for a last line without a newline.
std::optional<std::string_view> next_line(std::string_view text, size_t& pos) {
  const size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  return line;
}

Result<uint64_t> parse_size(std::string_view text, std::string_view what) {
  auto n = parse_u64(text);
  if (!n) return rejected("split-view evidence: " + std::string(what) + " '" +
                          std::string(text.substr(0, 40)) + "' is not a decimal size");
  return *n;
}

std::string sizes_of(const Checkpoint& older, const Checkpoint& newer) {
  return "the checkpoints of sizes " + std::to_string(older.size) + " and " +
         std::to_string(newer.size);
}

}  // namespace

std::string format_split_view(const SplitView& evidence) {
  auto size_of = [](const std::string& note) {
    auto body = parse_checkpoint_body(note.substr(0, note.find("\n\n") + 1));
    return body ? std::to_string(body->size) : std::string("?");
  };
  std::string out(kSplitViewHeader);
  out += "\nsizes " + size_of(evidence.older) + " " + size_of(evidence.newer) + "\n";
  for (const Hash& h : evidence.path) out += base64_encode(h) + "\n";
  out += "\n" + evidence.older + "\n" + evidence.newer;
  return out;
}

Result<SplitView> parse_split_view(std::string_view text) {
  size_t pos = 0;
  auto header = next_line(text, pos);
  if (!header || *header != kSplitViewHeader) {
    return rejected("not split-view evidence: the first line must be " +
                    std::string(kSplitViewHeader));
  }
  auto sizes = next_line(text, pos);
  if (!sizes || !sizes->starts_with("sizes ")) {
    return rejected("split-view evidence: the second line must be 'sizes <older> <newer>'");
  }
  std::string_view numbers = sizes->substr(6);
  const size_t space = numbers.find(' ');
  if (space == std::string_view::npos) {
    return rejected("split-view evidence: the second line must be 'sizes <older> <newer>'");
  }
  auto older_size = parse_size(numbers.substr(0, space), "the older size");
  if (!older_size) return older_size.error();
  auto newer_size = parse_size(numbers.substr(space + 1), "the newer size");
  if (!newer_size) return newer_size.error();
  SplitView evidence;
  for (;;) {
    auto line = next_line(text, pos);
    if (!line) return rejected("split-view evidence ends before its checkpoints");
    if (line->empty()) break;
    auto bytes = base64_decode(*line);
    if (!bytes) {
      return rejected("split-view evidence: path line " + std::to_string(evidence.path.size() + 1) +
                      " is not base64");
    }
    auto hash = parse_hash(*bytes, "path hash " + std::to_string(evidence.path.size() + 1));
    if (!hash) return rejected("split-view evidence: " + hash.error().message());
    evidence.path.push_back(*hash);
    if (evidence.path.size() > 128) return rejected("split-view evidence: the path is too long");
  }
  // The older note: its body up to the blank line, then its signature lines.
  const size_t notes = pos;
  const size_t body_end = text.find("\n\n", notes);
  if (body_end == std::string_view::npos) {
    return rejected("split-view evidence: the older checkpoint has no signature lines");
  }
  pos = body_end + 2;
  for (;;) {
    const size_t line_start = pos;
    auto line = next_line(text, pos);
    if (!line) return rejected("split-view evidence ends before the newer checkpoint");
    if (line->empty()) {
      evidence.older = std::string(text.substr(notes, line_start - notes));
      break;
    }
    if (!line->starts_with(kSignatureLineStart)) {
      return rejected("split-view evidence: a blank line must separate the older checkpoint's "
                      "signature lines from the newer checkpoint");
    }
  }
  evidence.newer = std::string(text.substr(pos));
  // The sizes line names the notes' sizes (format_split_view writes them from the notes).
  const std::pair<const std::string*, uint64_t> stated[] = {{&evidence.older, *older_size},
                                                            {&evidence.newer, *newer_size}};
  for (const auto& [note, size] : stated) {
    const char* which = note == &evidence.older ? "older" : "newer";
    auto body = parse_checkpoint_body(note->substr(0, note->find("\n\n") + 1));
    if (!body) {
      return rejected(std::string("split-view evidence: the ") + which + " checkpoint: " +
                      body.error().message());
    }
    if (body->size != size) {
      return rejected(std::string("split-view evidence: the sizes line gives the ") + which +
                      " checkpoint size " + std::to_string(size) + ", but it is of size " +
                      std::to_string(body->size));
    }
  }
  return evidence;
}

Result<SplitViewFinding> check_split_view(const SplitView& evidence, const VerifierKey& log_key) {
  auto older = open_checkpoint(evidence.older, log_key);
  if (!older) return rejected("the older checkpoint: " + older.error().message());
  auto newer = open_checkpoint(evidence.newer, log_key);
  if (!newer) return rejected("the newer checkpoint: " + newer.error().message());
  SplitViewFinding finding{*older, *newer, {}};
  const std::string both = sizes_of(*older, *newer);
  if (older->size > newer->size) return rejected(both + " are in the wrong order");
  if (older->size == newer->size) {
    if (!evidence.path.empty()) return rejected(both + " are equal, so the path must be empty");
    if (older->root == newer->root) return rejected(both + " have the same root: no split view");
    finding.older_in_newer = newer->root;
    return finding;
  }
  if (older->size == 0) return rejected("every tree extends the empty tree of size 0");
  auto prefix = prefix_root_from_path(older->size, newer->size, evidence.path, newer->root);
  if (!prefix) {
    return rejected("the path does not pin the newer tree's prefix, so it proves nothing: " +
                    prefix.error().message());
  }
  if (*prefix == older->root) {
    return rejected(both + " are consistent: the newer tree holds the older root at its size");
  }
  finding.older_in_newer = *prefix;
  return finding;
}

Result<std::optional<SplitView>> compare_checkpoints(std::string_view a, std::string_view b,
                                                     const VerifierKey& log_key,
                                                     const HashReader& larger_tree) {
  auto ca = open_checkpoint(a, log_key);
  if (!ca) return ca.error();
  auto cb = open_checkpoint(b, log_key);
  if (!cb) return cb.error();
  if (ca->size > cb->size) {
    std::swap(a, b);
    std::swap(ca, cb);
  }
  SplitView evidence{std::string(a), std::string(b), {}};
  if (ca->size == cb->size) {
    if (ca->root == cb->root) return std::optional<SplitView>();
    return std::optional<SplitView>(std::move(evidence));
  }
  if (ca->size == 0) return std::optional<SplitView>();
  auto path = prove_prefix_path(cb->size, ca->size, larger_tree);
  if (!path) return path.error();
  auto prefix = prefix_root_from_path(ca->size, cb->size, *path, cb->root);
  if (!prefix) {
    return corrupt("the tree of size " + std::to_string(cb->size) +
                   " does not match its signed checkpoint: " + prefix.error().message());
  }
  if (*prefix == ca->root) return std::optional<SplitView>();
  evidence.path = std::move(*path);
  return std::optional<SplitView>(std::move(evidence));
}

Result<std::string> write_split_view(const std::string& dir, const SplitView& evidence) {
  const std::string text = format_split_view(evidence);
  const std::string folder = dir + "/evidence";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return io_error("cannot create " + folder + ": " + ec.message());
  auto older = parse_checkpoint_body(evidence.older.substr(0, evidence.older.find("\n\n") + 1));
  auto newer = parse_checkpoint_body(evidence.newer.substr(0, evidence.newer.find("\n\n") + 1));
  const std::string sizes = (older ? std::to_string(older->size) : std::string("x")) + "-" +
                            (newer ? std::to_string(newer->size) : std::string("x"));
  const std::string path = folder + "/split-view-" + sizes + "-" +
                           hex_encode(sha256(as_bytes(text))).substr(0, 8) + ".txt";
  EVL_RETURN_IF_ERROR(replace_file(path, text, Durability::kDurable));
  return path;
}

}  // namespace evl
