#include "tools/server/html.h"

#include <algorithm>
#include <stdexcept>

#include "tools/render.h"

namespace evl::server::html {
namespace {

bool is_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

void check_tag(std::string_view tag) {
  if (!is_name(tag) || tag == "script" || tag == "style") {
    throw std::logic_error("html: <" + std::string(tag) + "> is not an element this writer emits");
  }
}

// Attribute names the writer refuses as text: event handlers, inline style, and the ones that
// take a URL (those come from an Href). Names may hold capitals (SVG's viewBox); HTML compares
// them without case, so the refusals do too.
void check_attribute(std::string_view name) {
  std::string lower;
  bool ok = !name.empty();
  for (char c : name) {
    ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (!ok || lower.substr(0, 2) == "on" || lower == "style" || lower == "href" || lower == "src" ||
      lower == "action" || lower == "formaction" || lower == "srcdoc" || lower == "xmlns") {
    throw std::logic_error("html: attribute '" + std::string(name) + "' may not be written as text");
  }
}

bool is_path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

std::string escape(std::string_view text) {
  // Printable ASCII and line breaks are shown as they are: only other text needs the pass that
  // makes control characters and bad UTF-8 visible (most of a page is digests and numbers).
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 0x20 && c < 0x7f) || c == '\n';
  });
  const std::string visible = plain ? std::string() : cli::visible_lines(text);
  const std::string_view shown = plain ? text : std::string_view(visible);
  std::string out;
  out.reserve(shown.size() + 16);
  for (char c : shown) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

bool is_digest_text(std::string_view text) {
  constexpr std::string_view kScheme = "sha256:";
  if (text.size() != kScheme.size() + 64 || text.substr(0, kScheme.size()) != kScheme) return false;
  for (char c : text.substr(kScheme.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string digest_hex(std::string_view digest) {
  if (!is_digest_text(digest)) {
    throw std::logic_error("html: '" + std::string(digest.substr(0, 80)) + "' is no digest");
  }
  return std::string(digest.substr(7));
}

Href Href::path(std::string_view fixed) {
  bool ok = !fixed.empty() && fixed[0] == '/';
  for (char c : fixed) ok = ok && is_path_char(c);
  ok = ok && fixed.find("//") == std::string_view::npos;  // "//host" would leave this server
  if (!ok) throw std::logic_error("html: '" + std::string(fixed) + "' is not a path of this server");
  return Href(std::string(fixed));
}

Href Href::run(std::string_view digest) { return Href("/runs/" + digest_hex(digest)); }
Href Href::group(std::string_view digest) { return Href("/groups/" + digest_hex(digest)); }
Href Href::event(uint64_t index) { return Href("/events/" + std::to_string(index)); }

Href Href::benchmark(std::string_view name) {
  bool plain = !name.empty() && name != "." && name != "..";
  for (char c : name) plain = plain && c != '/' && is_path_char(c);
  if (plain) return Href("/benchmarks/" + std::string(name));
  return query("/benchmarks", {{"name", name}});
}

Href Href::query(std::string_view fixed,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> params) {
  return query(fixed, std::vector<std::pair<std::string_view, std::string_view>>(params));
}

Href Href::query(std::string_view fixed,
                 const std::vector<std::pair<std::string_view, std::string_view>>& params) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string target = path(fixed).target_;
  char separator = '?';
  for (const auto& [name, value] : params) {
    bool ok = !name.empty();
    for (char c : name) ok = ok && c >= 'a' && c <= 'z';
    if (!ok) throw std::logic_error("html: '" + std::string(name) + "' is not a query name");
    target += separator;
    target += name;
    target += '=';
    for (unsigned char c : value) {
      if (is_path_char(static_cast<char>(c)) && c != '/') {
        target += static_cast<char>(c);
      } else {
        target += '%';
        target += kHex[c >> 4];
        target += kHex[c & 15];
      }
    }
    separator = '&';
  }
  return Href(std::move(target));
}

Href Href::tlog_proof(uint64_t index) {
  return Href("/api/v1/proofs/inclusion?index=" + std::to_string(index) + "&format=tlog-proof");
}

Href Href::compare(const std::vector<std::string>& digests) {
  std::string target = "/compare";
  char separator = '?';
  for (const auto& d : digests) {
    target += separator + std::string("run=") + digest_hex(d);
    separator = '&';
  }
  return Href(std::move(target));
}

Href Href::compare_as(const std::vector<std::string>& digests, std::string_view format) {
  for (char c : format) {
    if (c < 'a' || c > 'z') throw std::logic_error("html: format '" + std::string(format) + "'");
  }
  return Href(compare(digests).target_ + "&format=" + std::string(format));
}

Writer& Writer::doctype() {
  out_ += "<!doctype html>\n";
  return *this;
}

Writer& Writer::open_xml(std::string_view tag, std::string_view xmlns) {
  check_tag(tag);
  out_ += "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<";
  out_ += tag;
  out_ += " xmlns=\"" + escape(xmlns) + "\">";
  open_.emplace_back(tag);
  xml_ = true;
  return *this;
}

void Writer::start_tag(std::string_view tag, std::initializer_list<Attr> attrs, const Href* href,
                       std::string_view rel, std::string_view href_name) {
  if (!(tag == "script" && href_name == "src")) check_tag(tag);  // only script() writes one
  out_ += '<';
  out_ += tag;
  if (!rel.empty()) out_ += " rel=\"" + escape(rel) + "\"";
  if (href != nullptr) {
    out_ += " " + std::string(href_name) + "=\"" + escape(href->under(root_)) + "\"";
  }
  for (const Attr& a : attrs) {
    check_attribute(a.name);
    out_ += ' ';
    out_ += a.name;
    out_ += "=\"" + escape(a.value) + "\"";
  }
  out_ += '>';
}

Writer& Writer::open(std::string_view tag, std::initializer_list<Attr> attrs) {
  start_tag(tag, attrs, nullptr, "");
  open_.emplace_back(tag);
  return *this;
}

Writer& Writer::open_link(const Href& href, std::initializer_list<Attr> attrs) {
  start_tag("a", attrs, &href, "");
  open_.emplace_back("a");
  return *this;
}

Writer& Writer::close() {
  if (open_.empty()) throw std::logic_error("html: close() with no open element");
  out_ += "</" + open_.back() + ">";
  open_.pop_back();
  return *this;
}

void Writer::end_empty() {
  if (xml_) out_.insert(out_.size() - 1, "/");  // <link .../>: XML has no void elements
}

Writer& Writer::empty(std::string_view tag, std::initializer_list<Attr> attrs) {
  start_tag(tag, attrs, nullptr, "");
  end_empty();
  return *this;
}

Writer& Writer::link_tag(std::string_view rel, const Href& href, std::initializer_list<Attr> attrs) {
  start_tag("link", attrs, &href, rel);
  end_empty();
  return *this;
}

Writer& Writer::script(const Href& src) {
  start_tag("script", {{"defer", "defer"}}, &src, "", "src");
  out_ += "</script>";
  return *this;
}

Writer& Writer::open_form(const Href& action, std::initializer_list<Attr> attrs) {
  start_tag("form", attrs, &action, "", "action");
  open_.emplace_back("form");
  return *this;
}

Writer& Writer::text(std::string_view text) {
  out_ += escape(text);
  return *this;
}

Writer& Writer::element(std::string_view tag, std::string_view content,
                        std::initializer_list<Attr> attrs) {
  return open(tag, attrs).text(content).close();
}

Writer& Writer::link(const Href& href, std::string_view content, std::initializer_list<Attr> attrs) {
  return open_link(href, attrs).text(content).close();
}

std::string Writer::finish() {
  while (!open_.empty()) close();
  return std::move(out_);
}

}  // namespace evl::server::html
