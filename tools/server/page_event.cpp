// The event page, /events/<index or id>: one log entry decoded, its signers (their names, the
// roles they held at the entry's position and whether they were active, revoked or void
// there), its inclusion proof in the newest checkpoint, and the runs it changed
// (projections/query_site.h).
#include <optional>
#include <string>
#include <vector>

#include "events/bytes.h"
#include "events/sha256.h"
#include "ledger/proofs.h"
#include "projections/query_site.h"
#include "tools/json_text.h"
#include "tools/render.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;

std::string roles_text(const std::vector<Role>& roles) {
  std::string out;
  for (Role r : roles) out += std::string(out.empty() ? "" : ", ") + role_name(r);
  return out.empty() ? "-" : out;
}

// What the key state says of `key` at entry `index`.
std::string standing_at(const KeyPolicy& keys, const PublicKey& key, uint64_t index) {
  const KeyRecord* record = keys.find(key);
  if (auto cause = keys.void_cause(key, index)) return "void: " + *cause;
  if (record == nullptr) return index == 0 ? "genesis admin" : "not a key of this ledger";
  if (record->active_at(index)) return "active at entry " + std::to_string(index);
  if (index < record->granted_at) return "not yet granted at entry " + std::to_string(index);
  return "revoked at entry " + std::to_string(*record->revoked_at) + " (" +
         revoke_reason_name(record->revoke_reason) + ")";
}

void signers(Writer& w, const cli::StoredEvent& event, const KeyPolicy& keys, uint64_t index) {
  w.open("table", {{"class", "ranking"}}).open("thead").open("tr");
  for (const char* h : {"Signer", "Roles here", "Standing here", "Public key"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  for (const auto& s : event.entry.signatures) {
    w.open("tr");
    w.element("td", keys.describe(s.public_key) +
                        (s.public_key == event.body.author ? " (author)" : ""));
    w.element("td", roles_text(keys.roles_at(s.public_key, index)));
    w.element("td", standing_at(keys, s.public_key, index));
    w.open("td").element("code", hex_encode(s.public_key)).close();
    w.close();
  }
  w.close().close();
}

void inclusion(Writer& w, Context& context, uint64_t index) {
  auto proven = prove_inclusion(context.ledger, index);
  if (!proven) {
    w.element("p", "No inclusion proof yet: " + proven.error().message());
    return;
  }
  const Checkpoint& cp = proven->checkpoint;
  w.open("dl", {{"class", "rows"}, {"id", "inclusion"}});
  w.element("dt", "checkpoint").element("dd", cp.origin + ", size " + std::to_string(cp.size));
  w.element("dt", "root").element("dd", base64_encode(cp.root));
  if (proven->proof.leaf_hash) {
    w.element("dt", "leaf hash").element("dd", base64_encode(*proven->proof.leaf_hash));
  }
  w.element("dt", "path").element("dd", std::to_string(proven->proof.hashes.size()) + " hashes");
  w.close();
  std::string path;
  for (const Hash& h : proven->proof.hashes) path += base64_encode(h) + "\n";
  if (!path.empty()) w.element("pre", path, {{"aria-label", "the proof's hashes, leaf to root"}});
  w.open("p").link(Href::tlog_proof(index), "Download the inclusion proof (.tlog-proof)",
                   {{"download", "entry-" + std::to_string(index) + ".tlog-proof"}, {"id", "proof"}});
  w.text(" — check it offline with evledger proof verify and the log's key.").close();
}

// The neighbours in the log, for reading it in order.
void neighbours(Writer& w, uint64_t index, uint64_t size) {
  w.open("p", {{"class", "actions"}});
  if (index > 0) w.link(Href::event(index - 1), "Entry " + std::to_string(index - 1), {{"rel", "prev"}});
  if (index + 1 < size) w.link(Href::event(index + 1), "Entry " + std::to_string(index + 1), {{"rel", "next"}});
  w.close();
}

Result<std::string> render_event(Context& context, const ProjectionStore& state, uint64_t index,
                                 const cli::StoredEvent& event, const std::string& root) {
  const KeyPolicy keys = context.ledger.policy();
  auto touched = runs_touched_by(state, index, event.body);
  if (!touched) return touched.error();
  const std::string id = digest_text(event_id(event.entry.body));
  const std::string kind = event_kind_name(event.body.kind());
  Writer w(root);
  const std::string heading = "Entry " + std::to_string(index);
  pages::begin_page(w, heading, Href::path("/api/v1/events/" + std::to_string(index)));
  w.element("h1", heading);
  w.element("p", kind + " by " + keys.describe(event.body.author) + ", claimed " +
                     cli::format_time_ms(event.body.claimed_time_ms),
            {{"class", "subtitle"}});
  if (auto cause = keys.void_cause(event.body.author, index)) {
    w.element("p", "Void (" + *cause + "): the events of a voided key count for nothing.",
              {{"class", "banner void"}, {"role", "note"}});
  }
  auto cp = context.checkpoints.current();
  neighbours(w, index, cp ? (*cp)->size : index + 1);
  w.open("section").element("h2", "Event");
  w.open("dl", {{"class", "rows"}});
  w.element("dt", "index").element("dd", std::to_string(index));
  w.element("dt", "event id").element("dd", id, {{"data-copy", ""}, {"data-copy-name", "event id"}});
  w.element("dt", "kind").element("dd", kind);
  w.element("dt", "author").element("dd", keys.describe(event.body.author));
  w.element("dt", "claimed time").element("dd", cli::format_time_ms(event.body.claimed_time_ms));
  w.element("dt", "schema version").element("dd", std::to_string(event.body.schema_version));
  w.close();
  w.close();
  w.open("section").element("h2", "Signers");
  signers(w, event, keys, index);
  w.close();
  w.open("section").element("h2", "Runs it touched");
  if (touched->empty()) {
    w.element("p", "None: this event changed no run's view.");
  } else {
    w.open("ul", {{"class", "items"}, {"id", "touched"}});
    for (const Digest& run : *touched) {
      w.open("li").link(Href::run(digest_text(run)), digest_text(run)).close();
    }
    w.close();
  }
  w.close();
  w.open("section").element("h2", "Inclusion proof");
  inclusion(w, context, index);
  w.close();
  w.open("section").element("h2", "Decoded body");
  std::string decoded = cli::entry_json(index, event.entry, event.body, keys);
  auto json = parse_json(decoded);
  w.open("details", {{"open", ""}}).element("summary", "Show the decoded event");
  w.element("pre", json ? pages::pretty_json(*json) : decoded, {{"id", "decoded"}});
  w.close();
  w.close();
  pages::end_page(w);
  return w.finish();
}

}  // namespace

Response handle_page_event(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "events/{event}", {}); !s) {
    return pages::error_page(request, 400, s.message());
  }
  auto index = find_entry(context.ledger, request.rest);
  if (!index) {
    return pages::error_page(request, http_status(index.error().code()), index.error().message());
  }
  auto bytes = context.ledger.entry(*index);
  if (!bytes) {
    return pages::error_page(request, http_status(bytes.error().code()), bytes.error().message());
  }
  auto event = cli::decode_stored_entry(*index, *bytes);
  if (!event) {
    return pages::error_page(request, http_status(event.error().code()), event.error().message());
  }
  const std::string root = pages::root_of(request);
  return pages::page_answer(request, context, [&](const ProjectionStore& state) {
    return render_event(context, state, *index, *event, root);
  });
}

}  // namespace evl::server
