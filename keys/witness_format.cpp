#include "keys/witness_format.h"

#include <cstring>

#include "events/bytes.h"

namespace evl {

namespace {

// At most 40 bytes of untrusted text, for messages.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return text.size() > 40 ? out + "..." : out;
}

// The next line of `rest` without its "\n", or false when no "\n" ends one.
bool next_line(std::string_view& rest, std::string_view& line) {
  size_t end = rest.find('\n');
  if (end == std::string_view::npos) return false;
  line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  return true;
}

}  // namespace

Result<AddCheckpointRequest> parse_add_checkpoint_request(std::string_view body) {
  const std::string where = "add-checkpoint request";
  if (body.size() > kMaxAddCheckpointBody) {
    return rejected(where + ": the body is " + std::to_string(body.size()) +
                    " bytes; a witness takes at most " + std::to_string(kMaxAddCheckpointBody));
  }
  std::string_view rest = body, line;
  if (!next_line(rest, line) || line.substr(0, 4) != "old ") {
    return rejected(where + ": the first line must be 'old <size>' ending in a newline");
  }
  AddCheckpointRequest request;
  auto old_size = parse_u64(line.substr(4));
  if (!old_size) {
    return rejected(where + ": old size '" + shown(line.substr(4)) +
                    "' is not a decimal number without leading zeros");
  }
  request.old_size = *old_size;
  for (size_t number = 2;; ++number) {
    if (!next_line(rest, line)) {
      return rejected(where + ": no empty line ends the consistency proof (line " +
                      std::to_string(number) + ")");
    }
    if (line.empty()) break;
    if (request.proof.size() == kMaxConsistencyProofLines) {
      return rejected(where + ": more than " + std::to_string(kMaxConsistencyProofLines) +
                      " consistency proof lines");
    }
    auto hash = base64_decode(line);
    if (!hash || hash->size() != Digest().size()) {
      return rejected(where + ": line " + std::to_string(number) + " ('" + shown(line) +
                      "') is not a consistency proof hash: standard padded base64 of 32 bytes");
    }
    Digest d;
    std::memcpy(d.data(), hash->data(), d.size());
    request.proof.push_back(d);
  }
  if (rest.empty()) return rejected(where + ": no checkpoint follows the empty line");
  request.checkpoint = std::string(rest);
  return request;
}

std::string format_add_checkpoint_request(const AddCheckpointRequest& request) {
  EVL_ASSERT(request.proof.size() <= kMaxConsistencyProofLines);
  std::string out = "old " + std::to_string(request.old_size) + "\n";
  for (const Digest& d : request.proof) out += base64_encode(d) + "\n";
  return out + "\n" + request.checkpoint;
}

std::string format_tlog_size(uint64_t size) { return std::to_string(size) + "\n"; }

Result<uint64_t> parse_tlog_size(std::string_view body) {
  if (body.empty() || body.back() != '\n') {
    return rejected("a text/x.tlog.size body is one decimal line ending in a newline");
  }
  auto size = parse_u64(body.substr(0, body.size() - 1));
  if (!size) {
    return rejected("text/x.tlog.size body '" + shown(body) +
                    "' is not a decimal number without leading zeros and a newline");
  }
  return *size;
}

std::string format_cosignature_lines(std::span<const NoteSignature> cosignatures) {
  std::string out;
  for (const NoteSignature& s : cosignatures) out += note_signature_line(s);
  return out;
}

Result<std::vector<NoteSignature>> parse_cosignature_lines(std::string_view body) {
  // Signature lines only: no empty line among them, so that the note below ends where the
  // body begins.
  if (body.empty() || body.front() == '\n' || body.find("\n\n") != std::string_view::npos) {
    return rejected("a witness's answer is one or more signature lines, with no empty line");
  }
  auto note = parse_note("-\n\n" + std::string(body));
  if (!note) return note.error().with_context("witness answer");
  return std::move(note->signatures);
}

}  // namespace evl
