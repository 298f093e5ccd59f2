#include "tools/import_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "events/bytes.h"
#include "events/utf8.h"
#include "ledger/thread_pool.h"

namespace evl::cli {
namespace {

constexpr int kEof = -1;

bool is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Bytes of one input, with a pushback buffer, counting lines and bytes consumed.
class CharSource {
 public:
  explicit CharSource(std::istream& in) : buf_(in.rdbuf()) {}

  int peek() {
    if (pending_pos_ < pending_.size()) return static_cast<uint8_t>(pending_[pending_pos_]);
    if (buf_ == nullptr) return kEof;
    auto c = buf_->sgetc();
    return c == std::char_traits<char>::eof() ? kEof : static_cast<uint8_t>(c);
  }
  int get() {
    int c;
    if (pending_pos_ < pending_.size()) {
      c = static_cast<uint8_t>(pending_[pending_pos_++]);
    } else {
      if (buf_ == nullptr) return kEof;
      auto r = buf_->sbumpc();
      if (r == std::char_traits<char>::eof()) return kEof;
      c = static_cast<uint8_t>(r);
    }
    ++bytes_;
    if (c == '\n') ++line_;
    return c;
  }
  // Puts text that was just read back in front of the input.
  void unread(const std::string& text) {
    pending_ = text + pending_.substr(pending_pos_);
    pending_pos_ = 0;
    bytes_ -= text.size();
    for (char c : text) line_ -= c == '\n';
  }
  void skip_space() {
    while (is_space(peek())) get();
  }
  // Reads up to and including '\n' (not stored); false at the end of input with nothing read.
  // Bytes beyond `max` are consumed but not stored; `truncated` tells.
  bool read_line(std::string& out, size_t max, bool& truncated) {
    out.clear();
    truncated = false;
    int c = get();
    if (c == kEof) return false;
    for (; c != kEof && c != '\n'; c = get()) {
      if (out.size() < max) out.push_back(static_cast<char>(c));
      else truncated = true;
    }
    return true;
  }
  uint64_t line() const { return line_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::streambuf* buf_;
  std::string pending_;
  size_t pending_pos_ = 0;
  uint64_t line_ = 1;
  uint64_t bytes_ = 0;
};

// ---- JSON framing: finds where one value ends without parsing it -------------------------

struct Framing {
  int depth = 0;
  bool in_string = false;
  bool escape = false;

  // Feeds one byte; true when a container or string value just closed at depth 0.
  bool feed(int c) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') {
        in_string = false;
        return depth == 0;
      }
      return false;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
      return depth == 0;
    }
    return false;
  }
};

// True when `line` holds exactly one complete JSON container (a JSONL line).
bool is_whole_value(const std::string& line) {
  Framing f;
  size_t i = 0;
  while (i < line.size() && is_space(static_cast<uint8_t>(line[i]))) ++i;
  for (; i < line.size(); ++i) {
    if (f.feed(static_cast<uint8_t>(line[i]))) {
      for (++i; i < line.size(); ++i) {
        if (!is_space(static_cast<uint8_t>(line[i]))) return false;
      }
      return true;
    }
  }
  return false;
}

// Whether a line is a document marker "---"/"..." (followed by nothing, a space or a tab).
bool is_marker(const std::string& line, const char* marker) {
  if (line.compare(0, 3, marker) != 0) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r';
}

// Whether a line holds YAML content (not blank, not a comment, not a bare marker/directive).
bool is_content_line(const std::string& line) {
  size_t start = 0;
  if (is_marker(line, "---")) start = 3;
  else if (is_marker(line, "...") || (!line.empty() && line[0] == '%')) return false;
  for (size_t i = start; i < line.size(); ++i) {
    char c = line[i];
    if (c == '#') return false;
    if (!is_space(static_cast<uint8_t>(c))) return true;
  }
  return false;
}

// The text of one '---' document of a YAML stream.
struct YamlChunk {
  std::string text;
  uint64_t text_line = 0;   // the source line of text's first line
  uint64_t first_line = 0;  // the source line of the first line with content
  bool content = false;
  bool sequence = false;  // the first content line is a top-level "- " entry
  bool too_large = false;
};

// Whether a line is an entry of a top-level block sequence ("- ..." at column 0).
bool is_sequence_entry(const std::string& line) {
  if (line.empty() || line[0] != '-' || is_marker(line, "---")) return false;
  return line.size() == 1 || line[1] == ' ' || line[1] == '\t' || line[1] == '\r';
}

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

struct ManifestReader::Impl {
  std::string name;
  std::unique_ptr<std::istream> owned;
  std::istream* in = nullptr;
  std::optional<uint64_t> size;
  std::unique_ptr<CharSource> chars;
  InputForm form = InputForm::kEmpty;
  bool started = false;
  bool array_closed = false;
  uint64_t count = 0;
  std::vector<SourceDocument> queued;  // YAML documents expanded from one '---' document

  Result<bool> next_raw(SourceDocument& out);
  void detect();
  SourceDocument make(uint64_t line) {
    SourceDocument d;
    d.index = ++count;
    d.line = line;
    d.where = name + " line " + std::to_string(line);
    return d;
  }
  void scan_value(SourceDocument& doc);
  Result<bool> next_array(SourceDocument& out);
  Result<bool> next_line(SourceDocument& out);
  Result<bool> next_value(SourceDocument& out);
  Result<bool> next_yaml(SourceDocument& out);
  void convert_yaml(const YamlChunk& chunk);
};

void ManifestReader::Impl::detect() {
  started = true;
  if (chars->peek() == 0xEF) {  // a UTF-8 byte order mark, which RFC 8259 lets a reader skip
    std::string bom;
    for (int i = 0; i < 3 && chars->peek() != kEof; ++i) bom.push_back(static_cast<char>(chars->get()));
    if (bom != "\xEF\xBB\xBF") chars->unread(bom);
  }
  chars->skip_space();
  int c = chars->peek();
  if (c == kEof) {
    form = InputForm::kEmpty;
  } else if (c == '[') {
    form = InputForm::kJsonArray;
    chars->get();
  } else if (c == '{') {
    std::string first;
    bool truncated;
    uint64_t before = chars->bytes();
    chars->read_line(first, kMaxDocumentBytes, truncated);
    bool whole = !truncated && is_whole_value(first);
    bool newline = chars->bytes() - before > first.size();
    chars->unread(newline && !truncated ? first + "\n" : first);
    // A first line past the document limit cannot be pushed back whole: read it as a JSONL
    // line, which then fails on its own without taking the rest of the input with it.
    form = whole || truncated ? InputForm::kJsonLines : InputForm::kJson;
  } else {
    form = InputForm::kYaml;
  }
}

// Reads one JSON value's text into doc.json_text (the input is at its first byte).
void ManifestReader::Impl::scan_value(SourceDocument& doc) {
  Framing f;
  bool too_large = false;
  int first = chars->peek();
  bool container = first == '{' || first == '[' || first == '"';
  while (true) {
    int c = chars->peek();
    if (c == kEof) break;
    if (!container && !f.in_string && f.depth == 0 &&
        (is_space(c) || c == ',' || c == ']' || c == '}') && !doc.json_text.empty()) {
      break;
    }
    chars->get();
    if (doc.json_text.size() < kMaxDocumentBytes) doc.json_text.push_back(static_cast<char>(c));
    else too_large = true;
    if (f.feed(c) && container) break;
  }
  if (f.depth > 0 || f.in_string) {
    doc.status = rejected(doc.where + ": document " + std::to_string(doc.index) +
                          " ends with the input, inside a JSON value; complete it");
  } else if (too_large) {
    doc.status = rejected(doc.where + ": document " + std::to_string(doc.index) +
                          " is larger than " + std::to_string(kMaxDocumentBytes) +
                          " bytes; a manifest must fit in one ledger entry (64 KiB)");
  }
  if (!doc.status.is_ok()) doc.json_text.clear();
}

Result<bool> ManifestReader::Impl::next_array(SourceDocument& out) {
  if (array_closed) {
    chars->skip_space();
    if (chars->peek() == kEof) return false;
    return rejected(name + " line " + std::to_string(chars->line()) +
                    ": text after the closing ']' of the JSON array; remove it");
  }
  chars->skip_space();
  if (count > 0) {
    int c = chars->get();
    if (c == ']') {
      array_closed = true;
      return next_array(out);
    }
    if (c != ',') {
      return rejected(name + " line " + std::to_string(chars->line()) +
                      (c == kEof ? std::string(": the JSON array is not closed")
                                 : ": expected ',' or ']' after element " + std::to_string(count)) +
                      "; the elements before it were read, the rest of this input is skipped");
    }
    chars->skip_space();
  } else if (chars->peek() == ']') {
    chars->get();
    array_closed = true;
    return next_array(out);
  }
  out = make(chars->line());
  if (chars->peek() == ']' || chars->peek() == ',') {
    out.status = rejected(out.where + ": element " + std::to_string(out.index) +
                          " of the JSON array is empty (a stray ','); remove it");
    return true;
  }
  if (chars->peek() == kEof) return rejected(name + ": the JSON array is not closed");
  scan_value(out);
  return true;
}

Result<bool> ManifestReader::Impl::next_line(SourceDocument& out) {
  std::string line;
  bool truncated;
  while (true) {
    uint64_t at = chars->line();
    if (!chars->read_line(line, kMaxDocumentBytes, truncated)) return false;
    bool blank = true;
    for (char c : line) blank = blank && is_space(static_cast<uint8_t>(c));
    if (blank) continue;
    out = make(at);
    if (truncated) {
      out.status = rejected(out.where + ": line longer than " +
                            std::to_string(kMaxDocumentBytes) +
                            " bytes; a manifest must fit in one ledger entry (64 KiB)");
    } else {
      out.json_text = std::move(line);
    }
    return true;
  }
}

Result<bool> ManifestReader::Impl::next_value(SourceDocument& out) {
  chars->skip_space();
  if (chars->peek() == kEof) return false;
  out = make(chars->line());
  scan_value(out);
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
  bool first = true;
  for (auto& doc : *docs) {
    if (doc.is_null()) continue;  // an empty document
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
  if (first) --count;  // nothing but empty documents: base was never used
}

Result<bool> ManifestReader::Impl::next_yaml(SourceDocument& out) {
  while (queued.empty()) {
    YamlChunk chunk;
    chunk.text_line = chars->line();
    std::string line;
    bool truncated;
    bool ended = false;
    while (true) {
      uint64_t at = chars->line();
      int c = chars->peek();
      if (chunk.content && (c == '-' || c == '.' || c == '%')) {
        // A new document starts at a '---' or directive line; '...' ends this one. Each
        // entry of a top-level sequence is read as a document of its own, so that a long
        // YAML list of manifests streams like a JSON array.
        if (!chars->read_line(line, kMaxDocumentBytes, truncated)) break;
        if (is_marker(line, "---") || line[0] == '%' ||
            (chunk.sequence && is_sequence_entry(line))) {
          chars->unread(line + "\n");
          break;
        }
        if (is_marker(line, "...")) break;
      } else if (!chars->read_line(line, kMaxDocumentBytes, truncated)) {
        ended = true;
        break;
      }
      if (!chunk.content) {
        chunk.first_line = at;
        chunk.content = is_content_line(line);
        chunk.sequence = chunk.content && is_sequence_entry(line);
      }
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
  queued.erase(queued.begin());
  return true;
}

Result<bool> ManifestReader::Impl::next_raw(SourceDocument& out) {
  // libstdc++'s filebuf throws when the file cannot be read (EIO, EISDIR).
  try {
    if (!started) detect();
    if (in != nullptr && in->bad()) return io_error("cannot read " + name);
    switch (form) {
      case InputForm::kEmpty: return false;
      case InputForm::kJsonArray: return next_array(out);
      case InputForm::kJsonLines: return next_line(out);
      case InputForm::kJson: return next_value(out);
      case InputForm::kYaml: return next_yaml(out);
    }
  } catch (const std::ios_base::failure& e) {
    return io_error("cannot read " + name + ": " + e.what());
  }
  return false;
}

ManifestReader::ManifestReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ManifestReader::~ManifestReader() = default;

Result<std::unique_ptr<ManifestReader>> ManifestReader::open(const std::string& path) {
  if (path == "-") return from_stream(std::cin, "standard input");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return io_error(path + " is a directory; name the catalog files in it");
  }
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) return io_error("cannot open " + path + " for reading");
  std::optional<uint64_t> size;
  file->seekg(0, std::ios::end);
  if (auto end = file->tellg(); end >= 0) size = static_cast<uint64_t>(end);
  file->seekg(0, std::ios::beg);
  auto reader = from_stream(*file, path);
  reader->impl_->owned = std::move(file);
  reader->impl_->size = size;
  return reader;
}

std::unique_ptr<ManifestReader> ManifestReader::from_stream(std::istream& in, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->in = &in;
  impl->chars = std::make_unique<CharSource>(in);
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
std::optional<uint64_t> ManifestReader::size() const { return impl_->size; }

}  // namespace evl::cli
