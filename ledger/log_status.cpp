#include "ledger/log_status.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "events/json.h"
#include "events/utf8.h"
#include "keys/note.h"
#include "ledger/http_client.h"
#include "ledger/proofs.h"
#include "ledger/witnessing.h"

namespace evl {
namespace {

constexpr size_t kCosignatureBytes = 8 + 64;  // time ‖ Ed25519 signature, after the key id

uint64_t cosignature_time(const NoteSignature& line) {
  if (line.signature.size() != kCosignatureBytes) return 0;
  uint64_t t = 0;
  for (size_t i = 0; i < 8; ++i) t = t << 8 | line.signature[i];
  return t;
}

// Fills the checkpoint, its cosignatures, their age and the quorum from a published note.
Status describe(LogStatus& status, std::string note, const StatusOptions& options,
                const std::optional<VerifierKey>& log_key) {
  auto parsed = parse_note(note);
  if (!parsed) return parsed.error().with_context(status.source + ": the checkpoint");
  auto body = parse_checkpoint_body(parsed->text);
  if (!body) return body.error().with_context(status.source + ": the checkpoint");
  std::map<std::pair<std::string, KeyId>, uint64_t> times;
  for (const NoteSignature& line : parsed->signatures) {
    if (line.name != body->origin) times.emplace(std::pair(line.name, line.id), cosignature_time(line));
  }
  if (options.policy) {
    std::vector<VerifierKey> keys;
    if (log_key) keys.push_back(*log_key);
    auto report = options.policy->evaluate(note, keys);
    if (!report) return report.error().with_context(status.source + ": the checkpoint");
    status.log_signature_checked = true;
    auto state_of = [&](const std::string& name, const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    for (const PolicyWitness& w : options.policy->witnesses()) {
      WitnessCosignature c{w.name, CosignatureState::kValid, 0};
      if (state_of(w.name, report->missing)) c.state = CosignatureState::kMissing;
      if (state_of(w.name, report->invalid)) c.state = CosignatureState::kInvalid;
      if (auto t = times.find({w.key.name, w.key.id}); t != times.end()) c.time = t->second;
      status.cosignatures.push_back(std::move(c));
    }
    status.quorum = report->satisfied;
    if (!report->satisfied) {
      auto verified = options.policy->verify(note, keys);
      status.quorum_detail = verified ? "" : verified.error().message();
    }
  } else {
    if (log_key) {
      auto opened = open_checkpoint(note, *log_key);
      if (!opened) return opened.error().with_context(status.source + ": the checkpoint");
      status.log_signature_checked = true;
    }
    for (const auto& [key, time] : times) {
      status.cosignatures.push_back({key.first, CosignatureState::kUnverified, time});
    }
  }
  uint64_t newest = 0;
  for (const WitnessCosignature& c : status.cosignatures) {
    if (c.state == CosignatureState::kValid || c.state == CosignatureState::kUnverified) {
      newest = std::max(newest, c.time);
    }
  }
  const uint64_t now = options.now != 0 ? options.now : static_cast<uint64_t>(std::time(nullptr));
  if (newest != 0) status.age_seconds = now > newest ? now - newest : 0;
  status.published = std::move(*body);
  status.published_note = std::move(note);
  return Status::ok();
}

// The "detail" of a problem+json body, else its first 200 bytes.
std::string problem_detail(const std::string& body) {
  if (auto json = parse_json(body); json && json->is_object()) {
    if (const Json* d = json->find("detail"); d && d->is_string()) return d->as_string();
  }
  return visible_text(body.substr(0, 200));
}

Result<std::string> checkpoint_of(HttpClient& client, std::string& unpublished) {
  auto answer = client.get("checkpoint");
  if (!answer) return answer.error();
  if (answer->status == 200) return std::move(answer->body);
  unpublished = client.url("checkpoint") + " answered " + std::to_string(answer->status) + ": " +
                problem_detail(answer->body);
  return std::string();
}

Status add_upstream(LogStatus& status, const StatusOptions& options) {
  if (options.upstream.empty()) return Status::ok();
  auto client = HttpClient::open(options.upstream);
  if (!client) return client.error().with_context("--upstream");
  std::string why;
  auto note = checkpoint_of(**client, why);
  if (!note) return note.error().with_context("--upstream");
  status.upstream = options.upstream;
  if (note->empty()) return io_error("--upstream: " + why);
  auto parsed = parse_note(*note);
  auto body = parsed ? parse_checkpoint_body(parsed->text) : Result<Checkpoint>(parsed.error());
  if (!body) return body.error().with_context("--upstream " + options.upstream + ": the checkpoint");
  status.upstream_size = body->size;
  return Status::ok();
}

}  // namespace

std::string_view cosignature_state_name(CosignatureState state) {
  switch (state) {
    case CosignatureState::kValid: return "valid";
    case CosignatureState::kInvalid: return "invalid";
    case CosignatureState::kMissing: return "missing";
    case CosignatureState::kUnverified: return "unverified";
  }
  return "unverified";
}

Result<LogStatus> url_status(const std::string& url, const StatusOptions& options) {
  auto client = HttpClient::open(url);
  if (!client) return client.error();
  LogStatus status;
  status.source = url;
  auto note = checkpoint_of(**client, status.unpublished_reason);
  if (!note) return note.error();
  if (auto health = (*client)->get("healthz"); health && health->status == 200) {
    if (auto json = parse_json(health->body); json && json->is_object()) {
      if (const Json* size = json->find("size"); size && size->is_number()) {
        status.log_size = static_cast<uint64_t>(size->as_number());
      }
    }
  }
  if (!note->empty()) EVL_RETURN_IF_ERROR(describe(status, std::move(*note), options, options.log_key));
  EVL_RETURN_IF_ERROR(add_upstream(status, options));
  return status;
}

Result<LogStatus> ledger_status(const Ledger& ledger, const StatusOptions& options) {
  LogStatus status;
  status.source = "ledger " + ledger.dir();
  std::optional<VerifierKey> key = options.log_key;
  if (!key) {
    if (auto genesis = ledger.log_verifier()) key = *genesis;
  }
  status.log_size = newest_checkpoint_size(ledger);
  auto witnessed = read_witnessed_checkpoint(witnessing_dir(ledger.dir()));
  if (!witnessed && witnessed.error().code() != Code::kNotFound) return witnessed.error();
  if (witnessed) {
    status.witnessed = true;
    EVL_RETURN_IF_ERROR(describe(status, std::move(*witnessed), options, key));
  } else if (auto newest = ledger.checkpoint()) {
    EVL_RETURN_IF_ERROR(describe(status, std::move(*newest), options, key));
  } else if (newest.error().code() != Code::kNotFound) {
    return newest.error();
  } else {
    status.unpublished_reason = "the ledger has no checkpoint: its genesis is not appended";
  }
  EVL_RETURN_IF_ERROR(add_upstream(status, options));
  return status;
}

}  // namespace evl
