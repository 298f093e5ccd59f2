// The home page, /: the log (origin, size, newest checkpoint, its cosignatures when serve
// --policy publishes witnessed ones), the projection statement, counts, recent events and
// recent record changes; and the key registry, /keys.
#include <optional>
#include <string>
#include <vector>

#include "events/bytes.h"
#include "keys/checkpoint.h"
#include "keys/note.h"
#include "ledger/proofs.h"
#include "projections/query.h"
#include "projections/query_site.h"
#include "projections/statement_audit.h"
#include "tools/json_text.h"
#include "tools/render.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;
using pages::member;
using pages::number;

constexpr uint64_t kRecentEvents = 10;
constexpr size_t kRecentChanges = 10;

void row(Writer& w, std::string_view label, const std::string& value) {
  w.element("dt", label).element("dd", value);
}

void log_section(Writer& w, Context& context, const std::optional<StoredCheckpoint>& newest) {
  w.open("section").element("h2", "The log");
  if (!newest) {
    w.element("p", "No checkpoint yet: the log has no entries.");
    w.close();
    return;
  }
  w.open("dl", {{"class", "rows"}, {"id", "checkpoint"}});
  row(w, "origin", newest->checkpoint.origin);
  row(w, "size", std::to_string(newest->checkpoint.size) + " entries");
  row(w, "root", base64_encode(newest->checkpoint.root));
  row(w, "log key", context.log_vkey.empty() ? std::string("-") : context.log_vkey);
  if (context.witnessing != nullptr) {
    auto published = context.witnessing->published();
    if (published) {
      std::string names;
      for (const auto& n : published->witnesses) names += (names.empty() ? "" : ", ") + n;
      row(w, "witnessed", "size " + std::to_string(published->checkpoint.size) + ", cosigned by " +
                              std::to_string(published->witnesses.size()) + " of " +
                              std::to_string(context.witnessing->policy().witnesses().size()) +
                              " witnesses: " + names);
    } else {
      row(w, "witnessed", "no checkpoint has its quorum of cosignatures yet");
    }
  }
  w.close();
  w.open("details").element("summary", "Show the signed checkpoint");
  const std::string note = context.witnessing && context.witnessing->published()
                               ? context.witnessing->published()->note
                               : newest->note;
  w.element("pre", note, {{"id", "checkpoint-note"}});
  w.close();
  w.close();
}

void statement_section(Writer& w, Context& context) {
  w.open("section").element("h2", "Projection statement");
  auto statement = stored_statement(context.ledger, std::nullopt);
  if (!statement) {
    w.element("p", "None: " + statement.error().message());
    w.close();
    return;
  }
  auto json = parse_json(statement_json(*statement));
  w.open("dl", {{"class", "rows"}, {"id", "statement"}});
  if (json) {
    for (const char* name : {"origin", "format", "size", "digest"}) {
      if (json->find(name) != nullptr) row(w, name, member(*json, name));
    }
  }
  w.close();
  w.element("p", "The log key signs, with each checkpoint, the digest of the projections that "
                 "fold the log up to it: evledger rebuild --check recomputes it from the log.");
  w.open("details").element("summary", "Show the signed statement");
  w.element("pre", statement->note);
  w.close();
  w.close();
}

void counts_section(Writer& w, const ProjectionCounts& c, uint64_t entries, size_t keys) {
  w.open("section").element("h2", "Counts");
  w.open("dl", {{"class", "rows"}, {"id", "counts"}});
  row(w, "log entries", std::to_string(entries));
  w.element("dt", "runs").open("dd").text(std::to_string(c.runs)).close();
  w.element("dt", "benchmarks").open("dd").link(Href::path("/benchmarks"), std::to_string(c.benchmarks)).close();
  row(w, "comparison groups", std::to_string(c.groups));
  w.element("dt", "leadership changes").open("dd").link(Href::path("/records"), std::to_string(c.leadership_changes)).close();
  w.element("dt", "keys").open("dd").link(Href::path("/keys"), std::to_string(keys)).close();
  row(w, "void events", std::to_string(c.void_events));
  row(w, "skipped events", std::to_string(c.skipped_events));
  w.close();
  w.close();
}

Status recent_events(Writer& w, Context& context, uint64_t size) {
  w.open("section").element("h2", "Recent events");
  const uint64_t from = size > kRecentEvents ? size - kRecentEvents : 0;
  const KeyPolicy keys = context.ledger.policy();
  std::vector<std::pair<uint64_t, std::string>> lines;
  Status s = size == 0 ? Status::ok() : context.ledger.scan(from, size, [&](uint64_t index, ByteView bytes) {
    auto event = cli::decode_stored_entry(index, bytes);
    if (!event) return event.error();
    lines.emplace_back(index, std::string(event_kind_name(event->body.kind())) + " by " +
                                  keys.describe(event->body.author) + ", " +
                                  cli::format_time_ms(event->body.claimed_time_ms));
    return Status::ok();
  });
  if (!s) return s;
  w.open("ul", {{"class", "items"}, {"id", "recent-events"}});
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    w.open("li").link(Href::event(it->first), "entry " + std::to_string(it->first));
    w.text(" · " + it->second).close();
  }
  w.close();
  w.close();
  return Status::ok();
}

Result<std::string> render_home(Context& context, const ProjectionStore& state,
                                const std::string& root) {
  std::optional<StoredCheckpoint> newest;
  if (auto cp = stored_checkpoint(context.ledger); cp) {
    newest = std::move(*cp);
  } else if (cp.error().code() != Code::kNotFound) {
    return cp.error();
  }
  auto counts = count_projections(state);
  if (!counts) return counts.error();
  auto changes = latest_leadership_changes(state, kRecentChanges);
  if (!changes) return changes.error();
  const KeyPolicy keys = context.ledger.policy();
  const std::string origin = keys.genesis() ? keys.genesis()->origin : std::string("evledger");
  Writer w(root);
  pages::begin_page(w, origin, Href::path("/api/v1/checkpoints"));
  w.element("h1", origin);
  w.element("p", "An append-only, signed log of benchmark evidence: every number on these pages "
                 "comes from its entries, and each links to the entry and proof behind it.",
            {{"class", "subtitle"}});
  log_section(w, context, newest);
  statement_section(w, context);
  const uint64_t size = newest ? newest->checkpoint.size : 0;
  counts_section(w, *counts, size, keys.keys().size());
  if (Status s = recent_events(w, context, size); !s) return s;
  w.open("section").element("h2", "Recent record changes");
  if (changes->empty()) {
    w.element("p", "No record yet.");
  } else {
    w.open("ol", {{"class", "items"}, {"id", "recent-changes"}});
    for (const Json& change : *changes) {
      w.open("li");
      pages::leadership_change(w, change, true);
      w.close();
    }
    w.close();
    w.open("p").link(Href::path("/records"), "All records").text(" · ")
        .link(Href::path("/records/feed.xml"), "Atom feed").close();
  }
  w.close();
  pages::end_page(w);
  return w.finish();
}

// The void events the keys page lists, the first in log order.
constexpr size_t kVoidEventsShown = 100;

// A page of the registry as the API's keys listing shows it (cli::key_registry_json, with its
// cursor= and limit=), as a table; the voided ranges of its keys; the first void events.
Result<std::string> render_keys(Context& context, const Request& request,
                                const ProjectionStore& state, const std::string& root) {
  auto page = pages::page_request(request);
  if (!page) return page.error();
  EVL_RETURN_IF_ERROR(api::check_key_cursor(page->cursor));
  auto voided = list_void_events(state);
  if (!voided) return voided.error();
  Page listed;
  const auto registry =
      cli::key_registry_json(context.ledger.policy(), page->cursor, page->limit, listed.next);
  const pages::PageLinks links = pages::page_links(request, "/keys", {}, listed);
  Writer w(root);
  pages::begin_page(w, "Keys", pages::listing_href(request, "/api/v1/keys", {}, page->cursor),
                    links);
  w.element("h1", "Keys");
  w.element("p", "Who may append what, granted and revoked by admins in the log itself; " +
                     std::to_string(page->limit) + " keys a page.", {{"class", "subtitle"}});
  w.open("section").element("h2", "Registry");
  w.open("table", {{"class", "ranking"}, {"id", "keys"}}).open("thead").open("tr");
  for (const char* h : {"Name", "Roles", "Scope", "Granted", "Revoked", "Void from"}) {
    w.element("th", h, {{"scope", "col"}});
  }
  w.close().close().open("tbody");
  std::vector<Json> ranges;
  for (const std::string& text : registry) {
    auto key = parse_json(text);
    if (!key) return key.error();
    auto list = [&](const char* name) {
      std::string out;
      if (const Json* items = key->find(name); items && items->is_array()) {
        for (const Json& item : items->as_array()) out += (out.empty() ? "" : ", ") + cli::text_of(&item);
      }
      return out.empty() ? std::string("-") : out;
    };
    w.open("tr");
    w.open("td").element("span", member(*key, "name")).empty("br")
        .element("code", member(*key, "verifierKey"), {{"class", "vkey"}}).close();
    w.element("td", list("roles"));
    w.element("td", list("scope"));
    auto entry_cell = [&](const char* name, std::string suffix) {
      w.open("td");
      if (auto at = number(*key, name)) {
        w.link(Href::event(static_cast<uint64_t>(*at)), "entry " + member(*key, name)).text(suffix);
      } else {
        w.text("-");
      }
      w.close();
    };
    entry_cell("grantedAt", "");
    entry_cell("revokedAt", key->find("reason") ? " (" + member(*key, "reason") + ")" : "");
    entry_cell("voidFrom", "");
    w.close();
    if (key->find("voidFrom") != nullptr) ranges.push_back(std::move(*key));
  }
  w.close().close();
  pages::pager(w, links, "", "More keys");
  w.close();
  w.open("section").element("h2", "Voided ranges");
  if (ranges.empty()) {
    w.element("p", "None among these keys: none was revoked as compromised.");
  } else {
    w.open("ul", {{"class", "items"}});
    for (const Json& key : ranges) {
      w.open("li").text(member(key, "name") + ": its events from ");
      w.link(Href::event(static_cast<uint64_t>(*number(key, "voidFrom"))),
             "entry " + member(key, "voidFrom"));
      w.text(" up to its revocation at ");
      w.link(Href::event(static_cast<uint64_t>(*number(key, "revokedAt"))),
             "entry " + member(key, "revokedAt"));
      w.text(" are void, and so are grants it signed there.").close();
    }
    w.close();
  }
  w.element("h3", "Void events");
  if (voided->empty()) {
    w.element("p", "None.");
  } else {
    if (voided->size() > kVoidEventsShown) {
      w.element("p", "The first " + std::to_string(kVoidEventsShown) + " of " +
                         std::to_string(voided->size()) + ", in log order.");
    }
    w.open("ul", {{"class", "items"}, {"id", "void-events"}});
    for (size_t i = 0; i < voided->size() && i < kVoidEventsShown; ++i) {
      const Json& v = (*voided)[i];
      w.open("li");
      if (auto index = number(v, "index")) {
        w.link(Href::event(static_cast<uint64_t>(*index)), "entry " + member(v, "index"));
      }
      w.text(" · " + member(v, "kind") + " by " + member(v, "author") + ": " + member(v, "cause"));
      w.close();
    }
    w.close();
  }
  w.close();
  pages::end_page(w);
  return w.finish();
}

}  // namespace

Response handle_page_home(const Request& request, Context& context) {
  return pages::checked_page(request, context, "/", {},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_home(context, state, root);
                             });
}

Response handle_page_keys(const Request& request, Context& context) {
  return pages::checked_page(request, context, "keys", {"cursor", "limit"},
                             [&](const ProjectionStore& state, const std::string& root) {
                               return render_keys(context, request, state, root);
                             });
}

}  // namespace evl::server
