#include "ledger/witness.h"

#include <algorithm>
#include <future>

#include "keys/note.h"
#include "keys/witness_format.h"
#include "ledger/split_view.h"

namespace evl {

namespace {

WitnessAnswer answer(WitnessVerdict verdict, const Status& status) {
  WitnessAnswer a;
  a.verdict = verdict;
  a.message = status.message();
  return a;
}

WitnessAnswer answer(WitnessVerdict verdict, std::string message) {
  WitnessAnswer a;
  a.verdict = verdict;
  a.message = std::move(message);
  return a;
}

WitnessAnswer from_outcome(const UpdateOutcome& o) {
  WitnessAnswer a = answer(witness_verdict(o.verdict), o.status);
  if (o.verdict == UpdateVerdict::kCosigned) a.body = note_signature_line(o.cosignature);
  if (o.verdict == UpdateVerdict::kConflict) {
    a.latest_size = o.latest_size;
    a.body = format_tlog_size(o.latest_size);
  }
  return a;
}

}  // namespace

WitnessVerdict witness_verdict(UpdateVerdict verdict) {
  switch (verdict) {
    case UpdateVerdict::kCosigned: return WitnessVerdict::kCosigned;
    case UpdateVerdict::kOldTooLarge: return WitnessVerdict::kMalformed;
    case UpdateVerdict::kConflict: return WitnessVerdict::kConflict;
    case UpdateVerdict::kInconsistent: return WitnessVerdict::kInconsistent;
    case UpdateVerdict::kBusy: return WitnessVerdict::kBusy;
    case UpdateVerdict::kFailed: return WitnessVerdict::kFailed;
  }
  return WitnessVerdict::kFailed;
}

Result<std::unique_ptr<Witness>> Witness::open(WitnessOptions options) {
  if (options.logs.empty()) {
    return usage_error("a witness needs at least one trusted log key (--log VKEY)");
  }
  if (options.key == nullptr) return usage_error("a witness needs its key (--key FILE)");
  std::unique_ptr<Witness> w(new Witness());
  w->cosigner_ = CosignerKey::of(options.key->name(), options.key->public_key());
  w->dir_ = options.dir;
  w->on_split_view_ = options.on_split_view;
  for (VerifierKey& key : options.logs) {
    auto& keys = w->logs_[key.name];
    for (const VerifierKey& other : keys) {
      if (other.id == key.id && !(other == key)) {
        return usage_error("two trusted keys of log " + key.name + " have key id " +
                           hex_encode(key.id) + "; a signature line could not tell them apart");
      }
    }
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  WitnessStateOptions state;
  state.dir = options.dir;
  state.cosigner = options.key;
  state.clock = options.clock;
  state.max_queued = options.max_queued;
  auto opened = WitnessState::open(std::move(state));
  if (!opened) return opened.error();
  w->state_ = std::move(*opened);
  return w;
}

void Witness::add_checkpoint(std::string_view body, Done done) const {
  auto request = parse_add_checkpoint_request(body);
  if (!request) return done(answer(WitnessVerdict::kMalformed, request.error()));
  auto note = parse_note(request->checkpoint);
  if (!note) {
    return done(answer(WitnessVerdict::kMalformed, note.error().with_context("checkpoint")));
  }
  auto checkpoint = parse_checkpoint_body(note->text);
  if (!checkpoint) return done(answer(WitnessVerdict::kMalformed, checkpoint.error()));
  auto log = logs_.find(checkpoint->origin);
  if (log == logs_.end()) {
    return done(answer(WitnessVerdict::kUnknownLog,
                       "this witness does not witness the log '" +
                           checkpoint->origin.substr(0, 200) +
                           "'; its operator adds a log with --log VKEY"));
  }
  auto opened = open_note(request->checkpoint, log->second);
  if (!opened) {
    return done(answer(WitnessVerdict::kForbidden,
                       opened.error().with_context("checkpoint of " + log->first)));
  }
  if (request->old_size > checkpoint->size) {
    return done(answer(WitnessVerdict::kMalformed,
                       "old size " + std::to_string(request->old_size) +
                           " is beyond the checkpoint's size " + std::to_string(checkpoint->size)));
  }
  CheckpointUpdate update;
  update.old_size = request->old_size;
  update.proof = std::move(request->proof);
  update.checkpoint = std::move(*checkpoint);
  update.log_signatures = std::move(opened->verified);
  std::string origin = update.checkpoint.origin;
  state_->submit(std::move(update), [this, done = std::move(done), origin = std::move(origin),
                                      note = std::move(request->checkpoint)](UpdateOutcome o) {
    done(answer_of(o, origin, note));
  });
}

WitnessAnswer Witness::answer_of(const UpdateOutcome& outcome, const std::string& origin,
                                 const std::string& note) const {
  WitnessAnswer a = from_outcome(outcome);
  if (outcome.contradicted.empty()) return a;
  // Both notes verified under a trusted key of the origin: what a split view's evidence holds.
  auto written = write_split_view(dir_, SplitView{outcome.contradicted, note, {}});
  if (!written) {
    a.message += "; the evidence of this split view could not be written: " +
                 written.error().message();
    return a;
  }
  a.message += "; the evidence is " + *written +
               " ('evledger verify --evidence FILE --vkey VKEY' checks it)";
  if (on_split_view_) on_split_view_(origin, *written);
  return a;
}

WitnessAnswer Witness::add_checkpoint(std::string_view body) const {
  std::promise<WitnessAnswer> result;
  auto future = result.get_future();
  add_checkpoint(body, [&result](WitnessAnswer a) { result.set_value(std::move(a)); });
  return future.get();
}

Result<std::string> Witness::checkpoint_note(const Digest& origin_hash) const {
  auto latest = state_->latest_by_hash(origin_hash);
  if (!latest) return latest.error();
  if (!*latest) {
    return not_found("this witness has cosigned no checkpoint of the log whose origin hashes "
                     "to " + hex_encode(origin_hash));
  }
  return std::move((*latest)->note);
}

}  // namespace evl
