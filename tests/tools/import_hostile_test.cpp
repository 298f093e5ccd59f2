// Hostile catalogs end to end: whatever surrounds them (lines past the size limit, truncated
// documents, garbage, blank lines, CRLF, a byte order mark, no final newline), every valid
// document lands in a real ledger on disk and every bad one is refused at its own lines, in
// JSON lines, JSON arrays and YAML streams (a seeded property test); and `evledger import`
// reports them so, without echoing control characters.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>

#include "events/jcs.h"
#include "events/manifest_check.h"
#include "events/utf8.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/test_support.h"
#include "tools/commands.h"
#include "tools/gen/random.h"
#include "tools/gen/sol_catalog.h"
#include "tools/importer.h"

namespace evl::cli {
namespace {

enum class Form { kJsonLines, kJsonArray, kYaml };
enum class Kind { kValid, kOversized, kTruncated, kGarbage };

// One item of a generated catalog.
struct Item {
  Kind kind = Kind::kValid;
  std::vector<std::string> lines;  // without their line ends
  const Json* manifest = nullptr;  // kValid: what must land
  uint64_t first_line = 0, last_line = 0, doc_line = 0;  // in the file; doc_line: its content
};

// ---- writing a manifest as pretty JSON and as block YAML ---------------------------------

bool is_empty_container(const Json& v) {
  return (v.is_object() && v.as_object().empty()) || (v.is_array() && v.as_array().empty());
}

void write_pretty(std::string& out, const Json& v, size_t indent) {
  if (!v.is_object() && !v.is_array()) return jcs_append(out, v);
  if (is_empty_container(v)) return out.append(v.is_object() ? "{}" : "[]"), void();
  out += v.is_object() ? "{\n" : "[\n";
  size_t n = v.is_object() ? v.as_object().size() : v.as_array().size();
  for (size_t i = 0; i < n; ++i) {
    out.append(indent + 2, ' ');
    if (v.is_object()) {
      jcs_append_string(out, v.as_object()[i].first);
      out += ": ";
    }
    write_pretty(out, v.is_object() ? v.as_object()[i].second : v.as_array()[i], indent + 2);
    out += i + 1 < n ? ",\n" : "\n";
  }
  out.append(indent, ' ');
  out += v.is_object() ? "}" : "]";
}

// Writes the node that follows a "key:" or "-" already written; scalars as JSON, which YAML's
// core schema reads back as the same values (strings double-quoted, with JSON's escapes).
void write_yaml(std::string& out, const Json& v, size_t indent) {
  if (is_empty_container(v) || (!v.is_object() && !v.is_array())) {
    out += ' ';
    jcs_append(out, v);
    out += '\n';
    return;
  }
  out += '\n';
  if (v.is_object()) {
    for (const auto& [key, member] : v.as_object()) {
      out.append(indent, ' ');
      jcs_append_string(out, key);
      out += ':';
      write_yaml(out, member, indent + 2);
    }
  } else {
    for (const auto& item : v.as_array()) {
      out.append(indent, ' ');
      out += '-';
      write_yaml(out, item, indent + 2);
    }
  }
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    lines.emplace_back(text.substr(start, nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

// The first byte of a line that is not a blank (' ' for a blank line).
char first_content(const std::string& line) {
  size_t at = line.find_first_not_of(' ');
  return at == std::string::npos ? ' ' : line[at];
}

// ---- bad items -------------------------------------------------------------------------------

// A line of garbage: never blank, never a YAML comment, directive or marker at its start (a
// YAML stream has no document there, and a JSON lines file would turn YAML); any bytes after.
std::string garbage(gen::Rng& rng) {
  static const std::string kFirst = "abxyz019{}[]\",:\\/*'&!|>?@`=~^$()<;";
  static const std::vector<std::string> kAny = {
      "a", "Z", "7", "{", "}", "[", "]", "\"", "'", ",", ":", "\\", "/", "*", "#", "-", ".", "%",
      " ", "\t", "\r", std::string(1, '\0'), "\x1b", "\xFF", "\xEF\xBB\xBF", "\xC3\xA9", "//",
      "/*", "*/", "---", "- ", ": ", "\\u", "\"\\"};
  std::string g(1, kFirst[rng.below(kFirst.size())]);
  for (size_t n = rng.below(30); n > 0; --n) g += kAny[rng.below(kAny.size())];
  return g;
}

// A line past the document limit: a JSON object (or YAML mapping) whose padding is salted with
// garbage, or (`raw`) that padding alone.
std::string oversized(gen::Rng& rng, Form form, bool raw) {
  // Just past the limit, or past what the form detector looks ahead (2 MiB) as well.
  std::string pad(rng.chance(0.3) ? 3 * kMaxDocumentBytes : kMaxDocumentBytes + rng.below(64),
                  'a');
  for (int i = 0; i < 8; ++i) {
    std::string g = garbage(rng);
    size_t at = rng.below(pad.size());
    for (size_t k = 0; k < g.size() && at + k < pad.size(); ++k) pad[at + k] = g[k];
  }
  if (raw) return pad;
  if (form == Form::kYaml) {
    for (char& c : pad) c = c == '"' || c == '\\' || static_cast<uint8_t>(c) < 0x20 ? 'a' : c;
    return "\"pad\": \"" + pad + "\"";
  }
  return "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"pad\":\"" + pad + "\"}";
}

// The text of a manifest cut short: anywhere for JSON (a proper prefix of an object is never
// a value); for YAML inside a double-quoted scalar, so that what is left is not valid YAML.
std::string truncated(gen::Rng& rng, const std::string& text, Form form) {
  if (form != Form::kYaml) return text.substr(0, 1 + rng.below(text.size() - 1));
  std::vector<size_t> inside;
  bool in_string = false, escape = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string) inside.push_back(i);
    if (escape) escape = false;
    else if (in_string && text[i] == '\\') escape = true;
    else if (text[i] == '"') in_string = !in_string;
  }
  return text.substr(0, inside[rng.below(inside.size())]);
}

// ---- one generated catalog ---------------------------------------------------------------

struct Catalog {
  Form form = Form::kJsonLines;
  std::vector<Item> items;
  std::string text;
};

const std::vector<Json>& manifest_pool() {
  static const std::vector<Json> pool = [] {
    std::vector<Json> all;
    gen::generate_sol_catalog({500, 11}, [&](const Json& m) { all.push_back(m); });
    return all;
  }();
  return pool;
}

Catalog make_catalog(gen::Rng& rng, size_t& next_manifest) {
  const auto& pool = manifest_pool();
  Catalog c;
  c.form = static_cast<Form>(rng.below(3));
  const std::string eol = rng.chance(0.3) ? "\r\n" : "\n";
  const size_t indent = c.form == Form::kJsonArray && rng.chance(0.5) ? 2 : 0;
  const size_t yaml_indent = c.form == Form::kYaml && rng.chance(0.3) ? 1 + rng.below(4) : 0;
  bool had_oversized = false;
  bool raw_first = false;  // the first item is an oversized line without JSON
  for (size_t n = 1 + rng.below(14), i = 0; i < n; ++i) {
    Item item;
    // The first line tells a catalog's form: it is past the limit in a quarter of them.
    uint64_t r = i == 0 && rng.chance(0.25) ? 99 : rng.below(100);
    item.kind = r < 50 ? Kind::kValid : r < 70 ? Kind::kGarbage : r < 90 ? Kind::kTruncated
                                                                        : Kind::kOversized;
    // One line past the limit per catalog keeps the test fast; the first line of a JSON lines
    // file is what tells its form, and a garbage one is tested on its own.
    if (item.kind == Kind::kOversized && had_oversized) item.kind = Kind::kGarbage;
    if (item.kind == Kind::kGarbage && c.form == Form::kJsonLines && i == 0) {
      item.kind = Kind::kTruncated;
    }
    // A JSON lines file whose first line is long garbage is told by the lines after it.
    if (c.form == Form::kJsonLines && i == 1 && raw_first) item.kind = Kind::kValid;
    had_oversized = had_oversized || item.kind == Kind::kOversized;
    const Json& m = item.kind == Kind::kValid ? pool.at(next_manifest++) : rng.pick(pool);
    std::string text;
    bool pretty = c.form == Form::kJsonArray && rng.chance(0.3);
    if (c.form == Form::kYaml) {
      write_yaml(text, m, 0);
      text.erase(0, 1);
      text.pop_back();
    } else if (pretty) {
      write_pretty(text, m, indent);
    } else {
      jcs_append(text, m);
    }
    switch (item.kind) {
      case Kind::kValid: item.manifest = &m; break;
      case Kind::kTruncated: text = truncated(rng, text, c.form); break;
      case Kind::kGarbage:
        // An empty YAML list ("[]", "[ ]") is a list of no manifests: not a bad document.
        do text = garbage(rng);
        while (c.form == Form::kYaml && text[0] == '[' &&
               text.find_first_not_of(" \t\r", 1) != std::string::npos &&
               text[text.find_first_not_of(" \t\r", 1)] == ']');
        break;
      case Kind::kOversized: {
        const bool raw = rng.chance(0.5);
        raw_first = raw && i == 0;
        text = oversized(rng, c.form, raw);
        break;
      }
    }
    item.lines = split_lines(text);
    item.lines.front().insert(0, indent, ' ');
    if (c.form == Form::kYaml) {
      // A YAML document may be indented as a whole.
      if (yaml_indent > 0) {
        for (auto& line : item.lines) line.insert(0, yaml_indent, ' ');
      }
      item.lines.insert(item.lines.begin(), "---");
    }
    c.items.push_back(std::move(item));
  }
  // Lay the items out: blank lines between some, ',' after each element of an array.
  std::vector<std::string> lines;
  if (c.form == Form::kJsonArray) lines.push_back("[");
  for (size_t i = 0; i < c.items.size(); ++i) {
    Item& item = c.items[i];
    if (rng.chance(0.15)) lines.push_back(rng.chance(0.5) ? "" : "  ");
    if (c.form == Form::kJsonArray && i + 1 < c.items.size()) item.lines.back() += ",";
    // A YAML stream need not start with '---' (unless its first document starts like JSON).
    if (c.form == Form::kYaml && i == 0 && rng.chance(0.5) &&
        std::string_view("{[/").find(first_content(item.lines[1])) == std::string_view::npos) {
      item.lines.erase(item.lines.begin());
    }
    item.first_line = lines.size() + 1;
    item.doc_line = item.first_line + (item.lines.front() == "---" ? 1 : 0);
    lines.insert(lines.end(), item.lines.begin(), item.lines.end());
    item.last_line = lines.size();
  }
  if (c.form == Form::kJsonArray) lines.push_back("]");
  if (rng.chance(0.2)) c.text = "\xEF\xBB\xBF";
  for (size_t i = 0; i < lines.size(); ++i) {
    c.text += lines[i];
    if (i + 1 < lines.size() || rng.chance(0.5)) c.text += eol;
  }
  return c;
}

// The line an outcome's label names: "document 4 (catalog line 30; ...)".
uint64_t outcome_line(const DocumentOutcome& o) {
  size_t at = o.label.find("(catalog line ");
  REQUIRE(at != std::string::npos);
  return std::stoull(o.label.substr(at + 14));
}

ManifestText landed(const Ledger& ledger, uint64_t index) {
  auto entry = ledger.entry(index);
  REQUIRE(entry.has_value());
  auto checked = check_entry(*entry);
  REQUIRE(checked.has_value());
  if (const auto* obs = std::get_if<Observation>(&checked->body.payload)) return obs->manifest;
  const auto* manifest = std::get_if<ManifestEvent>(&checked->body.payload);
  REQUIRE(manifest != nullptr);
  return manifest->manifest;
}

const char* form_name(Form form) {
  return form == Form::kJsonLines ? "json lines" : form == Form::kJsonArray ? "json array" : "yaml";
}

// A ledger on disk with the cast's keys granted (the importer's scope holds sol-execbench, the
// generated catalog's source).
std::unique_ptr<Ledger> open_ledger(const test::TempDir& dir, const test::Cast& cast) {
  OpenOptions options;
  options.create = true;
  auto ledger = test::open_test_ledger(dir, options);
  test::append_all(*ledger, cast.prologue_entries());
  return ledger;
}

// The seed in the environment variable `name`, or a fresh one from the system.
uint64_t env_seed(const char* name) {
  if (const char* value = std::getenv(name)) return std::strtoull(value, nullptr, 10);
  std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

TEST_CASE("import accounts for the documents after a first line past the size limit",
          "[import][ledger]") {
  test::TempDir dir;
  test::Cast cast;
  auto ledger = open_ledger(dir, cast);
  const std::string big = "{\"x\": \"" + std::string(5 * kMaxDocumentBytes, 'a') + "\"}";
  std::istringstream in(big + "\n" + jcs_serialize(manifest_pool()[0]) + "\n" +
                        jcs_serialize(manifest_pool()[1]) + "\n");
  auto reader = ManifestReader::from_stream(in, "catalog");
  LocalLog log(*ledger);
  Importer importer(log, cast.importer);
  std::vector<DocumentOutcome> outcomes;
  ImportCallbacks callbacks;
  callbacks.on_document = [&](const DocumentOutcome& o) { outcomes.push_back(o); };
  REQUIRE(importer.import(*reader, callbacks).is_ok());
  CHECK(importer.totals().documents == 3);
  CHECK(importer.totals().added == 2);
  CHECK(importer.totals().rejected == 1);
  REQUIRE(outcomes.size() == 3);
  CHECK(outcomes[0].message ==
        "catalog line 1: line longer than 1048576 bytes; a manifest must fit in one ledger "
        "entry (64 KiB) [read]");
  CHECK_THAT(outcomes[1].label, Catch::StartsWith("document 2 (catalog line 2; "));
  CHECK(outcomes[1].status == ImportStatus::kAdded);
  CHECK_THAT(outcomes[2].label, Catch::StartsWith("document 3 (catalog line 3; "));
  CHECK(outcomes[2].status == ImportStatus::kAdded);
  CHECK(ledger->size() == 5 + 2);
}

TEST_CASE("import accounts for every document of a catalog whatever its neighbours look like",
          "[import][ledger][property]") {
  test::TempDir dir;
  test::Cast cast;
  auto opened = open_ledger(dir, cast);
  Ledger& ledger = *opened;

  // A new seed each run, shown with any failure; EVL_IMPORT_SEED=N repeats that run.
  const uint64_t seed = env_seed("EVL_IMPORT_SEED");
  gen::Rng rng(seed);
  size_t next_manifest = 0;
  for (int round = 0; round < 150; ++round) {
    Catalog c = make_catalog(rng, next_manifest);
    INFO("EVL_IMPORT_SEED=" << seed << ", case " << round << ", " << form_name(c.form) << ":\n"
                 << visible_text(c.text.size() < 4000 ? c.text : c.text.substr(0, 4000)));
    std::istringstream in(c.text);
    auto reader = ManifestReader::from_stream(in, "catalog");
    ImportOptions options;
    options.batch = 1 + rng.below(6);
    options.threads = 2;
    LocalLog log(ledger);
    Importer importer(log, cast.importer, options);
    std::vector<DocumentOutcome> outcomes;
    ImportCallbacks callbacks;
    callbacks.on_document = [&](const DocumentOutcome& o) { outcomes.push_back(o); };
    const uint64_t size_before = ledger.size();
    Status status = importer.import(*reader, callbacks);
    REQUIRE(status.is_ok());

    // The counts add up, and only the valid documents were added.
    const ImportTotals& t = importer.totals();
    size_t valid = 0;
    for (const auto& item : c.items) valid += item.kind == Kind::kValid;
    REQUIRE(t.documents == outcomes.size());
    CHECK(t.added + t.present + t.rejected == t.documents);
    CHECK(t.added == valid);
    CHECK(t.present == 0);
    CHECK(ledger.size() == size_before + valid);

    // Each outcome starts on a line of an item; a valid item has exactly its own, which landed.
    std::vector<size_t> rejections(c.items.size(), 0);
    std::vector<size_t> valid_outcomes(c.items.size(), 0);
    for (const auto& o : outcomes) {
      uint64_t line = outcome_line(o);
      INFO(o.label << ": " << visible_text(o.message));
      auto it = std::find_if(c.items.begin(), c.items.end(), [&](const Item& item) {
        return line >= item.first_line && line <= item.last_line;
      });
      REQUIRE(it != c.items.end());
      if (it->kind == Kind::kValid) {
        REQUIRE(o.status == ImportStatus::kAdded);
        CHECK(line == it->doc_line);
        CHECK(landed(ledger, o.entry_index) == check_manifest(*it->manifest, 1).text);
        ++valid_outcomes[it - c.items.begin()];
      } else {
        CHECK(o.status == ImportStatus::kRejected);
        ++rejections[it - c.items.begin()];
      }
    }
    for (size_t i = 0; i < c.items.size(); ++i) {
      if (c.items[i].kind == Kind::kValid) CHECK(valid_outcomes[i] == 1);
    }
    // Nothing bad goes unreported: every run of bad items has a rejection of its own; in a
    // file read as JSON lines, every bad line has exactly one.
    for (size_t i = 0; i < c.items.size();) {
      if (c.items[i].kind == Kind::kValid) {
        ++i;
        continue;
      }
      size_t end = i, in_run = 0;
      for (; end < c.items.size() && c.items[end].kind != Kind::kValid; ++end) {
        in_run += rejections[end];
        if (reader->form() == InputForm::kJsonLines) CHECK(rejections[end] == 1);
      }
      INFO("bad items from line " << c.items[i].first_line);
      CHECK(in_run >= 1);
      i = end;
    }
  }
  CHECK(next_manifest > 400);  // enough valid documents went through to matter
}

// What a command printed, and its exit status.
struct Captured {
  int status = 0;
  std::string out, err;
};

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `command` with standard output and error sent to files in `dir`.
Captured capture(const std::string& dir, const std::function<int()>& command) {
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = ::dup(STDOUT_FILENO), saved_err = ::dup(STDERR_FILENO);
  int out = ::open((dir + "/stdout").c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  int err = ::open((dir + "/stderr").c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  Captured c;
  c.status = command();
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  for (int fd : {saved_out, saved_err, out, err}) ::close(fd);
  c.out = file_text(dir + "/stdout");
  c.err = file_text(dir + "/stderr");
  return c;
}

TEST_CASE("evledger import counts every document and shows no control character it read",
          "[import][cli]") {
  test::TempDir dir;
  const std::string d = dir.str(), ledger = d + "/L", key = d + "/alice.key";
  auto quiet = [&](const std::vector<std::string>& argv, int (*command)(const std::vector<std::string>&)) {
    return capture(d, [&] { return command(argv); }).status;
  };
  REQUIRE(quiet({"--ledger", ledger, "--origin", "test.example.org/hostile"}, cmd_init) == 0);
  REQUIRE(quiet({"new", "alice@sol-execbench", "--out", key}, cmd_key) == 0);
  REQUIRE(quiet({"grant", "--ledger", ledger, "--key", key + ".vkey", "--role", "importer",
                 "--scope", "sol-execbench", "--signer", ledger + "/keys/admin.key"},
                cmd_key) == 0);
  const std::string catalog = d + "/catalog.jsonl";
  std::ofstream(catalog, std::ios::binary)
      << "{\"x\": \"" << std::string(kMaxDocumentBytes + 1, 'a') << "\"}\n"
      << jcs_serialize(manifest_pool()[0]) << "\n"
      << R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ServingRun",)"
      << R"("metadata":{"name":"s\u001b[2J\u202e"},"spec":{}})" << "\n"
      << jcs_serialize(manifest_pool()[1]);

  Captured c = capture(d, [&] {
    return cmd_import({"--ledger", ledger, "--key", key, "--json", catalog});
  });
  INFO(visible_text(c.err));
  CHECK(c.status == 1);
  CHECK_THAT(c.out, Catch::Contains(R"("added":2,"complete":true,"documents":4,)"));
  CHECK_THAT(c.err, Catch::Contains("catalog.jsonl line 1: line longer than 1048576 bytes"));
  CHECK_THAT(c.err, Catch::Contains("ServingRun s\\x1b[2J\\u202e)"));
  // Each line as it is shown: no control character, nothing that is not UTF-8.
  std::istringstream lines(c.err);
  for (std::string line; std::getline(lines, line);) CHECK(visible_text(line) == line);
}

}  // namespace
}  // namespace evl::cli
