// tools/internal/import_text.h — the byte-level pieces of the catalog reader
// (tools/import_reader.cpp): a character source that counts lines and looks ahead without
// consuming, the framing that finds where a JSON value ends without parsing it, and the
// classifiers of lines that tell a catalog's form and split a YAML stream.
//
// Thread safety: a CharSource is used by one thread at a time; the rest are pure functions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <streambuf>
#include <string>
#include <string_view>

namespace evl::cli::import_text {

inline constexpr int kEof = -1;
inline constexpr std::string_view kBom = "\xEF\xBB\xBF";

inline bool is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Bytes of one input with a lookahead, counting lines, bytes and each line's indentation.
// Nothing read is ever put back: a reader that must see what comes looks ahead instead, so
// that the counts always describe exactly the bytes consumed. Reads through `buf` (which must
// outlive it); an exception from it (libstdc++'s filebuf on EIO) reaches the caller.
class CharSource {
 public:
  explicit CharSource(std::streambuf* buf) : buf_(buf) {}

  int peek();
  int get();
  // The coming bytes, not consumed: up to `max` of them, stopping after the `lines`-th '\n'
  // or at the end of the input (`at_end` tells). Valid until the next call of any member.
  std::string_view look_ahead(size_t max, size_t lines, bool* at_end = nullptr);
  // The rest of the current line (with its '\n'), at most `max` bytes, not consumed.
  std::string_view peek_line(size_t max) { return look_ahead(max, 1); }
  // Whether the rest of the current line holds more than `max` bytes before its line end
  // ("\n" or "\r\n"): what read_line would call truncated. Looks at most max + 2 bytes ahead.
  bool line_longer_than(size_t max);

  void skip_space() {
    while (is_space(peek())) get();
  }
  // Consumes the lines ahead that hold only blanks (a blank run longer than 4 KiB stays).
  void skip_blank_lines();
  // The first byte of the rest of the line that is not ' ' or '\t' (kEof at the end of the
  // input, '\n' or '\r' for a blank line), not consumed: a YAML document keeps the
  // indentation of its first line.
  int content_byte();
  void skip_blanks() {
    while (peek() == ' ' || peek() == '\t') get();
  }
  // Consumes the rest of the line, up to and including '\n' (not stored); false at the end of
  // the input with nothing read. Bytes beyond `max` are consumed but not stored; `truncated`
  // tells. The '\r' of a CRLF line end is stored but does not count against `max`.
  bool read_line(std::string& out, size_t max, bool& truncated);
  void skip_line();

  uint64_t line() const { return line_; }
  // May be read from another thread while this one reads (import's progress line).
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // The blanks that start the current line, and whether the next byte is the first one after
  // them (the line's first content).
  size_t indent() const { return indent_; }
  bool at_line_content() const { return column_ == indent_; }

 private:
  std::streambuf* buf_;
  std::string ahead_;
  size_t ahead_pos_ = 0;
  uint64_t line_ = 1;
  // Atomic for bytes(); written by the reading thread alone, so a relaxed load and store
  // (no locked increment on the per-byte path). ThreadSanitizer found the race.
  std::atomic<uint64_t> bytes_{0};
  size_t column_ = 0;
  size_t indent_ = 0;
};

// Where one JSON value ends, byte by byte, without parsing it.
struct Framing {
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  // Comments are not JSON, but a quote or bracket inside one must not move the framing: the
  // parser then refuses the document and names the comment.
  bool slash = false;  // the last byte was a '/' outside a string
  bool line_comment = false;
  bool block_comment = false;
  bool star = false;  // in a block comment, the last byte was '*'

  // Feeds one byte; true when a container or string value just closed at depth 0.
  bool feed(int c);
};

// True when `line` holds exactly one complete JSON container (a JSONL line).
bool is_whole_value(std::string_view line);

// Whether a line is a document marker "---"/"..." (followed by nothing, a space or a tab).
bool is_marker(std::string_view line, std::string_view marker);
// Whether a line holds YAML content (not blank, not a comment, not a bare marker/directive).
bool is_content_line(std::string_view line);
// Whether a line is an entry of a top-level block sequence ("- ..." at column 0).
bool is_sequence_entry(std::string_view line);

// Whether an input is JSON lines although its first line is not a JSON object: a broken first
// line must not turn a JSONL file into YAML. `ahead` holds the lines after the first one. Any
// of them that is a whole JSON object at column 0 says so (a YAML document never has one
// without a '---' before it), unless a line is a YAML marker or directive; after a first line
// '[', more than half of them must be (the last element of a JSON array written one element
// per line is one too). `at_end`: `ahead` reaches the end of the input.
bool looks_like_json_lines(std::string_view ahead, bool at_end, bool array_start);

}  // namespace evl::cli::import_text
