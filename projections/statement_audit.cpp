#include "projections/statement_audit.h"

#include "events/bytes.h"
#include "events/jcs.h"
#include "keys/note.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"

namespace evl {

namespace {

// Fills `report` with the statements, each opened with `key`; the first that does not verify
// or does not fit the log fails.
Status collect_statements(const Ledger& ledger, const VerifierKey& key, StatementAudit& report) {
  EVL_RETURN_IF_ERROR(ledger.scan_statements([&](uint64_t size, std::string_view note) -> Status {
    report.failed_size = size;
    auto opened = open_statement_note(note, key);
    if (!opened) {
      return rejected("the statement stored for size " + std::to_string(size) +
                      " does not verify: " + opened.error().message());
    }
    if (!opened->statement) {
      report.other_format.emplace_back(size, std::move(opened->other_format));
      report.failed_size.reset();
      return Status::ok();
    }
    auto& statement = opened->statement;
    if (statement->size != size) {
      return rejected("the statement stored for size " + std::to_string(size) + " states size " +
                      std::to_string(statement->size));
    }
    if (size > report.entries) {
      return rejected("the statement for size " + std::to_string(size) + " is beyond the log's " +
                      std::to_string(report.entries) + " entries");
    }
    report.statements.emplace_back(size, std::move(*statement));
    report.failed_size.reset();
    return Status::ok();
  }));
  size_t next = 0, other = 0;
  return ledger.scan_checkpoints([&](uint64_t size, std::string_view) -> Status {
    ++report.checkpoints;
    while (next < report.statements.size() && report.statements[next].first < size) ++next;
    while (other < report.other_format.size() && report.other_format[other].first < size) {
      ++other;
    }
    const bool stated =
        (next < report.statements.size() && report.statements[next].first == size) ||
        (other < report.other_format.size() && report.other_format[other].first == size);
    if (!stated) report.unstated.push_back(size);
    return Status::ok();
  });
}

Status check(const Ledger& ledger, const VerifierKey& key,
             const std::function<void(uint64_t)>& progress, StatementAudit& report) {
  report.entries = ledger.size();
  EVL_RETURN_IF_ERROR(collect_statements(ledger, key, report));
  if (report.statements.empty()) {
    const std::string others =
        report.other_format.empty()
            ? "it was written before statements existed, or without projections"
            : std::to_string(report.other_format.size()) + " statement(s) are of projection "
              "format '" + report.other_format.back().second + "', which this evledger does not "
              "fold";
    return not_found("ledger " + ledger.dir() + " has no projection statement to check (" +
                     others + "); any append or 'evledger rebuild' signs one for the newest "
                     "checkpoint");
  }
  std::vector<uint64_t> sizes;
  for (const auto& [size, statement] : report.statements) sizes.push_back(size);
  size_t at = 0;
  EVL_RETURN_IF_ERROR(fold_projection_digests(
      ledger, sizes, [&](uint64_t size, const Digest& digest) -> Status {
        if (progress) progress(size);
        const ProjectionStatement& statement = report.statements[at++].second;
        if (digest == statement.digest) return Status::ok();
        report.failed_size = size;
        report.expected = digest;
        report.found = statement.digest;
        return rejected("the statement signed at size " + std::to_string(size) + " says digest " +
                        base64_encode(statement.digest) + ", but folding the log's first " +
                        std::to_string(size) + " entries gives " + base64_encode(digest));
      }));
  // The projections the ledger serves must be those the newest statement describes.
  // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
  const uint64_t newest = report.statements.back().first;
  const ProjectionStatement& statement = report.statements.back().second;
  return ledger.read_state([&](const KeyValueStore& state, uint64_t) -> Status {
    auto applied = projected_size(state);
    if (!applied) return applied.error();
    if (*applied != newest) {
      report.stored_state = "not compared: they cover " + std::to_string(*applied) +
                            " entries, the newest statement " + std::to_string(newest);
      return Status::ok();
    }
    const uint64_t size = newest;
    auto digest = projection_digest(state);
    if (!digest) return digest.error();
    if (*digest == statement.digest) {
      report.stored_state = "match";
      return Status::ok();
    }
    report.stored_state = "DIFFERENT";
    report.failed_size = size;
    report.expected = statement.digest;
    report.found = *digest;
    return rejected("the stored projections of " + std::to_string(size) + " entries have digest " +
                    base64_encode(*digest) + ", but the statement signed at that size (which a "
                    "fresh fold of the log confirms) says " + base64_encode(statement.digest) +
                    ": they were changed outside evledger; 'evledger rebuild' refolds them");
  });
}

}  // namespace

StatementAudit audit_projection_statements(const Ledger& ledger, const VerifierKey& key,
                                           const std::function<void(uint64_t)>& progress) {
  StatementAudit report;
  report.status = check(ledger, key, progress, report);
  return report;
}

Result<StoredStatement> stored_statement(const Ledger& ledger, std::optional<uint64_t> size) {
  const bool newest = !size;
  if (newest) {
    auto checkpoint = stored_checkpoint(ledger);
    if (!checkpoint) return checkpoint.error();
    size = checkpoint->checkpoint.size;
  }
  auto note = ledger.statement(size);
  if (!note && note.error().code() == Code::kNotFound) {
    std::string latest = "does not exist";
    if (auto stated = ledger.statement()) {
      auto parsed = parse_note(*stated);
      auto statement = parsed ? parse_projection_statement(parsed->text)
                              : Result<ProjectionStatement>(parsed.error());
      if (statement) latest = "is of size " + std::to_string(statement->size);
    }
    const auto newest_size = newest_checkpoint_size(ledger);
    return not_found(
        (newest ? "the newest checkpoint, of size " + std::to_string(*size) +
                      ", has no statement: it was signed by a writer without projections or "
                      "an evledger from before statements; any append or 'evledger rebuild' "
                      "adds one"
                : note.error().message() + "; the newest checkpoint is of size " +
                      (newest_size ? std::to_string(*newest_size) : std::string("unknown"))) +
        "; the newest statement " + latest);
  }
  if (!note) return note.error().with_context("statement");
  auto key = ledger.log_verifier();
  if (!key) return key.error().with_context("the log's verifier key");
  auto opened = open_statement_note(*note, *key);
  if (!opened) {
    return corrupt("stored " + opened.error().message() +
                   "; run 'evledger rebuild --check --ledger " + ledger.dir() + "'");
  }
  if (opened->statement && opened->statement->size != *size) {
    return corrupt("the statement stored for size " + std::to_string(*size) + " states size " +
                   std::to_string(opened->statement->size));
  }
  return StoredStatement{std::move(*note), *size, std::move(*opened)};
}

std::string statement_json(const StoredStatement& stored) {
  std::string out = "{";
  if (const auto& statement = stored.opened.statement) {
    out += "\"origin\":";
    jcs_append_string(out, statement->origin);
    out += ",\"size\":" + std::to_string(statement->size) + ",\"digest\":";
    jcs_append_string(out, base64_encode(statement->digest));
  } else {
    out += "\"format\":";
    jcs_append_string(out, stored.opened.other_format);
    out += ",\"size\":" + std::to_string(stored.size);
  }
  out += ",\"note\":";
  jcs_append_string(out, stored.note);
  return out + "}";
}

}  // namespace evl
