#include "tools/import_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <streambuf>

#include "events/bytes.h"
#include "events/file_read.h"
#include "events/utf8.h"
#include "ledger/thread_pool.h"
#include "tools/internal/import_text.h"

namespace evl::cli {

using namespace import_text;  // the byte-level pieces of this reader, and of it alone

namespace {

// How far the form detector looks ahead (a few lines of a catalog, or one long first line).
constexpr size_t kDetectLines = 9;
constexpr size_t kDetectBytes = 2 * kMaxDocumentBytes + 2;

// The text of one '---' document of a YAML stream.
struct YamlChunk {
  std::string text;
  uint64_t text_line = 0;   // the source line of text's first line
  uint64_t first_line = 0;  // the source line of the first line with content
  bool started = false;     // a '---' or content was read: a '---' or directive starts the next
  bool content = false;
  bool sequence = false;  // the first content line is a top-level "- " entry
  bool too_large = false;
};

}  // namespace

const char* input_form_name(InputForm form) {
  switch (form) {
    case InputForm::kEmpty: return "empty";
    case InputForm::kJson: return "json";
    case InputForm::kJsonArray: return "json-array";
    case InputForm::kJsonLines: return "json-lines";
    case InputForm::kYaml: return "yaml";
  }
  return "?";
}

void SourceDocument::parse() {
  if (value || !status.is_ok()) return;
  auto parsed = parse_json(json_text);
  if (!parsed) {
    status = rejected(where + ": document " + std::to_string(index) +
                      " is not valid JSON: " + parsed.error().message());
  } else {
    value = std::move(parsed.value());
  }
  json_text = std::string();
}

// ---- ManifestReader ------------------------------------------------------------------------

namespace {

// The lines of `ahead` after its first one.
std::string_view after_first_line(std::string_view ahead) {
  size_t nl = ahead.find('\n');
  return nl == std::string_view::npos ? std::string_view() : ahead.substr(nl + 1);
}

// How a byte the reader did not expect is named in a message.
std::string shown_byte(int c) {
  if (c > ' ' && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  return visible_text(std::string(1, static_cast<char>(c)));
}

}  // namespace

// A FileStream as the std::streambuf that CharSource reads. An error ends the input as its end
// would, and is kept for the reader to report instead of what it read last.
class FileStreamBuf : public std::streambuf {
 public:
  explicit FileStreamBuf(std::unique_ptr<FileStream> file) : file_(std::move(file)) {}
  const Status& error() const { return error_; }
  const FileStream& file() const { return *file_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (at_end_) return traits_type::eof();
    auto n = file_->read(buffer_, sizeof buffer_);
    if (!n) error_ = n.error();
    if (!n || *n == 0) {
      at_end_ = true;
      return traits_type::eof();
    }
    setg(buffer_, buffer_, buffer_ + *n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::unique_ptr<FileStream> file_;
  Status error_;
  bool at_end_ = false;
  char buffer_[1 << 16];
};

struct ManifestReader::Impl {
  std::string name;
  std::unique_ptr<FileStreamBuf> file;  // open(): the file, read under events/file_read.h
  std::istream* in = nullptr;           // from_stream(): the stream
  std::unique_ptr<CharSource> chars;
  InputForm form = InputForm::kEmpty;
  bool started = false;
  uint64_t count = 0;
  // Documents read before they are asked for: comments ahead of the first JSON value, and the
  // documents of one YAML '---' document.
  std::deque<SourceDocument> queued;
  // Where a JSON array stands: before its first element, after a ',', after an element, after
  // a ']', or after something refused to the end of its line (a broken element, a comment),
  // which may have taken the ',' with it: there a ',' may come or not.
  enum class ArrayAt : uint8_t { kElement, kAfterComma, kAfterElement, kClosed, kResume };
  ArrayAt array_at = ArrayAt::kElement;
  ArrayAt before_close = ArrayAt::kElement;  // kClosed: where the array stood before its ']'
  uint64_t comma_line = 0;  // the line of the last ','
  uint64_t close_line = 0;  // the line of the last ']'
  // YAML: the first document, begun by a first line past the limit that detect() read past.
  std::optional<YamlChunk> yaml_head;

  Result<bool> next_raw(SourceDocument& out);
  Result<bool> read_next(SourceDocument& out);
  Status detect();
  SourceDocument make(uint64_t line) {
    SourceDocument d;
    d.index = ++count;
    d.line = line;
    d.where = name + " line " + std::to_string(line);
    return d;
  }
  // A document that is refused where it stands: `what` follows "<where>: document N ".
  SourceDocument refused(uint64_t line, const std::string& what) {
    SourceDocument d = make(line);
    d.status = rejected(d.where + ": document " + std::to_string(d.index) + " " + what);
    return d;
  }
  SourceDocument line_too_long(uint64_t line) {
    SourceDocument d = make(line);
    d.status = rejected(d.where + ": line longer than " + std::to_string(kMaxDocumentBytes) +
                        " bytes; a manifest must fit in one ledger entry (64 KiB)");
    return d;
  }
  void detect_after_long_line();
  bool at_comment();
  bool take_comment(SourceDocument& out);
  bool scan_value(SourceDocument& doc, bool in_array);
  std::string value_starts(int c, bool in_array);
  Result<bool> next_array(SourceDocument& out);
  Result<bool> next_line(SourceDocument& out);
  Result<bool> next_value(SourceDocument& out);
  Result<bool> next_yaml(SourceDocument& out);
  bool ends_yaml_chunk(const YamlChunk& chunk);
  void convert_yaml(const YamlChunk& chunk);
};

Status ManifestReader::Impl::detect() {
  started = true;
  std::string_view head = chars->peek_line(4);
  if (starts_with(head, kBom)) {  // a UTF-8 byte order mark, which RFC 8259 lets a reader skip
    for (size_t i = 0; i < kBom.size(); ++i) chars->get();
  } else if (starts_with(head, "\xFF\xFE") || starts_with(head, "\xFE\xFF") ||
             starts_with(head, std::string_view("\0\0\xFE\xFF", 4))) {
    return rejected(name + ": the text starts with the byte order mark of UTF-16 or UTF-32 (" +
                    visible_text(head.substr(0, 2)) + "); a catalog is UTF-8: convert it, e.g. "
                    "with iconv -f UTF-16 -t UTF-8");
  }
  // Blank lines and JSON comments go; a YAML document keeps its first line's indentation.
  int c;
  while (true) {
    chars->skip_blank_lines();
    c = chars->content_byte();
    if (c != '/' || !at_comment()) break;
    chars->skip_blanks();
    SourceDocument comment;
    take_comment(comment);
    queued.push_back(std::move(comment));
  }
  if (c == '{' || c == '[') chars->skip_blanks();
  if (c == kEof) {
    form = queued.empty() ? InputForm::kEmpty : InputForm::kJson;
  } else if (c == '{') {
    // A first line past the document limit is a JSONL line, which fails on its own without
    // taking the rest of the input with it.
    bool jsonl = chars->line_longer_than(kMaxDocumentBytes) ||
                 is_whole_value(chars->peek_line(kMaxDocumentBytes + 2));
    form = jsonl ? InputForm::kJsonLines : InputForm::kJson;
  } else if (c != '[' && chars->line_longer_than(kMaxDocumentBytes)) {
    detect_after_long_line();
  } else {
    bool at_end = false;
    std::string_view ahead = chars->look_ahead(kDetectBytes, kDetectLines, &at_end);
    if (looks_like_json_lines(after_first_line(ahead), at_end, c == '[')) {
      form = InputForm::kJsonLines;
    } else if (c == '[') {
      form = InputForm::kJsonArray;
      chars->get();
    } else if (!queued.empty()) {
      form = InputForm::kJson;  // after JSON comments, a value that is not one: refused alone
    } else {
      form = InputForm::kYaml;
    }
  }
  return Status::ok();
}

// A first line past the document limit is refused in every form, but a JSON lines file must not
// lose the lines after it to a YAML document: the line is read past (never held), and the lines
// after it tell the form. In YAML it is the start of a document too large, which goes on to the
// next '---'; otherwise it is a document of its own.
void ManifestReader::Impl::detect_after_long_line() {
  const uint64_t at = chars->line();
  const bool sequence = is_sequence_entry(chars->peek_line(8));
  chars->skip_line();
  bool at_end = false;
  std::string_view ahead = chars->look_ahead(kDetectBytes, kDetectLines, &at_end);
  const bool jsonl = looks_like_json_lines(ahead, at_end, false);
  if (jsonl || !queued.empty()) {  // after JSON comments, as in detect(): JSON values
    form = jsonl ? InputForm::kJsonLines : InputForm::kJson;
    queued.push_back(line_too_long(at));
    return;
  }
  form = InputForm::kYaml;
  YamlChunk head;
  head.text_line = head.first_line = at;
  head.started = head.content = head.too_large = true;
  head.sequence = sequence;
  yaml_head = std::move(head);
}

// Whether the rest of the line, after its blanks, starts with "//" or "/*".
bool ManifestReader::Impl::at_comment() {
  std::string_view line = chars->peek_line(4096);
  line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
  return starts_with(line, "//") || starts_with(line, "/*");
}

// Comments are not JSON: one at a document boundary is refused as a document of its own. It
// ends at its "*/" on the same line, or else with the line, so that an unclosed "/*" takes
// nothing beyond its line with it.
bool ManifestReader::Impl::take_comment(SourceDocument& out) {
  if (chars->peek() != '/') return false;
  std::string_view line = chars->peek_line(kMaxDocumentBytes);
  if (line.size() < 2 || (line[1] != '/' && line[1] != '*')) return false;
  size_t close = line[1] == '*' ? line.find("*/", 2) : std::string_view::npos;
  out = refused(chars->line(), "is a " + std::string(line.substr(0, 2)) +
                                   " comment; JSON has no comments: remove it (in a YAML "
                                   "catalog, comments start with '#')");
  if (close == std::string_view::npos) {
    chars->skip_line();
  } else {
    for (size_t i = 0; i < close + 2; ++i) chars->get();
  }
  return true;
}

// When a value still open at the first content byte `c` of a later line, no more indented than
// the line where it started, meets the start of another: a '{', or, in an array, a line that
// is just ']'. Then the value is cut off there, and the other read on its own. (A valid
// manifest laid out by any JSON printer never has either.) Returns why, or "" to go on.
std::string ManifestReader::Impl::value_starts(int c, bool in_array) {
  std::string line = std::to_string(chars->line());
  if (c == '{') return "is not closed before line " + line + ", where another value starts";
  if (c != ']' || !in_array) return {};
  std::string_view rest = chars->peek_line(64);
  if (rest.find_first_not_of(" \t\r\n", 1) != std::string_view::npos) return {};
  return "is not closed before line " + line + ", where the JSON array closes";
}

// Reads one JSON value's text into doc.json_text (the input is at its first byte). A string
// never spans lines: at a line's end inside one, the value is broken and ends there; so it is
// when another value starts while it is open (value_starts). Returns false for a broken value:
// the reader then goes on without expecting a separator, which was lost with it.
bool ManifestReader::Impl::scan_value(SourceDocument& doc, bool in_array) {
  Framing f;
  bool too_large = false;
  const uint64_t start_line = chars->line();
  const size_t start_indent = chars->indent();
  const int first = chars->peek();
  const bool container = first == '{' || first == '[' || first == '"';
  std::string cut;  // why the value ends before it closes
  while (true) {
    int c = chars->peek();
    if (c == kEof) break;
    if (f.depth > 0 && chars->line() != start_line && chars->at_line_content() && !is_space(c) &&
        chars->indent() <= start_indent) {
      cut = value_starts(c, in_array);
      if (!cut.empty()) break;
    }
    if (!container && !f.in_string && f.depth == 0 &&
        (is_space(c) || c == ',' || c == ']' || c == '}') && !doc.json_text.empty()) {
      break;
    }
    chars->get();
    if (c == '\n' && f.in_string) {
      cut = "is cut off: a string is still open at the end of line " +
            std::to_string(chars->line() - 1) + " (a JSON string cannot span lines)";
      break;
    }
    if (doc.json_text.size() < kMaxDocumentBytes) doc.json_text.push_back(static_cast<char>(c));
    else too_large = true;
    if (f.feed(c) && container) break;
  }
  std::string index = std::to_string(doc.index);
  if (!cut.empty()) {
    doc.status = rejected(doc.where + ": document " + index + " " + cut + "; complete it");
  } else if (f.depth > 0 || f.in_string) {
    doc.status = rejected(doc.where + ": document " + index +
                          " ends with the input, inside a JSON value; complete it");
  } else if (too_large) {
    doc.status = rejected(doc.where + ": document " + index + " is larger than " +
                          std::to_string(kMaxDocumentBytes) +
                          " bytes; a manifest must fit in one ledger entry (64 KiB)");
  }
  if (!doc.status.is_ok()) doc.json_text.clear();
  return cut.empty();
}

// Every element is accounted for: a broken element, a missing or stray separator, a stray ']'
// is refused as a document where it stands, and reading goes on after it. Arrays may follow
// one another. Only the end of the input inside the array ends it with an error.
Result<bool> ManifestReader::Impl::next_array(SourceDocument& out) {
  while (true) {
    chars->skip_space();
    if (take_comment(out)) {
      // A comment is refused in an element's place: a ',' before or after it is its own.
      ArrayAt& at_comment = array_at == ArrayAt::kClosed ? before_close : array_at;
      if (at_comment != ArrayAt::kElement) at_comment = ArrayAt::kResume;
      return true;
    }
    const int c = chars->peek();
    const uint64_t at = chars->line();
    if (array_at == ArrayAt::kClosed) {
      // The ']' closed the array if nothing but blanks and comments, then the end of the
      // input or another array on a line of its own, follow it; otherwise it was a stray, and
      // the array goes on.
      if (c != kEof && (c != '[' || at == close_line)) {
        out = refused(close_line, "is a ']' inside the JSON array: more follows on line " +
                                      std::to_string(at) + "; remove it");
        // Refused in an element's place, like a comment: a ',' next to it is its own.
        array_at = before_close == ArrayAt::kElement ? ArrayAt::kElement : ArrayAt::kResume;
        return true;
      }
      if (before_close == ArrayAt::kAfterComma) {
        before_close = ArrayAt::kElement;
        out = make(comma_line);
        out.status = rejected(out.where + ": element " + std::to_string(out.index) +
                              " of the JSON array is empty (a stray ',' before the ']'); "
                              "remove it");
        return true;
      }
      if (c == kEof) return false;
      chars->get();
      array_at = ArrayAt::kElement;
      continue;
    }
    if (c == kEof) {
      return rejected(name + " line " + std::to_string(at) +
                      ": the JSON array is not closed; every element before this line was "
                      "read: add the closing ']'");
    }
    if (c == ']') {
      chars->get();
      close_line = at;
      before_close = array_at;
      array_at = ArrayAt::kClosed;
      continue;
    }
    if (c == ',' && (array_at == ArrayAt::kAfterElement || array_at == ArrayAt::kResume)) {
      comma_line = at;
      chars->get();
      array_at = ArrayAt::kAfterComma;
      continue;
    }
    if (array_at == ArrayAt::kAfterElement) {
      out = refused(at, "is the rest of line " + std::to_string(at) + ", where ',' or ']' "
                        "should follow document " + std::to_string(count) + " but " +
                        shown_byte(c) + " does; separate the elements with ','");
      chars->skip_line();
      array_at = ArrayAt::kResume;
      return true;
    }
    if (c == ',') {  // a ',' where an element should be
      out = make(at);
      out.status = rejected(out.where + ": element " + std::to_string(out.index) +
                            " of the JSON array is empty (a stray ','); remove it");
      array_at = ArrayAt::kAfterElement;
      return true;
    }
    out = make(at);
    array_at = scan_value(out, true) ? ArrayAt::kAfterElement : ArrayAt::kResume;
    return true;
  }
}

Result<bool> ManifestReader::Impl::next_line(SourceDocument& out) {
  std::string line;
  bool truncated;
  while (true) {
    uint64_t at = chars->line();
    if (!chars->read_line(line, kMaxDocumentBytes, truncated)) return false;
    // A byte order mark starts each file of a `cat a.jsonl b.jsonl`: each line is a JSON text.
    if (starts_with(line, kBom)) line.erase(0, kBom.size());
    if (line.find_first_not_of(" \t\r") == std::string::npos && !truncated) continue;
    if (truncated) {
      out = line_too_long(at);
    } else {
      out = make(at);
      out.json_text = std::move(line);
    }
    return true;
  }
}

Result<bool> ManifestReader::Impl::next_value(SourceDocument& out) {
  chars->skip_space();
  if (take_comment(out)) return true;
  if (chars->peek() == kEof) return false;
  out = make(chars->line());
  scan_value(out, false);
  return true;
}

void ManifestReader::Impl::convert_yaml(const YamlChunk& chunk) {
  SourceDocument base = make(chunk.first_line);
  if (chunk.too_large) {
    base.status = rejected(base.where + ": YAML document larger than " +
                           std::to_string(kMaxDocumentBytes) +
                           " bytes; a manifest must fit in one ledger entry (64 KiB)");
    queued.push_back(std::move(base));
    return;
  }
  auto docs = yaml_to_json(chunk.text);
  if (!docs) {
    // yaml_to_json numbers lines within the chunk; report them as lines of the source.
    std::string msg = docs.error().message();
    if (msg.rfind("line ", 0) == 0) {
      size_t end = msg.find(',');
      auto n = parse_u64(msg.substr(5, end - 5));
      if (n) msg = "line " + std::to_string(*n + chunk.text_line - 1) + msg.substr(end);
    }
    base.status = rejected(name + ": document " + std::to_string(base.index) + ": " + msg);
    queued.push_back(std::move(base));
    return;
  }
  // The chunk has content, so even a null is a document (refused as a manifest), never
  // dropped.
  bool first = true;
  for (auto& doc : *docs) {
    std::vector<Json> items;
    if (doc.is_array()) items = std::move(doc.as_array());
    else items.push_back(std::move(doc));
    for (auto& item : items) {
      SourceDocument d = first ? std::move(base) : make(chunk.first_line);
      first = false;
      d.value = std::move(item);
      queued.push_back(std::move(d));
    }
  }
  if (first) --count;  // an empty list: base was never used
}

// Whether the next line starts another document of the YAML stream (a '---' or a directive
// once this one has begun, or the next entry of a top-level sequence) or ends this one ('...',
// consumed). Looks at the line without consuming it.
bool ManifestReader::Impl::ends_yaml_chunk(const YamlChunk& chunk) {
  int c = chars->peek();
  if (c != '-' && c != '.' && c != '%' && c != 0xEF) return false;
  std::string_view head = chars->peek_line(8);
  if (starts_with(head, kBom)) head.remove_prefix(kBom.size());
  if (is_marker(head, "---") || starts_with(head, "%") ||
      (chunk.sequence && is_sequence_entry(head))) {
    return true;
  }
  if (!is_marker(head, "...")) return false;
  chars->skip_line();
  return true;
}

Result<bool> ManifestReader::Impl::next_yaml(SourceDocument& out) {
  while (queued.empty()) {
    YamlChunk chunk;
    chunk.text_line = chars->line();
    if (yaml_head) {
      chunk = std::move(*yaml_head);
      yaml_head.reset();
    }
    std::string line;
    bool truncated;
    bool ended = false;
    while (!(chunk.started && ends_yaml_chunk(chunk))) {
      uint64_t at = chars->line();
      if (!chars->read_line(line, kMaxDocumentBytes, truncated)) {
        ended = true;
        break;
      }
      // YAML allows a byte order mark at the start of every document of a stream.
      if (!chunk.content && starts_with(line, kBom)) line.erase(0, kBom.size());
      if (!chunk.content) {
        chunk.first_line = at;
        chunk.content = is_content_line(line);
        chunk.sequence = chunk.content && is_sequence_entry(line);
      }
      chunk.started = chunk.started || chunk.content || is_marker(line, "---");
      if (truncated || chunk.text.size() + line.size() + 1 > kMaxDocumentBytes) {
        chunk.too_large = true;
      }
      if (!chunk.too_large) {
        chunk.text += line;
        chunk.text.push_back('\n');
      }
    }
    if (chunk.content) convert_yaml(chunk);
    if (ended && queued.empty()) return false;
  }
  out = std::move(queued.front());
  queued.pop_front();
  return true;
}

Result<bool> ManifestReader::Impl::next_raw(SourceDocument& out) {
  Result<bool> more = false;
  // libstdc++'s filebuf, under a stream given to from_stream(), throws when the file cannot be
  // read (EIO, EISDIR).
  try {
    more = read_next(out);
  } catch (const std::ios_base::failure& e) {
    return io_error("cannot read " + name + ": " + e.what());
  }
  // A failed read ended the input early: what was read last is not a document of it.
  if (file != nullptr && !file->error().is_ok()) return file->error();
  return more;
}

Result<bool> ManifestReader::Impl::read_next(SourceDocument& out) {
  if (!started) EVL_RETURN_IF_ERROR(detect());
  if (in != nullptr && in->bad()) return io_error("cannot read " + name);
  if (!queued.empty()) {
    out = std::move(queued.front());
    queued.pop_front();
    return true;
  }
  switch (form) {
    case InputForm::kEmpty: return false;
    case InputForm::kJsonArray: return next_array(out);
    case InputForm::kJsonLines: return next_line(out);
    case InputForm::kJson: return next_value(out);
    case InputForm::kYaml: return next_yaml(out);
  }
  return false;
}

ManifestReader::ManifestReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ManifestReader::~ManifestReader() = default;

Result<std::unique_ptr<ManifestReader>> ManifestReader::open(const std::string& path) {
  // A catalog may be of any length: the reader holds one document at a time, each of at most
  // kMaxDocumentBytes, so there is no limit on the whole.
  auto file = FileStream::open(path, ReadLimit{"catalog", std::numeric_limits<size_t>::max()});
  if (!file) return file.error();
  auto impl = std::make_unique<Impl>();
  impl->name = path == "-" ? "standard input" : path;
  impl->file = std::make_unique<FileStreamBuf>(std::move(file.value()));
  impl->chars = std::make_unique<CharSource>(impl->file.get());
  return std::unique_ptr<ManifestReader>(new ManifestReader(std::move(impl)));
}

std::unique_ptr<ManifestReader> ManifestReader::from_stream(std::istream& in, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->in = &in;
  impl->chars = std::make_unique<CharSource>(in.rdbuf());
  return std::unique_ptr<ManifestReader>(new ManifestReader(std::move(impl)));
}

Result<bool> ManifestReader::next(SourceDocument& out) {
  auto more = impl_->next_raw(out);
  if (more && *more) out.parse();
  return more;
}

Result<bool> ManifestReader::read_batch(std::vector<SourceDocument>& out, size_t max,
                                        ThreadPool* pool) {
  size_t first = out.size();
  Result<bool> more = true;
  while (out.size() - first < max) {
    SourceDocument doc;
    more = impl_->next_raw(doc);
    if (!more || !*more) break;
    out.push_back(std::move(doc));
  }
  auto parse = [&](size_t i) { out[first + i].parse(); };
  if (pool != nullptr) pool->parallel_for(out.size() - first, parse);
  else for (size_t i = 0; i < out.size() - first; ++i) parse(i);
  return more;
}

const std::string& ManifestReader::name() const { return impl_->name; }
InputForm ManifestReader::form() const { return impl_->form; }
uint64_t ManifestReader::bytes_read() const { return impl_->chars->bytes(); }
std::optional<uint64_t> ManifestReader::size() const {
  if (impl_->file == nullptr) return std::nullopt;
  return impl_->file->file().size();
}

}  // namespace evl::cli
