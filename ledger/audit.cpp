#include "ledger/audit.h"

#include "events/observation.h"
#include "ledger/thread_pool.h"

namespace evl {

namespace {

constexpr size_t kAuditChunk = 4096;
constexpr size_t kVoidExamples = 10;

struct Checked {
  Result<CheckedEntry> entry = rejected("unchecked");
  std::string subject;
};

}  // namespace

AuditReport audit_ledger(const Ledger& ledger, const AuditOptions& options) {
  AuditReport report;
  ThreadPool pool(options.threads);
  KeyPolicy policy;
  const uint64_t total = ledger.size();
  std::vector<Bytes> chunk;
  std::vector<Checked> checked;

  auto fail = [&](uint64_t index, Status status) {
    report.failed_index = index;
    report.status = status.with_context("entry " + std::to_string(index));
    return report;
  };

  for (uint64_t from = 0; from < total; from += kAuditChunk) {
    uint64_t to = std::min<uint64_t>(total, from + kAuditChunk);
    chunk.clear();
    Status scanned = ledger.scan(from, to, [&](uint64_t, ByteView bytes) {
      chunk.emplace_back(bytes.begin(), bytes.end());
      return Status::ok();
    });
    if (!scanned) {
      report.status = scanned;
      return report;
    }
    checked.assign(chunk.size(), Checked{});
    pool.parallel_for(chunk.size(), [&](size_t i) {
      checked[i].entry = check_entry(chunk[i]);
      if (checked[i].entry) {
        auto subject = scope_subject(checked[i].entry->body);
        if (subject) {
          checked[i].subject = std::move(*subject);
        } else {
          checked[i].entry = subject.error();
        }
      }
    });
    for (size_t i = 0; i < chunk.size(); ++i) {
      uint64_t index = from + i;
      auto& c = checked[i];
      if (!c.entry) return fail(index, corrupt(c.entry.error().message()));
      auto found = ledger.find(c.entry->id);
      if (!found) {
        return fail(index, corrupt("event id " + digest_text(c.entry->id) +
                                   " has no id record (expected one pointing at this index)"));
      }
      if (*found != index) {
        return fail(index, corrupt("event id " + digest_text(c.entry->id) +
                                   " is recorded at index " + std::to_string(*found) +
                                   ": an event appears twice or its id record is wrong"));
      }
      Status allowed = policy.check(index, c.entry->body, c.subject);
      if (!allowed) return fail(index, rejected(allowed.message()));
      policy.apply(index, c.entry->body);
      report.signatures += c.entry->signers.size();
      report.kinds[static_cast<size_t>(c.entry->body.kind())]++;
      report.entries++;
    }
    if (options.progress) options.progress(to, total);
  }

  auto ids = ledger.id_count();
  if (!ids) {
    report.status = ids.error();
    return report;
  }
  if (*ids != total) {
    report.status = corrupt("the ids database has " + std::to_string(*ids) +
                            " records for " + std::to_string(total) +
                            " entries: an id record was added or lost outside the log");
    return report;
  }
  if (policy.genesis()) report.origin = policy.genesis()->origin;

  // Void events: a second pass only when the final key state voids anything.
  if (policy.voids_anything()) {
    Status scanned = ledger.scan(0, total, [&](uint64_t index, ByteView bytes) {
      auto entry = decode_entry(bytes);
      if (!entry) return Status::ok();  // checked above
      auto cause = policy.void_cause(entry->signatures[0].public_key, index);
      if (cause) {
        report.voided++;
        if (report.voided_examples.size() < kVoidExamples) {
          report.voided_examples.emplace_back(index, *cause);
        }
      }
      return Status::ok();
    });
    if (!scanned) report.status = scanned;
  }
  return report;
}

}  // namespace evl
