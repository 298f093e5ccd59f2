// ledger/witnessing.h — the log's side of C2SP tlog-witness (c2sp.org/tlog-witness): after
// each commit, the newest checkpoint goes to every witness of a tlog-policy, and only a
// checkpoint that carries the policy's quorum of cosignatures is published.
//
// Rounds, as Tessera witnesses them: one checkpoint at a time is the round's, and every
// witness is sent that same one, so that their cosignatures meet on one note. A round starts
// when the log has grown past the published size and the previous round was published; it is
// published (stored, then served) as soon as its cosignatures satisfy the quorum, and the next
// round starts with the newest checkpoint then. Cosignatures that arrive after the quorum, for
// the published size, are added to the published note. A round that cannot reach its quorum
// (witnesses down) stays the round until they answer: publication waits, the writer never
// does, and on their return the log catches up in at most two rounds.
//
// Submission, per witness, on a thread of its own with its own kept-alive connection
// (ledger/http_client.h, a deadline for every step): `old` is the size the witness was last
// known to hold (the size of the stored published note for the witnesses that cosigned it,
// else 0), with the consistency proof from there. 200: the cosignature line must verify under
// the policy's key for that witness (else it counts as refused). 409: the witness's size
// (text/x.tlog.size) is taken and the round sent again at once; a witness ahead of the log
// (a size beyond the round's: it saw another branch, or this ledger was rolled back) is
// reported and tried again with the next round. Any other answer or a failure to connect:
// retried with exponential backoff (min_backoff doubling up to max_backoff).
//
// Durability: a publication is written to <dir>/checkpoint (a temporary file, fsync, rename,
// fsync of the directory) before anyone sees it, so a restart serves it again. At start the
// stored note must still satisfy the policy and agree with the ledger's tree at its size
// (kCorrupt otherwise: the directory belongs to another ledger; remove the file).
//
// Until the first quorum nothing is published (published() is null): the server answers
// /checkpoint with 503 and says why.
//
// Thread safety: every member may be called from any thread. committed() takes one short
// mutex and never waits for the network or the disk, so the writer may call it (on_commit).
// `done` of when_published and the observers run on the component's threads and must not call
// back into the destructor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "events/status.h"
#include "keys/checkpoint.h"
#include "keys/tlog_policy.h"
#include "ledger/http_fetch.h"
#include "ledger/ledger.h"

namespace evl {

// How one add-checkpoint submission ended, for metrics.
enum class SubmissionOutcome {
  kCosigned,  // 200 with a cosignature that verified
  kConflict,  // 409: the witness's size was learned
  kRefused,   // another 4xx, or a 200 whose cosignature does not verify
  kFailed,    // no answer (connect, timeout) or a 5xx
};
std::string_view submission_outcome_name(SubmissionOutcome outcome);  // "cosigned", ...

struct Publication {
  std::string note;       // the log's signed checkpoint and the cosignature lines collected
  Checkpoint checkpoint;  // its body
  std::vector<std::string> witnesses;  // policy names of the witnesses whose line it carries
};

// What an operator wants to know about one witness (status, /healthz).
struct WitnessProgress {
  std::string name;                    // the policy's name
  std::string url;                     // its submission URL
  std::optional<uint64_t> known_size;  // the size it holds, as far as the log knows
  uint64_t cosigned_size = 0;          // the largest checkpoint it cosigned for this process
  int64_t last_cosigned_unix = 0;      // when (0: not yet)
  std::string last_error;              // of the last submission that failed; empty after a success
  uint64_t cosigned = 0, conflicts = 0, refused = 0, failed = 0;
};

struct WitnessingOptions {
  TlogPolicy policy;  // every witness needs a submission URL; its logs (if any) name this log
  std::string dir;    // where the published checkpoint is kept (witnessed_checkpoint_path)
  HttpOptions http{std::chrono::milliseconds(5000), 64 << 10};
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // Observers (may be empty): each submission's outcome by witness (its index in the policy),
  // and for each commit the time from it to the publication of a checkpoint that covers it.
  std::function<void(size_t witness, SubmissionOutcome outcome)> on_submission;
  std::function<void(std::chrono::nanoseconds delay)> on_publication_delay;
  std::function<void(const std::string&)> notice;  // a witness failing, recovering, refusing
};

class Witnessing {
 public:
  using Waited = std::function<void(Result<std::shared_ptr<const Publication>>)>;

  // kUsage for a policy witness without a URL, a policy whose logs do not include the ledger's
  // key, or a policy whose quorum is `none`; kCorrupt for a stored note as said above; kIo when
  // the directory cannot be made or read. `ledger` must outlive the component.
  static Result<std::unique_ptr<Witnessing>> start(const Ledger& ledger, WitnessingOptions options);
  // Stops the threads (a submission in flight ends at its deadline); waiters get kIo.
  virtual ~Witnessing() = default;

  // The writer committed: the log now has `commit.size` entries.
  virtual void committed(const CommitInfo& commit) = 0;

  // The newest publication, or null before the first quorum.
  virtual std::shared_ptr<const Publication> published() const = 0;

  // `done` gets the first publication of at least `size` entries (at once when there is one),
  // or kIo after `timeout` ("no checkpoint of at least N entries has its quorum ... after T").
  virtual void when_published(uint64_t size, std::chrono::milliseconds timeout, Waited done) = 0;

  virtual std::vector<WitnessProgress> progress() const = 0;
  virtual const TlogPolicy& policy() const = 0;
};

// <ledger dir>/witnessing: the directory serve --policy keeps its publication in.
std::string witnessing_dir(const std::string& ledger_dir);
// <dir>/checkpoint.
std::string witnessed_checkpoint_path(const std::string& dir);
// The stored publication of a witnessing directory, verbatim; kNotFound when there is none.
Result<std::string> read_witnessed_checkpoint(const std::string& dir);
// Replaces it durably: a temporary file, fsync, rename, fsync of the directory (kIo on
// failure, the old file then intact).
Status store_witnessed_checkpoint(const std::string& dir, std::string_view note);

// Receipts (C2SP tlog-proof) of entries `indexes` in the published checkpoint: proven in the
// ledger's tree of that size, carrying the cosigned note. One per index, in order.
Result<std::vector<std::string>> witnessed_receipts(const Ledger& ledger,
                                                    std::span<const uint64_t> indexes,
                                                    const Publication& publication);

}  // namespace evl
