#include "tools/importer.h"

#include <chrono>
#include <deque>
#include <future>
#include <memory>

#include "events/event_builder.h"
#include "events/manifest_check.h"
#include "keys/signer.h"
#include "ledger/thread_pool.h"

namespace evl::cli {

Importer::Importer(EventSink& log, const SecretKey& key, ImportOptions options)
    : log_(log),
      key_(key),
      options_(options),
      pool_(std::make_unique<ThreadPool>(options.threads, options.priority)) {
  if (options_.batch == 0) options_.batch = kDefaultImportBatch;
}

Importer::~Importer() = default;

std::string Importer::log_size_text() const {
  const auto size = log_.size();
  return log_.where() + ", size " + (size ? std::to_string(*size) : std::string("unknown"));
}

namespace {

// Checks, canonicalizes and signs one document; fills `outcome` (kAdded means "ready to
// append", kPresent "this very event is in the ledger already") and `entry`. Runs on the
// pool's threads (EventSink::find may be called concurrently).
void prepare(SourceDocument& doc, const EventSink& log, const SecretKey& key,
             DocumentOutcome& outcome, Bytes& entry) {
  if (!doc.status.is_ok() || !doc.value) {
    outcome.label = "document " + std::to_string(doc.index) + " (" + doc.where + ")";
    outcome.rule = "read";
    outcome.message = doc.status.message() + " [read]";
    return;
  }
  CheckedManifest checked = check_manifest(*doc.value, doc.index, doc.where);
  doc.value.reset();  // the canonical text is all that is needed from here
  outcome.label = checked.label;
  outcome.kind = checked.kind;
  outcome.name = checked.name;
  if (!checked.ok()) {
    outcome.rule = checked.problems.front().rule;
    outcome.message = manifest_problems_text(checked);
    return;
  }
  outcome.digest = checked.digest;
  // Deterministic, so that a re-import reproduces the same event ids (see the header).
  auto body = catalog_event(key.public_key(), std::move(checked));
  if (!body) {
    outcome.rule = kRuleRerunOnly;  // the one rule a checked document can still break here
    outcome.message = body.error().message();
    return;
  }
  // A re-import finds its events by id and skips signing them (and the ledger's verifying).
  Bytes body_bytes = encode_body(*body);
  Digest id = event_id(body_bytes);
  if (auto index = log.find(id); index.has_value()) {
    outcome.status = ImportStatus::kPresent;
    outcome.entry_index = *index;
    outcome.event_id = id;
    return;
  }
  auto signed_entry = sign_body(key, body_bytes);
  if (!signed_entry) {
    outcome.rule = "sign";
    outcome.message = outcome.label + ": cannot sign: " + signed_entry.error().message();
    return;
  }
  entry = std::move(signed_entry.value());
  outcome.status = ImportStatus::kAdded;
}

}  // namespace

// One batch on its way through the pipeline.
struct Importer::Batch {
  std::vector<SourceDocument> docs;
  std::vector<DocumentOutcome> outcomes;
  std::vector<Bytes> entries;                      // signed, by document
  std::vector<Bytes> batch;                        // what is appended
  std::vector<size_t> batch_doc;                   // the document of each appended entry
  std::vector<std::pair<size_t, size_t>> repeats;  // (document, earlier document) in this batch
  // Documents whose digest a batch still in flight appends: answered from seen_ once that
  // batch is reported (it is reported first).
  std::vector<size_t> after_in_flight;
  std::vector<SinkOutcome> appended;  // the log's outcomes for `batch`
};

namespace {

// The status of a document that repeats one whose status is `earlier`.
ImportStatus repeat_status(ImportStatus earlier) {
  return earlier == ImportStatus::kAdded ? ImportStatus::kPresent : earlier;
}

// Answers a document from the outcome of an earlier one with the same digest.
void answer_from(DocumentOutcome& o, const DocumentOutcome& earlier) {
  o.status = repeat_status(earlier.status);
  o.entry_index = earlier.entry_index;
  o.event_id = earlier.event_id;
  o.rule = earlier.rule;
  o.message = earlier.message.empty() ? "" : o.label + ": " + earlier.message;
}

}  // namespace

void Importer::prepare_batch(Batch& b) {
  b.outcomes.resize(b.docs.size());
  b.entries.resize(b.docs.size());
  pool_->parallel_for(b.docs.size(), [&](size_t i) {
    prepare(b.docs[i], log_, key_, b.outcomes[i], b.entries[i]);
  });
}

void Importer::dedupe_batch(Batch& b) {
  // One entry per new digest; repeats of a digest are answered from its first outcome.
  std::map<Digest, size_t> in_batch;  // digest → first document in this batch
  for (size_t i = 0; i < b.docs.size(); ++i) {
    DocumentOutcome& o = b.outcomes[i];
    if (o.status == ImportStatus::kPresent) {
      DocumentOutcome remembered;
      remembered.status = o.status;
      remembered.entry_index = o.entry_index;
      remembered.event_id = o.event_id;
      seen_.emplace(*o.digest, std::move(remembered));
      continue;
    }
    if (o.status != ImportStatus::kAdded) continue;
    if (auto it = seen_.find(*o.digest); it != seen_.end()) {
      answer_from(o, it->second);
      continue;
    }
    if (in_flight_.count(*o.digest) != 0) {
      b.after_in_flight.push_back(i);
      continue;
    }
    auto [it, inserted] = in_batch.emplace(*o.digest, i);
    if (!inserted) {
      b.repeats.emplace_back(i, it->second);
      continue;
    }
    b.batch.push_back(std::move(b.entries[i]));
    b.batch_doc.push_back(i);
  }
  b.entries.clear();
  for (auto [digest, first] : in_batch) in_flight_.insert(digest);
}

void Importer::report(Batch& b, const ImportCallbacks& callbacks) {
  const std::vector<SinkOutcome>& appended = b.appended;
  std::vector<DocumentOutcome>& outcomes = b.outcomes;
  for (size_t k = 0; k < b.batch_doc.size(); ++k) {
    DocumentOutcome& o = outcomes[b.batch_doc[k]];
    const AppendOutcome& a = appended.at(k).outcome;
    DocumentOutcome remembered;
    if (a.commit_failed) {
      o.status = ImportStatus::kNotStored;
      o.rule = "not-stored";
      remembered.message = "not stored: " + a.status.message();
      o.message = o.label + ": " + remembered.message;
      if (stop_.is_ok()) stop_ = Status(a.status.code(), o.label + ": " + a.status.message());
    } else if (!a.status) {
      o.status = ImportStatus::kRejected;
      o.rule = "ledger";
      remembered.message = "the ledger refused the event: " + a.status.message() + " [ledger]";
      o.message = o.label + ": " + remembered.message;
    } else {
      o.status = a.added ? ImportStatus::kAdded : ImportStatus::kPresent;
      o.entry_index = a.index;
      o.event_id = a.id;
    }
    remembered.status = o.status;
    remembered.rule = o.rule;
    remembered.entry_index = o.entry_index;
    remembered.event_id = o.event_id;
    seen_.emplace(*o.digest, std::move(remembered));
    in_flight_.erase(*o.digest);
  }
  for (size_t i : b.after_in_flight) {
    DocumentOutcome& o = outcomes[i];
    auto it = seen_.find(*o.digest);
    EVL_ASSERT(it != seen_.end());  // the batch that appends it was reported before this one
    answer_from(o, it->second);
  }
  for (auto [i, first] : b.repeats) {
    DocumentOutcome& o = outcomes[i];
    const DocumentOutcome& f = outcomes[first];
    o.status = repeat_status(f.status);
    o.entry_index = f.entry_index;
    o.event_id = f.event_id;
    o.rule = f.rule;
    if (f.status == ImportStatus::kRejected) {
      o.message = o.label + ": the same manifest as " + f.label + ", which was refused [" +
                  f.rule + "]";
    } else if (f.status == ImportStatus::kNotStored) {
      o.message = o.label + ": the same manifest as " + f.label + ", which was not stored";
    }
  }

  for (const DocumentOutcome& o : outcomes) {
    switch (o.status) {
      case ImportStatus::kAdded:
        ++totals_.added;
        ++(o.kind == "BenchmarkRun" ? totals_.observations : totals_.manifests);
        break;
      case ImportStatus::kPresent: ++totals_.present; break;
      case ImportStatus::kRejected: ++totals_.rejected; break;
      case ImportStatus::kNotStored: ++totals_.not_stored; break;
    }
    if (callbacks.on_document) callbacks.on_document(o);
  }
  if (callbacks.on_batch) callbacks.on_batch();
}

Status Importer::import(ManifestReader& reader, const ImportCallbacks& callbacks) {
  // Three stages overlap, in input order: batch k+2 is read, checked and signed on the pool;
  // batch k+1 is appended as soon as the ledger has queued every entry of batch k for its
  // writer (the ledger verifies k+1 while its writer commits k); batch k is reported once
  // committed. Without that overlap a core idled while the writer finished each batch alone.
  // Deduplication runs on this thread before a batch is appended: a document whose digest an
  // earlier batch appends is answered from that batch's outcome (seen_, or, while that batch is
  // in flight, once it is reported). A document that repeats one of an earlier batch is signed
  // for nothing, or found in the ledger if that batch is committed by then.
  if (stopped()) return stop_;  // an earlier source's commit failed
  struct Read {
    std::unique_ptr<Batch> batch;
    Result<bool> more;  // false at the end of the source
  };
  auto read_next = [&]() -> Read {
    auto batch = std::make_unique<Batch>();
    auto more = reader.read_batch(batch->docs, options_.batch, pool_.get());
    if (!batch->docs.empty()) prepare_batch(*batch);
    return Read{std::move(batch), std::move(more)};
  };
  struct InFlight {
    std::unique_ptr<Batch> batch;
    std::shared_ptr<std::promise<void>> queued = std::make_shared<std::promise<void>>();
    std::future<void> all_queued = queued->get_future();  // the ledger queued every entry
    std::future<void> appended;
  };
  // Deferred when no thread can start: waiting then runs the stage on this thread.
  constexpr auto kLaunch = std::launch::async | std::launch::deferred;
  std::future<Read> reading = std::async(kLaunch, read_next);
  std::deque<InFlight> flight;  // in input order; at most two
  auto report_oldest = [&] {
    flight.front().appended.get();
    report(*flight.front().batch, callbacks);
    flight.pop_front();
  };
  auto wait_queued = [](InFlight& f) {
    if (f.appended.wait_for(std::chrono::seconds(0)) == std::future_status::deferred) {
      f.appended.wait();
    }
    f.all_queued.wait();
  };
  // After a failed commit nothing more is appended: the batches in flight are reported (the
  // ledger answers them not stored) and a batch read ahead is dropped.
  const auto stopped_here = [&] {
    while (!flight.empty()) report_oldest();
    return Status(stop_.code(),
                  "import stopped at " + stop_.message() + "\nnothing after that document was "
                  "appended; the ledger holds what was imported before it (" + log_size_text() +
                  "). Once the cause is fixed, run the same "
                  "import again: what the ledger holds is reported present, and the rest is "
                  "appended");
  };
  while (true) {
    Read next = reading.get();
    const bool last = !next.more || !*next.more;
    if (stopped()) return stopped_here();
    if (!last) reading = std::async(kLaunch, read_next);
    if (!next.batch->docs.empty()) {
      while (flight.size() > 1) report_oldest();
      if (stopped()) return stopped_here();
      totals_.documents += next.batch->docs.size();
      if (!flight.empty()) wait_queued(flight.back());
      dedupe_batch(*next.batch);
      InFlight f;
      f.batch = std::move(next.batch);
      f.appended = std::async(kLaunch, [this, batch = f.batch.get(), queued = f.queued] {
        batch->appended = log_.append(batch->batch, [&] { queued->set_value(); });
      });
      flight.push_back(std::move(f));
    }
    if (last) {
      while (!flight.empty()) report_oldest();
      if (stopped()) return stopped_here();
      return next.more ? Status::ok() : next.more.error();
    }
  }
}

}  // namespace evl::cli
