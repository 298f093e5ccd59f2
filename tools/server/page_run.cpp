// The run page, /runs/<run>: the sections of `evledger show` (tools/run_page.h builds them from
// the view that projections/query.h reads), as HTML, with links, banners and the citation.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "keys/checkpoint.h"
#include "keys/note.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "tools/json_text.h"
#include "tools/render.h"
#include "tools/run_page.h"
#include "tools/server/api_support.h"
#include "tools/server/page_support.h"
#include "tools/server/pages.h"

namespace evl::server {
namespace {

using html::Href;
using html::Writer;

using pages::member;

// What the page cites besides the view: the log's name and the newest checkpoint.
struct Citation {
  std::string origin;
  std::optional<Checkpoint> checkpoint;
  std::string accessed;  // YYYY-MM-DD, UTC
  std::string prefix;    // the server's --prefix as the request shows it, for the permalink
};

Citation citation_of(Context& context) {
  Citation c;
  if (auto key = context.ledger.log_verifier()) c.origin = key->name;
  if (auto cp = context.checkpoints.current()) {
    if (auto note = parse_note((*cp)->note)) {
      if (auto body = parse_checkpoint_body(note->text)) c.checkpoint = *body;
    }
  }
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  c.accessed = cli::format_time_ms(now.count()).substr(0, 10);
  return c;
}

std::string checkpoint_text(const Citation& c) {
  if (!c.checkpoint) return "";
  return "In the checkpoint of size " + std::to_string(c.checkpoint->size) + ", root " +
         base64_encode(c.checkpoint->root) + ".";
}

void banners(Writer& w, const Json& view, const std::vector<RankExclusion>& unranked) {
  for (RankExclusion e : unranked) {
    switch (e) {
      case RankExclusion::kRetracted:
        w.element("p", "Retracted: this run is kept in the log but no longer ranked; see "
                       "Corrections.", {{"class", "banner retracted"}, {"role", "note"}});
        break;
      case RankExclusion::kSuperseded:
        w.open("p", {{"class", "banner superseded"}, {"role", "note"}}).text("Superseded");
        if (html::is_digest_text(member(view, "supersededBy"))) {
          w.text(" by ").link(Href::run(member(view, "supersededBy")),
                              cli::short_digest(member(view, "supersededBy"), 20));
        }
        w.text("; see Corrections.").close();
        break;
      case RankExclusion::kDisqualified:
        w.element("p", "Disqualified: not ranked; see Corrections.",
                  {{"class", "banner disqualified"}, {"role", "note"}});
        break;
      case RankExclusion::kVoid:
        w.element("p", "Void (" + member(view, "void") + "): the events of a voided key count "
                       "for nothing.", {{"class", "banner void"}, {"role", "note"}});
        break;
      default: break;
    }
  }
}

void item_value(Writer& w, const cli::RunPageItem& item) {
  if (!item.group.empty() && html::is_digest_text(item.group)) {
    w.link(Href::group(item.group), item.text);
  } else if (!item.run.empty() && html::is_digest_text(item.run)) {
    w.link(Href::run(item.run), item.text);
  } else if (item.copy) {
    w.element("code", item.text, {{"data-copy", ""}, {"data-copy-name", item.label}});
  } else {
    w.text(item.text);
  }
  if (item.index) {
    w.text(" · ").link(Href::event(*item.index), "entry " + std::to_string(*item.index));
  }
}

// The items of a section: rows in a <dl>, list items in a <ul>, lines as paragraphs.
void section_items(Writer& w, const cli::RunPageSection& section, bool primary) {
  using Kind = cli::RunPageItem::Kind;
  const auto& items = section.items;
  for (size_t i = 0; i < items.size();) {
    const Kind kind = items[i].kind;
    if (kind == Kind::kLine) {
      w.open("p", primary && i == 0 ? std::initializer_list<html::Attr>{{"class", "primary"}}
                                    : std::initializer_list<html::Attr>{});
      item_value(w, items[i++]);
      w.close();
      continue;
    }
    w.open(kind == Kind::kRow ? "dl" : "ul", {{"class", kind == Kind::kRow ? "rows" : "items"}});
    for (; i < items.size() && items[i].kind == kind; ++i) {
      if (kind == Kind::kRow) w.element("dt", items[i].label);
      w.open(kind == Kind::kRow ? "dd" : "li");
      item_value(w, items[i]);
      w.close();
    }
    w.close();
  }
}

void actions(Writer& w, const Json& view) {
  const std::string run = member(view, "run"), leader = member(view, "leader");
  const std::string group = member(view, "comparisonKey");
  w.open("p", {{"class", "actions"}});
  if (html::is_digest_text(leader) && leader != run) {
    w.link(Href::compare({leader, run}), "Compare with #1", {{"id", "compare-leader"}});
  }
  if (html::is_digest_text(group)) {
    w.link(Href::group(group), "Its comparison group", {{"id", "group-link"}});
  }
  w.close();
}

std::string bibtex(const Json& view, const Citation& c, const std::string& permalink) {
  auto braces_out = [](std::string text) {
    for (char& ch : text) {
      if (ch == '{') ch = '(';
      if (ch == '}') ch = ')';
    }
    return text;
  };
  const std::string run = member(view, "run");
  return "@misc{evledger-" + run.substr(7, 12) + ",\n  title = {" +
         braces_out(member(view, "title")) + "},\n  howpublished = {evledger log " +
         braces_out(c.origin) + ", entry " + member(view, "index") + "},\n  note = {Run " + run +
         ", event " + member(view, "event") +
         (c.checkpoint ? ", checkpoint of size " + std::to_string(c.checkpoint->size) : "") +
         "},\n  url = {" + permalink + "},\n  urldate = {" + c.accessed + "}\n}";
}

void cite(Writer& w, const Json& view, const Citation& c) {
  const std::string run = member(view, "run");
  const std::string permalink = c.prefix + "/runs/" + html::digest_hex(run);
  w.open("dl", {{"class", "rows"}, {"id", "citation"}});
  w.element("dt", "permalink").open("dd").link(Href::run(run), permalink).close();
  w.element("dt", "run digest").element("dd", run, {{"data-copy", ""}, {"data-copy-name", "run"}});
  w.element("dt", "event id").element("dd", member(view, "event"));
  const auto index = static_cast<uint64_t>(json_path(view, "index")->as_number());
  w.element("dt", "log index").open("dd").link(Href::event(index), std::to_string(index)).close();
  w.element("dt", "checkpoint").element("dd", c.checkpoint
      ? "size " + std::to_string(c.checkpoint->size) + ", root " + base64_encode(c.checkpoint->root)
      : std::string("none yet"));
  w.element("dt", "accessed").element("dd", c.accessed);
  w.close();
  w.element("h3", "BibTeX");
  w.element("pre", bibtex(view, c, permalink), {{"data-copy", ""}, {"data-copy-name", "BibTeX"}});
  w.open("p").link(Href::tlog_proof(index), "Download the inclusion proof (.tlog-proof)",
                   {{"download", "run-" + run.substr(7, 12) + ".tlog-proof"}, {"id", "proof"}});
  w.text(" — check it offline with evledger proof verify and the log's key.").close();
}

// The canonical manifest of the observation, from its log entry; "" when it cannot be read.
std::string manifest_text(Context& context, const Json& view) {
  const Json* index = json_path(view, "index");
  if (index == nullptr || !index->is_number()) return "";
  const auto at = static_cast<uint64_t>(index->as_number());
  auto bytes = context.ledger.entry(at);
  if (!bytes) return "";
  auto entry = cli::stored_entry_json(at, *bytes, context.ledger.policy());
  if (!entry) return "";
  auto json = parse_json(*entry);
  if (!json) return "";
  const Json* manifest = json_path(*json, "observation.manifest");
  return manifest ? pages::pretty_json(*manifest) : "";
}

std::string render_run_page(Context& context, const Json& view,
                            const std::vector<RankExclusion>& unranked, const Citation& c,
                            const std::string& root) {
  const cli::RunPage page = cli::run_page(view, {c.origin, checkpoint_text(c), unranked});
  const std::string run = member(view, "run");
  Writer w(root);
  pages::begin_page(w, page.heading, Href::path("/api/v1/runs/" + html::digest_hex(run)));
  w.open("section", {{"class", "wide"}});
  w.element("h1", page.heading).element("p", page.title, {{"class", "subtitle"}});
  banners(w, view, unranked);
  w.close();
  w.open("div");
  for (const auto& section : page.sections) {
    const bool primary = &section == &page.sections.front();
    const bool citation = section.title == "Cite this record";
    w.open("section");
    w.element("h2", section.title);
    section_items(w, section, primary);
    if (primary) actions(w, view);
    if (citation) cite(w, view, c);
    w.close();
  }
  w.open("section").element("h2", "Canonical manifest");
  w.open("details").element("summary", "Show manifest");
  w.element("pre", manifest_text(context, view), {{"id", "manifest"}});
  w.close().close();
  w.close();  // div
  pages::end_page(w);
  return w.finish();
}

}  // namespace

Response handle_page_run(const Request& request, Context& context) {
  if (Status s = api::check_parameters(request, "runs/{run}", {}); !s) {
    return pages::error_page(request, 400, s.message());
  }
  auto hex = parse_run_prefix(request.rest, "run");
  if (!hex) return pages::error_page(request, http_status(hex.error().code()), hex.error().message());
  Citation citation = citation_of(context);
  citation.prefix = pages::prefix_of(request);
  const std::string root = pages::root_of(request);
  auto manifests = log_manifests(context.ledger);
  return pages::page_answer(request, context, [&](const ProjectionStore& state) -> Result<std::string> {
    std::vector<RankExclusion> unranked;
    auto view = read_named_run_view(state, *manifests, *hex, "run", &unranked);
    if (!view) return view.error();
    return render_run_page(context, *view, unranked, citation, root);
  });
}

}  // namespace evl::server
