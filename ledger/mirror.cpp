#include "ledger/mirror.h"

#include <future>

#include "keys/checkpoint.h"
#include "ledger/split_view.h"

namespace evl {

namespace {

// The checkpoint the mirror verified last: the target of an unfinished pull (whose entries it
// partly holds), else its newest stored checkpoint; nullopt for an empty mirror. `own` says
// whether the mirror holds that checkpoint's whole tree.
struct Reference {
  std::string note;
  Checkpoint checkpoint;
  bool own = false;
};

Result<std::optional<Reference>> last_verified(const Ledger& mirror, const VerifierKey& key) {
  Reference ref;
  auto target = mirror.mirror_target();
  if (target) {
    ref.note = std::move(*target);
  } else if (target.error().code() != Code::kNotFound) {
    return target.error();
  } else {
    auto held = mirror.checkpoint();
    if (!held && held.error().code() == Code::kNotFound) return std::optional<Reference>();
    if (!held) return held.error();
    ref.note = std::move(*held);
    ref.own = true;
  }
  auto opened = open_checkpoint(ref.note, key);
  if (!opened) {
    return corrupt("the mirror's own record of the checkpoint it verified last does not verify (" +
                   opened.error().message() + "); run 'evledger verify --ledger " +
                   mirror.dir() + "'");
  }
  ref.checkpoint = std::move(*opened);
  return std::optional<Reference>(std::move(ref));
}

// Compares the upstream's checkpoint with the one the mirror verified last, over the tree of
// the larger one: the mirror's own, or the upstream's tiles. Evidence of a split view is
// written and named in a kRejected status.
Status check_consistent(Ledger& mirror, Upstream& upstream, const Reference& ref,
                        const std::string& note, const Checkpoint& checkpoint,
                        const VerifierKey& key, MirrorReport& report) {
  Result<std::optional<SplitView>> compared = std::optional<SplitView>();
  if (checkpoint.size < ref.checkpoint.size && ref.own) {
    Status read = mirror.read_tree([&](const HashReader& hashes, uint64_t) -> Status {
      compared = compare_checkpoints(ref.note, note, key, hashes);
      return Status::ok();
    });
    if (!read) return read;
  } else {
    auto tree = upstream.tree(std::max(checkpoint.size, ref.checkpoint.size));
    compared = compare_checkpoints(ref.note, note, key, *tree);
  }
  if (!compared) {
    return compared.error().with_context("the upstream's checkpoint of size " +
                                         std::to_string(checkpoint.size) + " against the one of "
                                         "size " + std::to_string(ref.checkpoint.size) +
                                         " this mirror verified");
  }
  if (!compared->has_value()) return Status::ok();
  auto path = write_split_view(mirror.dir(), **compared);
  if (!path) return path.error().with_context("a split view was found, but");
  report.evidence = *path;
  return rejected("split view: the upstream " + upstream.url("checkpoint") + " shows a "
                  "checkpoint of size " + std::to_string(checkpoint.size) + " that is not "
                  "consistent with the one of size " + std::to_string(ref.checkpoint.size) +
                  " this mirror verified before; the evidence is in " + *path +
                  " (check it with 'evledger verify --evidence " + *path + " --vkey " +
                  key.to_string() + "')");
}

}  // namespace

MirrorReport pull_upstream(Ledger& mirror, Upstream& upstream, const MirrorOptions& options) {
  MirrorReport report;
  report.previous_size = report.size = mirror.size();
  auto note = upstream.checkpoint();
  if (!note) {
    report.status = note.error().with_context("cannot read the upstream's checkpoint");
    return report;
  }
  const VerifierKey keys[] = {options.log_key};
  auto checkpoint = options.policy ? options.policy->verify(*note, keys)
                                   : open_checkpoint(*note, options.log_key);
  if (!checkpoint) {
    report.status = rejected(upstream.url("checkpoint") + ": " + checkpoint.error().message());
    return report;
  }
  report.upstream_size = checkpoint->size;
  auto ref = last_verified(mirror, options.log_key);
  if (!ref) {
    report.status = ref.error();
    return report;
  }
  if (*ref) {
    report.status = check_consistent(mirror, upstream, **ref, *note, *checkpoint,
                                     options.log_key, report);
    if (!report.status) return report;
  }
  const uint64_t from = mirror.size(), size = checkpoint->size;
  if (size <= from) return report;  // nothing new (or an upstream behind the mirror)

  // Batch k is checked (on the pool) while batch k - 1 is stored (on `storing`), so that the
  // checks of one overlap the other's single-threaded transaction and its durable commit.
  auto tree = upstream.tree(size);
  std::vector<Bytes> chunk, stored_chunk;  // stored_chunk: the entries `storing` stores
  uint64_t chunk_first = from;
  std::future<Status> storing;
  bool stated = false;
  auto wait_stored = [&]() -> Status {
    if (!storing.valid()) return Status::ok();
    Status s = storing.get();
    if (s) {
      report.size += stored_chunk.size();
      report.statement_checked = stated;
      if (options.progress) options.progress(report.size - from, size - from);
    }
    return s;
  };
  auto store = [&]() -> Status {
    UpstreamBatch batch;
    batch.first = chunk_first;
    batch.checkpoint = *note;
    const uint64_t end = chunk_first + chunk.size();
    if (end < size) {
      auto path = prove_prefix_path(size, end, *tree);
      if (!path) return path.error().with_context("the upstream's hash tiles");
      batch.path = std::move(*path);
    } else {
      auto statement = upstream.statement(size);
      if (!statement) return statement.error().with_context("the upstream's statement");
      batch.statement = std::move(*statement);
    }
    batch.checks = mirror.check_upstream(chunk);
    EVL_RETURN_IF_ERROR(wait_stored());
    stored_chunk = std::move(chunk);  // the entries' addresses stay: the checks point at them
    chunk.clear();
    batch.entries = stored_chunk;
    stated = batch.statement.has_value();
    chunk_first = end;
    storing = std::async(std::launch::async,
                         [&mirror, batch = std::move(batch)] { return mirror.append_upstream(batch); });
    return Status::ok();
  };
  size_t limit = 0;  // the entries of the chunk being filled (Ledger::upstream_batch_entries)
  Status fetched = upstream.fetch_entries(
      from, size, size, options.window_bundles,
      [&](uint64_t, std::span<const ByteView> entries) -> Status {
        for (ByteView entry : entries) {
          if (chunk.empty()) limit = mirror.upstream_batch_entries(options.chunk_entries);
          chunk.emplace_back(entry.begin(), entry.end());
          if (chunk.size() == limit) EVL_RETURN_IF_ERROR(store());
        }
        return Status::ok();
      });
  if (fetched && !chunk.empty()) fetched = store();
  Status last = wait_stored();
  if (fetched) fetched = last;
  report.status = fetched;
  return report;
}

}  // namespace evl
