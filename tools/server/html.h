// tools/server/html.h — the one way the server writes HTML: a builder in which text is escaped
// by construction and only the builder emits markup.
//
//   - text() and every attribute value are escaped (& < > " '), with control characters but
//     '\n' made visible and invalid UTF-8 shown as \xNN (tools/render.h's visible_lines), so
//     that nothing a manifest holds can open an element, end an attribute or run a script;
//   - element names are lowercase letters, digits and '-', attribute names also capitals (SVG);
//     an attribute named on... in any case (an inline event handler), style, href, src or
//     action given as plain text is a bug (std::logic_error): links are Href values, built only
//     from the server's own paths and from digests and numbers (never from a manifest's text);
//   - elements close in order: close() ends the innermost open one, finish() all of them.
//
// Thread safety: a Writer belongs to one thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evl::server::html {

// `text` for element content or a quoted attribute value.
std::string escape(std::string_view text);

// A link target of this server, as a path from its root ("/runs/<hex>"), or to the API. Pages
// write it relative to themselves (under()), so that a link works wherever the server's root
// is mounted: at its --prefix, or below a path of a proxy in front that the server never sees.
class Href {
 public:
  // A path the server writes itself ("/", "/records", "/assets/app.css"): must start with
  // '/' and hold only A-Z a-z 0-9 - . _ ~ /, with no empty segment (a bug otherwise).
  static Href path(std::string_view fixed);
  // /runs/<hex>, /groups/<hex>: from a digest's text ("sha256:<64 hex>"); a bug otherwise.
  static Href run(std::string_view digest);
  static Href group(std::string_view digest);
  // /events/<index>.
  static Href event(uint64_t index);
  // /benchmarks/<name> for a name of the characters a path may hold (A-Z a-z 0-9 - . _ ~, not
  // "." or ".."), else /benchmarks?name=<name percent-encoded>: any benchmark's page.
  static Href benchmark(std::string_view name);
  // A path as path() takes it with a query: each name (lowercase letters) = its value with
  // every byte but A-Z a-z 0-9 - . _ ~ percent-encoded, so that any text is a value and none
  // leaves it.
  static Href query(std::string_view fixed,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> params);
  static Href query(std::string_view fixed,
                    const std::vector<std::pair<std::string_view, std::string_view>>& params);
  // /api/v1/proofs/inclusion?index=<index>&format=tlog-proof.
  static Href tlog_proof(uint64_t index);
  // /compare?run=<hex>&run=<hex>...: from digests.
  static Href compare(const std::vector<std::string>& digests);
  // The same with &format=<format> ("csv", "json": the server's own words).
  static Href compare_as(const std::vector<std::string>& digests, std::string_view format);

  // The target as a relative reference from a page whose way up to the server's root is
  // `root` ("./" from /records, "../" from /runs/<hex>: root_of in page_support.h).
  std::string under(std::string_view root) const {
    return std::string(root).append(target_, 1);
  }
  const std::string& target() const { return target_; }

 private:
  explicit Href(std::string target) : target_(std::move(target)) {}
  std::string target_;
};

// The 64 hex digits of a digest's text ("sha256:<hex>"); a bug (std::logic_error) when the
// text is no digest.
std::string digest_hex(std::string_view digest);
bool is_digest_text(std::string_view text);

struct Attr {
  std::string_view name;
  std::string value;
};

class Writer {
 public:
  // Links are written relative to the page, whose way up to the server's root is `root`
  // (Href::under).
  explicit Writer(std::string root = "./") : root_(std::move(root)) {}

  // "<!doctype html>", once, first.
  Writer& doctype();
  // An XML document's declaration and its root element in namespace `xmlns` (a constant of
  // the server's, such as Atom's "http://www.w3.org/2005/Atom"), opened; for the feeds, once,
  // first. Text and attributes are escaped as in HTML, which XML reads alike.
  Writer& open_xml(std::string_view tag, std::string_view xmlns);
  // <tag attrs...>; the element stays open until close().
  Writer& open(std::string_view tag, std::initializer_list<Attr> attrs = {});
  // <a href=...> opened.
  Writer& open_link(const Href& href, std::initializer_list<Attr> attrs = {});
  // Ends the innermost open element.
  Writer& close();
  // An element with no content (<meta>, <link>, <br>, <input>): never closed (written <x/>
  // in an XML document).
  Writer& empty(std::string_view tag, std::initializer_list<Attr> attrs = {});
  // <link rel=... href=...>.
  Writer& link_tag(std::string_view rel, const Href& href, std::initializer_list<Attr> attrs = {});
  // <script src=... defer></script>: scripts come only from the server's own files.
  Writer& script(const Href& src);
  // <form action=... method=get> opened.
  Writer& open_form(const Href& action, std::initializer_list<Attr> attrs = {});
  // Escaped text.
  Writer& text(std::string_view text);
  // open(tag, attrs), text(content), close().
  Writer& element(std::string_view tag, std::string_view content,
                  std::initializer_list<Attr> attrs = {});
  // <a href=...>content</a>.
  Writer& link(const Href& href, std::string_view content, std::initializer_list<Attr> attrs = {});

  // Depth of open elements.
  size_t depth() const { return open_.size(); }
  // Closes every open element and gives the document.
  std::string finish();

 private:
  void start_tag(std::string_view tag, std::initializer_list<Attr> attrs, const Href* href,
                 std::string_view rel, std::string_view href_name = "href");
  void end_empty();
  std::string root_;
  bool xml_ = false;
  std::string out_;
  std::vector<std::string> open_;
};

}  // namespace evl::server::html
