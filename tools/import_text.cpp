#include "tools/internal/import_text.h"

namespace evl::cli::import_text {

int CharSource::peek() {
  if (ahead_pos_ < ahead_.size()) return static_cast<uint8_t>(ahead_[ahead_pos_]);
  auto c = buf_->sgetc();
  return c == std::char_traits<char>::eof() ? kEof : static_cast<uint8_t>(c);
}

int CharSource::get() {
  int c;
  if (ahead_pos_ < ahead_.size()) {
    c = static_cast<uint8_t>(ahead_[ahead_pos_++]);
  } else {
    auto r = buf_->sbumpc();
    if (r == std::char_traits<char>::eof()) return kEof;
    c = static_cast<uint8_t>(r);
  }
  bytes_.store(bytes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (c == '\n') {
    ++line_;
    column_ = indent_ = 0;
  } else {
    if (column_ == indent_ && (c == ' ' || c == '\t')) ++indent_;
    ++column_;
  }
  return c;
}

std::string_view CharSource::look_ahead(size_t max, size_t lines, bool* at_end) {
  if (ahead_pos_ > 0) {
    ahead_.erase(0, ahead_pos_);
    ahead_pos_ = 0;
  }
  size_t found = 0, end = 0;
  for (; end < ahead_.size() && found < lines && end < max; ++end) found += ahead_[end] == '\n';
  bool eof = false;
  while (found < lines && end < max) {
    auto r = buf_->sbumpc();
    if (r == std::char_traits<char>::eof()) {
      eof = true;
      break;
    }
    ahead_.push_back(static_cast<char>(r));
    ++end;
    found += r == '\n';
  }
  if (at_end != nullptr) *at_end = eof;
  return std::string_view(ahead_).substr(0, end);
}

bool CharSource::line_longer_than(size_t max) {
  std::string_view line = peek_line(max + 2);
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  // As read_line: a final '\r' beyond the limit is a line end's, not the line's.
  if (line.size() == max + 1 && line.back() == '\r') line.remove_suffix(1);
  return line.size() > max;
}

bool CharSource::read_line(std::string& out, size_t max, bool& truncated) {
  out.clear();
  truncated = false;
  int c = get();
  if (c == kEof) return false;
  for (; c != kEof && c != '\n'; c = get()) {
    if (out.size() <= max) out.push_back(static_cast<char>(c));
    else truncated = true;
  }
  if (out.size() > max && (truncated || out.back() != '\r')) {
    out.resize(max);
    truncated = true;
  }
  return true;
}

void CharSource::skip_blank_lines() {
  while (true) {
    bool at_end = false;
    std::string_view line = look_ahead(4096, 1, &at_end);
    if (line.empty() || line.find_first_not_of(" \t\r\n") != std::string_view::npos) return;
    if (line.back() != '\n' && !at_end) return;
    for (size_t i = 0; i < line.size(); ++i) get();
  }
}

int CharSource::content_byte() {
  std::string_view line = peek_line(4096);
  size_t at = line.find_first_not_of(" \t");
  return at == std::string_view::npos ? (line.size() < 4096 ? kEof : ' ')
                                      : static_cast<uint8_t>(line[at]);
}

void CharSource::skip_line() {
  for (int c = get(); c != kEof && c != '\n'; c = get()) {
  }
}

bool Framing::feed(int c) {
  if (line_comment) {
    line_comment = c != '\n';
    return false;
  }
  if (block_comment) {
    block_comment = !(star && c == '/');
    star = c == '*';
    return false;
  }
  if (in_string) {
    if (escape) escape = false;
    else if (c == '\\') escape = true;
    else if (c == '"') {
      in_string = false;
      return depth == 0;
    }
    return false;
  }
  if (slash) {
    slash = false;
    if (c == '/' || c == '*') {
      (c == '/' ? line_comment : block_comment) = true;
      star = false;
      return false;
    }
  }
  if (c == '/') slash = true;
  else if (c == '"') in_string = true;
  else if (c == '{' || c == '[') ++depth;
  else if (c == '}' || c == ']') {
    if (depth > 0) --depth;
    return depth == 0;
  }
  return false;
}

bool is_whole_value(std::string_view line) {
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

bool is_marker(std::string_view line, std::string_view marker) {
  if (!starts_with(line, marker)) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
         line[3] == '\n';
}

bool is_content_line(std::string_view line) {
  size_t start = 0;
  if (is_marker(line, "---")) start = 3;
  else if (is_marker(line, "...") || starts_with(line, "%")) return false;
  for (size_t i = start; i < line.size(); ++i) {
    char c = line[i];
    if (c == '#') return false;
    if (!is_space(static_cast<uint8_t>(c))) return true;
  }
  return false;
}

bool is_sequence_entry(std::string_view line) {
  if (!starts_with(line, "-") || is_marker(line, "---")) return false;
  return line.size() == 1 || line[1] == ' ' || line[1] == '\t' || line[1] == '\r' ||
         line[1] == '\n';
}

bool looks_like_json_lines(std::string_view ahead, bool at_end, bool array_start) {
  size_t objects = 0, lines = 0;
  while (!ahead.empty()) {
    size_t nl = ahead.find('\n');
    if (nl == std::string_view::npos && !at_end) break;  // cut by the lookahead
    std::string_view line = ahead.substr(0, nl);
    ahead.remove_prefix(nl == std::string_view::npos ? ahead.size() : nl + 1);
    if (is_marker(line, "---") || is_marker(line, "...") || starts_with(line, "%")) return false;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++lines;
    objects += starts_with(line, "{") && is_whole_value(line);
  }
  return array_start ? 2 * objects > lines : objects > 0;
}

}  // namespace evl::cli::import_text
