#include "ledger/internal/witness_submission.h"

#include "keys/witness_format.h"

namespace evl {
namespace {

constexpr size_t kMaxErrorBody = 300;

// The start of an answer's body on one line, for messages.
std::string excerpt(std::string_view body) {
  std::string out(body.substr(0, kMaxErrorBody));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace

Attempt submit_checkpoint(HttpClient& client, const Ledger& ledger, const CosignerKey& witness,
                          uint64_t old, const Checkpoint& checkpoint, const std::string& note) {
  Attempt a;
  AddCheckpointRequest request;
  request.old_size = old;
  request.checkpoint = note;
  if (old > 0 && old < checkpoint.size) {
    auto proof = ledger.consistency_proof(old, checkpoint.size);
    if (!proof) {
      a.error = "no consistency proof from " + std::to_string(old) + ": " + proof.error().message();
      return a;
    }
    request.proof = std::move(*proof);
  }
  auto answer = client.post("add-checkpoint", "text/plain; charset=utf-8",
                            format_add_checkpoint_request(request));
  const std::string where = client.url("add-checkpoint");
  if (!answer) {
    a.error = answer.error().message();
    return a;
  }
  const int status = answer->status;
  if (status == 200) {
    auto lines = parse_cosignature_lines(answer->body);
    Status why = lines ? rejected("it holds no line by " + witness.to_string())
                       : lines.error();
    if (lines) {
      for (const NoteSignature& line : *lines) {
        if (line.name != witness.name || line.id != witness.id) continue;
        if (auto t = verify_cosignature(checkpoint, line, witness); t) {
          a.outcome = SubmissionOutcome::kCosigned;
          a.cosignature = line;
          return a;
        } else {
          why = t.error();
        }
        break;
      }
    }
    a.outcome = SubmissionOutcome::kRefused;
    a.error = where + " answered 200 without a valid cosignature: " + why.message();
    return a;
  }
  if (status == 409) {
    auto type = answer->header("Content-Type");
    auto size = parse_tlog_size(answer->body);
    if (type && type->substr(0, kTlogSizeContentType.size()) == kTlogSizeContentType && size) {
      a.outcome = SubmissionOutcome::kConflict;
      a.size = *size;
      return a;
    }
  }
  a.outcome = status >= 400 && status < 500 ? SubmissionOutcome::kRefused : SubmissionOutcome::kFailed;
  a.error = where + " answered " + std::to_string(status) + ": " + excerpt(answer->body);
  return a;
}

}  // namespace evl
