// The catalog reader on every input form, and `evledger import`'s pipeline against a real
// ledger in a temporary directory.
#include "tools/importer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "events/jcs.h"
#include "events/manifest_check.h"
#include "events/utf8.h"
#include "ledger/thread_pool.h"
#include "tests/support/fixtures.h"
#include "tests/support/test_support.h"
#include "tools/gen/sol_catalog.h"
#include "tools/yaml_json.h"

namespace evl::cli {
namespace {

// A small manifest of our own: a SoftwareProject named `name`.
std::string project(const std::string& name) {
  return R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"SoftwareProject","metadata":)"
         R"({"name":")" + name + R"("},"spec":{"name":")" + name + R"("}})";
}

Json parse(std::string_view text) {
  auto parsed = parse_json(text);
  INFO(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

// Reads every document of `text`; the stream is named "input".
std::vector<SourceDocument> read_all(const std::string& text, InputForm* form = nullptr,
                                     Status* end = nullptr) {
  std::istringstream in(text);
  auto reader = ManifestReader::from_stream(in, "input");
  std::vector<SourceDocument> docs;
  while (true) {
    SourceDocument doc;
    auto more = reader->next(doc);
    if (!more) {
      if (end != nullptr) *end = more.error();
      break;
    }
    if (!*more) break;
    docs.push_back(std::move(doc));
  }
  if (form != nullptr) *form = reader->form();
  return docs;
}

std::string metadata_name(const SourceDocument& doc) {
  REQUIRE(doc.value);
  return doc.value->find("metadata")->find("name")->as_string();
}

TEST_CASE("the reader takes one JSON object", "[import][reader]") {
  InputForm form;
  auto docs = read_all("\n  {\"apiVersion\": \"kernelindex.dev/v1alpha1\",\n \"kind\": \"X\"}\n",
                       &form);
  CHECK(form == InputForm::kJson);
  REQUIRE(docs.size() == 1);
  CHECK(docs[0].status.is_ok());
  CHECK(docs[0].line == 2);
  CHECK(docs[0].where == "input line 2");
  CHECK(docs[0].value->find("kind")->as_string() == "X");
}

TEST_CASE("the reader takes a JSON array of manifests, element by element", "[import][reader]") {
  InputForm form;
  auto docs = read_all("[\n" + project("a") + ",\n  " + project("b") + "\n, " + project("c") +
                           "]\n",
                       &form);
  CHECK(form == InputForm::kJsonArray);
  REQUIRE(docs.size() == 3);
  CHECK(metadata_name(docs[0]) == "a");
  CHECK(metadata_name(docs[2]) == "c");
  CHECK(docs[1].index == 2);
  CHECK(docs[1].line == 3);
}

TEST_CASE("a bad element of a JSON array is reported alone and the rest is read",
          "[import][reader]") {
  auto docs = read_all("[" + project("a") + ", {\"kind\": NaN}, , " + project("d") + "]");
  REQUIRE(docs.size() == 4);
  CHECK(docs[0].status.is_ok());
  CHECK_THAT(docs[1].status.message(), Catch::Contains("document 2 is not valid JSON"));
  CHECK_THAT(docs[2].status.message(), Catch::Contains("element 3 of the JSON array is empty"));
  CHECK(metadata_name(docs[3]) == "d");
}

TEST_CASE("a JSON array with a broken separator refuses the rest of that line and reads on",
          "[import][reader]") {
  Status end;
  auto docs = read_all("[" + project("a") + " " + project("b") + ",\n" + project("c") + "]",
                       nullptr, &end);
  REQUIRE(docs.size() == 3);
  CHECK(metadata_name(docs[0]) == "a");
  CHECK_THAT(docs[1].status.message(),
             Catch::StartsWith("input line 1: document 2 is the rest of line 1, where ',' or ']' "
                               "should follow document 1 but '{' does"));
  CHECK(metadata_name(docs[2]) == "c");
  CHECK(docs[2].line == 2);
  CHECK(end.is_ok());
  Status unclosed;
  CHECK(read_all("[" + project("a") + ",", nullptr, &unclosed).size() == 1);
  CHECK_THAT(unclosed.message(), Catch::Contains("the JSON array is not closed"));
}

TEST_CASE("a JSONL stream with a bad line in the middle reads every other line",
          "[import][reader]") {
  std::string text = project("a") + "\n" + project("b") + "\n" + "{\"kind\": \"broken\",\n" +
                     "\n" + project("d") + "\r\n" + project("e");
  InputForm form;
  auto docs = read_all(text, &form);
  CHECK(form == InputForm::kJsonLines);
  REQUIRE(docs.size() == 5);
  CHECK(metadata_name(docs[0]) == "a");
  CHECK(metadata_name(docs[1]) == "b");
  CHECK_FALSE(docs[2].status.is_ok());
  CHECK_THAT(docs[2].status.message(),
             Catch::StartsWith("input line 3: document 3 is not valid JSON: line 1, column 19"));
  CHECK(docs[3].line == 5);
  CHECK(metadata_name(docs[3]) == "d");
  CHECK(metadata_name(docs[4]) == "e");
}

TEST_CASE("pretty-printed JSON values one after another are separate documents",
          "[import][reader]") {
  InputForm form;
  auto docs = read_all("{\n  \"a\": [1, \"}\"]\n}\n{\n  \"b\": {}\n}\n", &form);
  CHECK(form == InputForm::kJson);
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].value->find("a")->as_array().size() == 2);
  CHECK(docs[1].line == 4);
}

TEST_CASE("an empty input, or one of blanks, has no documents", "[import][reader]") {
  InputForm form;
  CHECK(read_all("", &form).empty());
  CHECK(form == InputForm::kEmpty);
  CHECK(read_all(" \n\n\t", &form).empty());
}

TEST_CASE("a document past the size limit is refused and the next one read",
          "[import][reader]") {
  std::string big = "{\"x\": \"" + std::string(kMaxDocumentBytes, 'a') + "\"}";
  auto docs = read_all(project("a") + "\n" + big + "\n" + project("c") + "\n");
  REQUIRE(docs.size() == 3);
  CHECK_THAT(docs[1].status.message(), Catch::Contains("line longer than 1048576 bytes"));
  CHECK(metadata_name(docs[2]) == "c");
}

// A catalog in YAML, written for this test: comments, a directive, flow and block styles,
// quoted numbers, a date-like string, a block scalar, and a list of two manifests.
constexpr const char* kYamlCatalog = R"(# a hand-written catalog
%YAML 1.2
---
apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata: {name: yaml-b200, title: "B200, from YAML"}
spec:
  hardware:
    vendor: nvidia
    product: NVIDIA B200
    architecture: sm_100
    memoryBytes: 206158430208
  software:
    driver: "580.00"
    libraries: {evaluation_stack: v1.0}
  settings: {clocksLocked: true, powerLimitWatts: 1000.5}
---
# the second document holds two manifests
- apiVersion: kernelindex.dev/v1alpha1
  kind: SoftwareProject
  metadata:
    name: yaml-project
    description: |
      Two lines
      of text.
  spec: {name: YAML Project, repository: 'https://git.example.org/y'}
- apiVersion: kernelindex.dev/v1alpha1
  kind: BenchmarkRun
  metadata: {name: yaml-run}
  spec:
    observedAt: 2026-08-01T12:00:00Z
    version: 1.2.0
...
)";

TEST_CASE("the reader converts YAML documents, and a YAML list is a list of manifests",
          "[import][reader][yaml]") {
  test::TempDir dir;
  std::string path = dir.str() + "/catalog.txt";  // no .yaml: the form is told by content
  std::ofstream(path) << kYamlCatalog;
  auto reader = ManifestReader::open(path);
  REQUIRE(reader.has_value());
  std::vector<SourceDocument> docs;
  SourceDocument doc;
  while (*(*reader)->next(doc)) docs.push_back(std::move(doc));
  CHECK((*reader)->form() == InputForm::kYaml);
  REQUIRE(docs.size() == 3);
  for (const auto& d : docs) CHECK(d.status.is_ok());
  CHECK(docs[0].line == 4);
  CHECK(docs[0].where == path + " line 4");
  CHECK(jcs_serialize(*docs[0].value) ==
        jcs_serialize(parse(R"({"apiVersion":"kernelindex.dev/v1alpha1",
          "kind":"ExecutionEnvironment","metadata":{"name":"yaml-b200","title":"B200, from YAML"},
          "spec":{"hardware":{"vendor":"nvidia","product":"NVIDIA B200","architecture":"sm_100",
          "memoryBytes":206158430208},"software":{"driver":"580.00",
          "libraries":{"evaluation_stack":"v1.0"}},
          "settings":{"clocksLocked":true,"powerLimitWatts":1000.5}}})")));
  CHECK(check_manifest(*docs[0].value, docs[0].index, docs[0].where).ok());
  CHECK(docs[1].index == 2);
  CHECK(docs[2].index == 3);
  CHECK(docs[1].value->find("metadata")->find("description")->as_string() ==
        "Two lines\nof text.\n");
  const Json& run_spec = *docs[2].value->find("spec");
  CHECK(run_spec.find("observedAt")->as_string() == "2026-08-01T12:00:00Z");
  CHECK(run_spec.find("version")->as_string() == "1.2.0");
}

TEST_CASE("a long YAML list of manifests is read entry by entry, past the document limit",
          "[import][reader][yaml]") {
  std::string text = "# a list\n";
  const int n = 6000;
  for (int i = 0; i < n; ++i) {
    text += "- apiVersion: kernelindex.dev/v1alpha1\n  kind: SoftwareProject\n"
            "  metadata: {name: p" + std::to_string(i) + "}\n  spec:\n    name: |\n"
            "      - not an entry: a block scalar at indent 6\n#" + std::string(120, '=') + "\n";
  }
  REQUIRE(text.size() > kMaxDocumentBytes);
  auto docs = read_all(text);
  REQUIRE(docs.size() == n);
  for (int i = 0; i < n; i += 999) {
    INFO(i);
    REQUIRE(docs[i].status.is_ok());
    CHECK(metadata_name(docs[i]) == "p" + std::to_string(i));
    CHECK(docs[i].line == static_cast<uint64_t>(2 + 7 * i));
    CHECK(docs[i].value->find("spec")->find("name")->as_string() ==
          "- not an entry: a block scalar at indent 6\n");
  }
}

TEST_CASE("YAML 1.2 core schema scalars become JSON types, quoted ones stay strings",
          "[import][reader][yaml]") {
  auto docs = yaml_to_json(
      "int: 42\nneg: -7\nplus: +12\nhex: 0x1F\noct: 0o17\nfloat: 1.5e3\ndot: .5\n"
      "t: true\nf: FALSE\nn1: ~\nn2: null\nn3:\nq: \"42\"\ns: '1.5'\nyes: yes\nno: off\n"
      "date: 2026-08-01\nver: 1.2.0\nstr: !!str 12\nforced: !!float 3\n1024: key\n");
  REQUIRE(docs.has_value());
  REQUIRE(docs->size() == 1);
  CHECK(jcs_serialize(docs->front()) ==
        R"({"1024":"key","date":"2026-08-01","dot":0.5,"f":false,"float":1500,"forced":3,)"
        R"("hex":31,"int":42,"n1":null,"n2":null,"n3":null,"neg":-7,"no":"off","oct":15,)"
        R"("plus":12,"q":"42","s":"1.5","str":"12","t":true,"ver":"1.2.0","yes":"yes"})");
}

TEST_CASE("YAML without a JSON meaning, and invalid YAML, are refused with their line",
          "[import][reader][yaml]") {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"a: 1\nb:\n  c: 1\n  c: 2\n", "line 4, column 3: duplicate key \"c\""},
      {"a: &x 1\nb: *x\n", "anchor (&x) has no JSON meaning"},
      {"a: .inf\n", ".inf (infinity or NaN) has no JSON meaning"},
      {"a: -.Inf\n", "has no JSON meaning"},
      {"a: .nan\n", "has no JSON meaning"},
      {"a: 1e400\n", "overflows a double"},
      {"a: 0x20000000000001\n", "beyond 2^53-1"},
      {"<<: {a: 1}\n", "'<<' merge keys have no JSON meaning"},
      {"a: !!binary aGVsbG8=\n", "tag tag:yaml.org,2002:binary has no JSON meaning"},
      {"a: !custom x\n", "has no JSON meaning"},
      {"? [a, b]\n: 1\n", "a mapping key is a collection"},
      {": 1\n", "a mapping key is null"},
      {"a: !!int abc\n", "is not a number"},
      {"a: \"\\uFDD0\"\n", "noncharacter"},
      {"a: [1, 2\nb: 3\n", "not valid YAML"},
      {"a:\n  - 1\n b: 2\n", "not valid YAML"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    auto docs = yaml_to_json(c.yaml);
    REQUIRE_FALSE(docs.has_value());
    CHECK_THAT(docs.error().message(), Catch::Contains(c.message));
    CHECK_THAT(docs.error().message(), Catch::StartsWith("line "));
  }
}

TEST_CASE("a bad YAML document is reported with its source line and the next one is read",
          "[import][reader][yaml]") {
  std::string text = "---\nkind: A\n---\n# bad\nkind: B\nkind: C\n---\nkind: D\n";
  InputForm form;
  auto docs = read_all(text, &form);
  CHECK(form == InputForm::kYaml);
  REQUIRE(docs.size() == 3);
  CHECK(docs[0].value->find("kind")->as_string() == "A");
  CHECK_THAT(docs[1].status.message(),
             Catch::Contains("input: document 2: line 6, column 1: duplicate key \"kind\""));
  CHECK(docs[2].value->find("kind")->as_string() == "D");
  CHECK(docs[2].line == 8);
}

// ---- hostile inputs: every document keeps its place and its line --------------------------

TEST_CASE("a JSONL line past the size limit is refused alone with its own line, also the first",
          "[import][reader]") {
  const std::string big = "{\"x\": \"" + std::string(3 * kMaxDocumentBytes, 'a') + "\"}";
  const std::string fits = "{\"x\":\"" + std::string(kMaxDocumentBytes - 8, 'a') + "\"}";
  REQUIRE(fits.size() == kMaxDocumentBytes);
  for (const std::string end : {"\n", "\r\n"}) {
    INFO("line end " << visible_text(end));
    // The last line has no line end.
    std::string text = big + end + project("b") + end + fits + end + big + end + project("e");
    InputForm form;
    auto docs = read_all(text, &form);
    CHECK(form == InputForm::kJsonLines);
    REQUIRE(docs.size() == 5);
    for (size_t i = 0; i < docs.size(); ++i) CHECK(docs[i].line == i + 1);
    CHECK(docs[0].status.message() ==
          "input line 1: line longer than 1048576 bytes; a manifest must fit in one ledger "
          "entry (64 KiB)");
    CHECK(metadata_name(docs[1]) == "b");
    CHECK(docs[2].status.is_ok());  // exactly the limit: read (and later refused for its size)
    CHECK_THAT(docs[3].status.message(), Catch::StartsWith("input line 4: line longer than"));
    CHECK(metadata_name(docs[4]) == "e");
  }
}

TEST_CASE("a first line past the size limit that is not JSON costs JSON lines only itself",
          "[import][reader]") {
  // Longer than the detector's lookahead too (2 MiB): the lines after it still tell the form.
  const std::string garbage(3 * kMaxDocumentBytes, 'g');
  InputForm form;
  auto docs = read_all(garbage + "\n" + project("a") + "\n" + project("b") + "\n", &form);
  CHECK(form == InputForm::kJsonLines);
  REQUIRE(docs.size() == 3);
  CHECK(docs[0].status.message() ==
        "input line 1: line longer than 1048576 bytes; a manifest must fit in one ledger "
        "entry (64 KiB)");
  CHECK(metadata_name(docs[1]) == "a");
  CHECK(docs[2].line == 3);
  CHECK(metadata_name(docs[2]) == "b");

  // In YAML the line begins a document too large, which ends at the next '---'.
  docs = read_all("k: " + garbage + "\nmore: 1\n---\nkind: B\n", &form);
  CHECK(form == InputForm::kYaml);
  REQUIRE(docs.size() == 2);
  CHECK_THAT(docs[0].status.message(),
             Catch::StartsWith("input line 1: YAML document larger than 1048576 bytes"));
  CHECK(docs[1].line == 4);
  CHECK(docs[1].value->find("kind")->as_string() == "B");
  // ... or at the next entry of a top-level sequence it starts.
  docs = read_all("- " + garbage + "\n- kind: B\n", &form);
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].line == 2);
  CHECK(docs[1].value->find("kind")->as_string() == "B");
}

TEST_CASE("a JSON lines file whose first line is broken is still read as JSON lines",
          "[import][reader]") {
  for (const std::string first : {"garbage: not a manifest", "[{\"kind\": ", "# a header",
                                  "\"apiVersion"}) {
    INFO(first);
    InputForm form;
    auto docs = read_all(first + "\n" + project("a") + "\n\n" + project("b") + "\n", &form);
    CHECK(form == InputForm::kJsonLines);
    REQUIRE(docs.size() == 3);
    CHECK_THAT(docs[0].status.message(), Catch::StartsWith("input line 1: document 1 is not "
                                                           "valid JSON"));
    CHECK(metadata_name(docs[1]) == "a");
    CHECK(docs[2].line == 4);
    CHECK(metadata_name(docs[2]) == "b");
  }
  // A byte order mark at the start of a later line (`cat a.jsonl b.jsonl`) is skipped.
  auto docs = read_all(project("a") + "\n\xEF\xBB\xBF" + project("b") + "\n");
  REQUIRE(docs.size() == 2);
  CHECK(metadata_name(docs[1]) == "b");
}

TEST_CASE("a JSON comment is refused as itself and the JSON around it is read",
          "[import][reader]") {
  InputForm form;
  auto docs = read_all("// the catalog\n" + project("a") + "\n" + project("b") + "\n", &form);
  CHECK(form == InputForm::kJsonLines);
  REQUIRE(docs.size() == 3);
  CHECK(docs[0].status.message() ==
        "input line 1: document 1 is a // comment; JSON has no comments: remove it (in a YAML "
        "catalog, comments start with '#')");
  CHECK(metadata_name(docs[1]) == "a");
  CHECK(metadata_name(docs[2]) == "b");

  docs = read_all("[\n/* first */ " + project("a") + ", // \"a quote\n" + project("b") +
                      "\n/* not closed\n]\n",
                  &form);
  CHECK(form == InputForm::kJsonArray);
  REQUIRE(docs.size() == 5);
  CHECK_THAT(docs[0].status.message(), Catch::Contains("document 1 is a /* comment"));
  CHECK(metadata_name(docs[1]) == "a");
  CHECK_THAT(docs[2].status.message(), Catch::StartsWith("input line 2: document 3 is a //"));
  CHECK(metadata_name(docs[3]) == "b");
  CHECK_THAT(docs[4].status.message(), Catch::StartsWith("input line 4: document 5 is a /*"));

  docs = read_all("{\n  \"a\": 1 // one\n}\n/* two */\n{\n  \"b\": 2\n}\n", &form);
  CHECK(form == InputForm::kJson);
  REQUIRE(docs.size() == 3);
  CHECK_THAT(docs[0].status.message(), Catch::Contains("remove the comment (JSON has none)"));
  CHECK_THAT(docs[1].status.message(), Catch::StartsWith("input line 4: document 2 is a /*"));
  CHECK(docs[2].value->find("b") != nullptr);
}

TEST_CASE("a JSON array element cut off costs only itself and the array reads on",
          "[import][reader]") {
  const std::string a = project("a"), b = project("b"), c = project("c");
  Status end;
  // Cut in a string, cut between members (the next line starts another element), cut before
  // the closing ']'.
  auto docs = read_all("[\n" + a.substr(0, 30) + "\n" + b + ",\n" + a.substr(0, 66) + ",\n" + c +
                           ",\n" + a.substr(0, 66) + "\n]\n",
                       nullptr, &end);
  CHECK(end.is_ok());
  REQUIRE(docs.size() == 5);
  CHECK(docs[0].status.message() ==
        "input line 2: document 1 is cut off: a string is still open at the end of line 2 (a "
        "JSON string cannot span lines); complete it");
  CHECK(metadata_name(docs[1]) == "b");
  CHECK(docs[2].status.message() ==
        "input line 4: document 3 is not closed before line 5, where another value starts; "
        "complete it");
  CHECK(metadata_name(docs[3]) == "c");
  CHECK(docs[3].line == 5);
  CHECK_THAT(docs[4].status.message(),
             Catch::EndsWith("is not closed before line 7, where the JSON array closes; "
                             "complete it"));

  // A stray ']' or ',' is refused where it stands; arrays may follow one another.
  docs = read_all("[\n" + a + ",\n],\n" + b + "]\n[" + c + "]\n", nullptr, &end);
  CHECK(end.is_ok());
  REQUIRE(docs.size() == 4);
  CHECK(metadata_name(docs[0]) == "a");
  CHECK(docs[1].status.message() ==
        "input line 3: document 2 is a ']' inside the JSON array: more follows on line 3; "
        "remove it");
  CHECK(metadata_name(docs[2]) == "b");
  CHECK(metadata_name(docs[3]) == "c");

  // JSON values one after another: a value cut off in a string ends with its line.
  docs = read_all("{\n  \"a\": \"x\n}\n" + b + "\n");
  REQUIRE(docs.size() == 3);
  CHECK_THAT(docs[0].status.message(), Catch::Contains("a string is still open at the end"));
  CHECK(metadata_name(docs[2]) == "b");
}

TEST_CASE("a UTF-16 catalog is refused for its encoding", "[import][reader]") {
  const std::string utf16 = std::string("\xFF\xFE{\0}\0\n\0", 8);
  Status end;
  CHECK(read_all(utf16, nullptr, &end).empty());
  CHECK(end.message() ==
        "input: the text starts with the byte order mark of UTF-16 or UTF-32 (\\xff\\xfe); a "
        "catalog is UTF-8: convert it, e.g. with iconv -f UTF-16 -t UTF-8");
}

TEST_CASE("YAML documents keep their own lines without a final newline, with CRLF and BOMs",
          "[import][reader][yaml]") {
  auto docs = read_all("- kind: A\n- kind: B");
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].line == 2);
  CHECK(docs[1].value->find("kind")->as_string() == "B");

  docs = read_all("---\r\nkind: A\r\n---\r\n\r\nkind: B\r\n---");
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].line == 2);
  CHECK(docs[1].line == 5);
  CHECK(docs[1].value->find("kind")->as_string() == "B");

  // YAML allows a byte order mark before each document of a stream (`cat a.yaml b.yaml`).
  docs = read_all("\xEF\xBB\xBF---\nkind: A\n\xEF\xBB\xBF---\nkind: B\n");
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].line == 4);
  CHECK(docs[1].value->find("kind")->as_string() == "B");

  // A directive after a document starts the next one.
  docs = read_all("kind: A\n%YAML 1.2\n---\nkind: B\n");
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].value->find("kind")->as_string() == "B");

  // A first document indented as a whole keeps its indentation.
  docs = read_all("\n  kind: A\n  metadata:\n    name: a\n---\nkind: B\n");
  REQUIRE(docs.size() == 2);
  REQUIRE(docs[0].status.is_ok());
  CHECK(docs[0].line == 2);
  CHECK(docs[0].value->find("kind")->as_string() == "A");
}

TEST_CASE("a catalog file is read only when it is a regular file, a pipe or standard input",
          "[import][reader]") {
  test::TempDir dir;
  const std::string fifo = (dir.path() / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::filesystem::create_symlink("/dev/zero", dir.path() / "zero.jsonl");
  struct Case {
    std::string path, message;
  } cases[] = {
      {fifo, "catalog " + fifo + " is a FIFO (named pipe), not a regular file"},
      {(dir.path() / "zero.jsonl").string(), "is a character device (through a symbolic link)"},
      {dir.str(), "catalog " + dir.str() + " is a directory, not a regular file"},
      {(dir.path() / "none").string(), "No such file or directory"},
  };
  for (const auto& c : cases) {
    INFO(c.path);
    auto reader = ManifestReader::open(c.path);  // never waits for a FIFO's writer
    REQUIRE_FALSE(reader);
    CHECK(reader.error().code() == Code::kIo);
    CHECK_THAT(reader.error().message(), Catch::Contains(c.message));
  }
  // A shell's <(...) is an anonymous pipe: read as a stream.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string text = project("a") + "\n";
  REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  auto reader = ManifestReader::open("/proc/self/fd/" + std::to_string(fds[0]));
  REQUIRE_OK(reader);
  SourceDocument doc;
  auto more = (*reader)->next(doc);
  ::close(fds[0]);
  REQUIRE_OK(more);
  CHECK(metadata_name(doc) == "a");
}

// ---- YAML that yaml-cpp mishandles: its own messages, never raw bytes --------------------

// Whether a message is printable: valid UTF-8 without control characters.
bool printable(const std::string& message) {
  for (char c : message) {
    if (static_cast<uint8_t>(c) < 0x20 || c == 0x7F) return false;
  }
  return visible_text(message) == message;
}

TEST_CASE("YAML nested deeper than the limit is refused for its nesting, not as a bad file",
          "[import][reader][yaml]") {
  std::string block;
  std::string maps;
  for (int i = 0; i < 600; ++i) {
    block += std::string(i, ' ') + "k:\n";
    maps += "{a: ";
  }
  maps += "1" + std::string(600, '}') + "\n";
  for (const std::string& text : {"a: " + std::string(600, '[') + std::string(600, ']') + "\n",
                                  maps, block}) {
    auto docs = yaml_to_json(text);
    REQUIRE_FALSE(docs.has_value());
    CHECK_THAT(docs.error().message(),
               Catch::EndsWith("the YAML nests deeper than 64 levels (a manifest needs far "
                               "fewer); flatten it"));
  }
}

TEST_CASE("messages about YAML show raw bytes and control characters escaped, never raw",
          "[import][reader][yaml]") {
  struct Case {
    std::string yaml;
    const char* message;
  };
  const Case cases[] = {
      {"kind: \xFF\xFEx\n", "line 1, column 7: byte \\xff is not UTF-8; re-encode the text as UTF-8"},
      {"kind: a\x1B[31mred\n", "line 1, column 8: control character \\x1b is not allowed"},
      {std::string("a: 1\n\0\n", 7), "line 2, column 1: a NUL byte (\\x00) is not allowed"},
      {"a: \xC2\x9B\n", "control character \\u009b is not allowed"},
      {"\"\\e[31m\": 1\n\"\\e[31m\": 2\n", "duplicate key \"\\x1b[31m\""},
      {"a: &\xE2\x80\xAEx 1\n", "an anchor (&\\u202ex) has no JSON meaning"},
      {"a: !!null \"\\t\\r\"\n", "!!null \"\\t\\r\" is not null"},
  };
  for (const auto& c : cases) {
    INFO(visible_text(c.yaml));
    auto docs = yaml_to_json(c.yaml);
    REQUIRE_FALSE(docs.has_value());
    CHECK_THAT(docs.error().message(), Catch::Contains(c.message));
    CHECK(printable(docs.error().message()));
  }
}

TEST_CASE("a YAML document cut off inside a quoted string is refused, also at the end",
          "[import][reader][yaml]") {
  auto docs = read_all("---\nkind: A\nname: \"abc\n---\nkind: B\nname: 'de\n");
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].status.message() ==
        "input: document 1: line 3, column 1: not valid YAML: the text ends inside a quoted "
        "string or a flow collection; close it");
  CHECK_THAT(docs[1].status.message(), Catch::StartsWith("input: document 2: line 6"));
}

TEST_CASE("a YAML document that is null or a stray ',' is refused, not dropped or hung on",
          "[import][reader][yaml]") {
  auto docs = read_all("---\n~\n---\n,\n---\n- a\n,\n---\nkind: B\n");
  REQUIRE(docs.size() == 4);
  CHECK(docs[0].status.is_ok());
  CHECK(docs[0].value->is_null());  // check_manifest refuses it as "the document is null"
  CHECK_THAT(docs[1].status.message(),
             Catch::Contains("line 4, column 1: not valid YAML: a document cannot begin here"));
  CHECK_THAT(docs[2].status.message(), Catch::Contains("line 7, column 1"));
  CHECK(docs[3].value->find("kind")->as_string() == "B");
}

TEST_CASE("a stray ',' outside a flow collection is refused, not looped on",
          "[import][reader][yaml]") {
  for (const std::string text : {",\n", "- a\n,\n", "---\n~\n---\n, x\n"}) {
    INFO(text);
    auto docs = yaml_to_json(text);  // yaml-cpp 0.7 alone starts a document there forever
    REQUIRE_FALSE(docs.has_value());
    CHECK_THAT(docs.error().message(),
               Catch::Contains("not valid YAML: a document cannot begin here"));
  }
}

TEST_CASE("read_batch parses a batch on a pool and keeps the input order", "[import][reader]") {
  std::string text;
  for (int i = 0; i < 250; ++i) text += project("p" + std::to_string(i)) + "\n";
  std::istringstream in(text);
  auto reader = ManifestReader::from_stream(in, "input");
  ThreadPool pool(2);
  std::vector<SourceDocument> batch;
  auto more = reader->read_batch(batch, 100, &pool);
  REQUIRE(more.has_value());
  CHECK(*more);
  REQUIRE(batch.size() == 100);
  for (size_t i = 0; i < batch.size(); ++i) CHECK(metadata_name(batch[i]) == "p" + std::to_string(i));
  CHECK(reader->bytes_read() > 0);
  batch.clear();
  CHECK(*reader->read_batch(batch, 1000, &pool) == false);
  CHECK(batch.size() == 150);
}

// ---- the import pipeline against a real ledger ---------------------------------------------

class ImportFixture {
 public:
  ImportFixture() {
    OpenOptions options;
    options.dir = dir.str();
    options.create = true;
    options.log_key = test::test_log_key();
    auto opened = Ledger::open(options);
    REQUIRE(opened.has_value());
    ledger = std::move(opened.value());
    for (const auto& o : ledger->append(cast.prologue_entries())) REQUIRE(o.status.is_ok());
  }

  ImportTotals import(const std::string& text, std::vector<DocumentOutcome>* outcomes = nullptr,
                      size_t batch = 100) {
    std::istringstream in(text);
    auto reader = ManifestReader::from_stream(in, "catalog");
    ImportOptions options;
    options.batch = batch;
    LocalLog log(*ledger);
    Importer importer(log, cast.importer, options);
    ImportCallbacks callbacks;
    callbacks.on_document = [&](const DocumentOutcome& o) {
      if (outcomes != nullptr) outcomes->push_back(o);
    };
    REQUIRE(importer.import(*reader, callbacks).is_ok());
    return importer.totals();
  }

  test::TempDir dir;
  test::Cast cast;  // the importer's scope: gpumode, sol-execbench
  std::unique_ptr<Ledger> ledger;
};

std::string catalog_text(uint64_t runs, uint64_t seed, uint64_t* manifests) {
  std::string text;
  auto stats = gen::generate_sol_catalog({runs, seed}, [&](const Json& m) {
    jcs_append(text, m);
    text.push_back('\n');
  });
  *manifests = stats.manifests;
  return text;
}

// A BenchmarkRun named `name`; `native` is appended to its spec (",\"sourceNative\":{...}").
std::string run_document(const std::string& name, const std::string& native) {
  return R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkRun","metadata":{"name":")" +
         name + R"("},"spec":{"implementationDigest":"sha256:)" + std::string(64, '1') +
         R"(","workloadDigest":"sha256:)" + std::string(64, '2') +
         R"(","protocolDigest":"sha256:)" + std::string(64, '3') +
         R"(","environmentDigest":"sha256:)" + std::string(64, '4') +
         R"(","status":"passed","observedAt":"2026-05-05T05:05:05Z")" + native + "}}";
}

const DocumentOutcome& outcome_of(const std::vector<DocumentOutcome>& outcomes,
                                  const std::string& name) {
  for (const auto& o : outcomes) {
    if (o.name == name) return o;
  }
  FAIL("no outcome for " << name);
  return outcomes.front();
}

TEST_CASE("import appends a generated catalog, then finds all of it already present",
          "[import][ledger]") {
  ImportFixture f;
  uint64_t manifests = 0;
  std::string text = catalog_text(150, 5, &manifests);
  REQUIRE(manifests > 300);
  std::vector<DocumentOutcome> outcomes;
  ImportTotals first = f.import(text, &outcomes);
  CHECK(first.documents == manifests);
  CHECK(first.added == manifests);
  CHECK(first.observations == 150);
  CHECK(first.manifests == manifests - 150);
  CHECK(first.present == 0);
  CHECK(first.rejected == 0);
  CHECK(f.ledger->size() == 5 + manifests);

  // Each event is the manifest's canonical text, stamped with the run's own observedAt.
  const DocumentOutcome* run = nullptr;
  for (const auto& o : outcomes) {
    if (o.kind == "BenchmarkRun" && run == nullptr) run = &o;
  }
  REQUIRE(run != nullptr);
  auto entry = f.ledger->entry(run->entry_index);
  REQUIRE(entry.has_value());
  auto checked = check_entry(*entry);
  REQUIRE(checked.has_value());
  CHECK(checked->id == run->event_id);
  const auto* obs = std::get_if<Observation>(&checked->body.payload);
  REQUIRE(obs != nullptr);
  CHECK(sha256(as_bytes(obs->manifest.canonical)) == *run->digest);
  CHECK(checked->body.author == f.cast.importer.public_key());
  Json run_json = parse(obs->manifest.canonical);
  CHECK(checked->body.claimed_time_ms ==
        *parse_utc_time_ms(run_json.find("spec")->find("observedAt")->as_string()));

  ImportTotals again = f.import(text, nullptr, 5000);
  CHECK(again.documents == manifests);
  CHECK(again.added == 0);
  CHECK(again.present == manifests);
  CHECK(again.rejected == 0);
  CHECK(f.ledger->size() == 5 + manifests);
}

TEST_CASE("import rejects bad documents with their rule and imports the rest",
          "[import][ledger]") {
  ImportFixture f;
  uint64_t manifests = 0;
  std::string text = catalog_text(100, 9, &manifests);
  // Five bad documents in the middle: not JSON, a bad digest, a rerun's manifest, an
  // observation from a source the key may not report for, a serving kind.
  std::string bad =
      "{\"apiVersion\": oops}\n"
      R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"WorkloadCase","metadata":{"name":"bad-digest"},)"
      R"("spec":{"operationSpecDigest":"md5:abc123","axes":{},"tensors":{},"correctness":{"comparator":"c"}}})"
      "\n";
  auto make_run = [](const std::string& name, const std::string& native) {
    return run_document(name, native) + "\n";
  };
  bad += make_run("a-rerun", "");
  bad += make_run("foreign-run", R"(,"sourceNative":{"source":"other-board"})");
  bad += R"({"apiVersion":"kernelindex.dev/v1alpha1","kind":"ServingRun","metadata":{"name":"s"},"spec":{}})"
         "\n";
  size_t middle = text.find('\n', text.size() / 2) + 1;
  text.insert(middle, bad);
  // And a good document twice: the repeat is answered as already present.
  std::string again = project("twice");
  text += again + "\n" + again + "\n";

  std::vector<DocumentOutcome> outcomes;
  ImportTotals t = f.import(text, &outcomes, 64);
  CHECK(t.documents == manifests + 7);
  CHECK(t.added == manifests + 1);
  CHECK(t.rejected == 5);
  CHECK(t.present == 1);
  CHECK(f.ledger->size() == 5 + manifests + 1);

  const DocumentOutcome& not_json = outcomes[std::count(text.begin(), text.begin() + middle, '\n')];
  CHECK(not_json.status == ImportStatus::kRejected);
  CHECK(not_json.rule == "read");
  CHECK_THAT(not_json.message, Catch::Contains("is not valid JSON"));
  CHECK(outcome_of(outcomes, "bad-digest").rule == "digest-format");
  CHECK_THAT(outcome_of(outcomes, "bad-digest").message,
             Catch::Contains("spec.operationSpecDigest is \"md5:abc123\""));
  CHECK(outcome_of(outcomes, "a-rerun").rule == "rerun-only");
  CHECK_THAT(outcome_of(outcomes, "a-rerun").message,
             Catch::Contains("a BenchmarkRun without spec.sourceNative is a controlled rerun's "
                             "manifest [rerun-only]"));
  CHECK(outcome_of(outcomes, "foreign-run").rule == "ledger");
  CHECK_THAT(outcome_of(outcomes, "foreign-run").message, Catch::Contains("other-board"));
  CHECK(outcome_of(outcomes, "s").rule == "kind");
  CHECK(outcomes.back().status == ImportStatus::kPresent);
  CHECK(outcomes.back().entry_index == outcomes[outcomes.size() - 2].entry_index);
}

TEST_CASE("a manifest repeated in the next batches is appended once and answered from its "
          "first outcome, in input order",
          "[import][ledger]") {
  // Batches of 4: a repeat one batch later meets its first while that batch is still being
  // appended; two batches later, once it is reported. A refused document's repeats are refused.
  ImportFixture f;
  const std::string foreign = run_document("far", R"(,"sourceNative":{"source":"other-board"})");
  std::vector<std::string> docs;
  for (int i = 0; i < 24; ++i) docs.push_back(project("p" + std::to_string(i)));
  docs[1] = foreign;
  // Repeats of documents 0, 1 (the refused one) and 2: in the next batch and two batches on.
  docs[5] = docs[9] = docs[0];
  docs[6] = docs[10] = docs[1];
  docs[7] = docs[11] = docs[2];
  docs[13] = docs[12];  // and one within a batch
  std::string text;
  for (const auto& d : docs) text += d + "\n";

  std::vector<DocumentOutcome> outcomes;
  ImportTotals t = f.import(text, &outcomes, 4);
  REQUIRE(outcomes.size() == docs.size());
  CHECK(t.documents == 24);
  CHECK(t.added == 16);  // 24 - 3 refused - 5 repeats of added ones
  CHECK(t.present == 5);
  CHECK(t.rejected == 3);
  CHECK(f.ledger->size() == 5 + 16);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    INFO("document " << i);
    CHECK(outcomes[i].label.find("document " + std::to_string(i + 1) + " ") == 0);
  }
  for (size_t repeat : {5, 9}) {
    CHECK(outcomes[repeat].status == ImportStatus::kPresent);
    CHECK(outcomes[repeat].entry_index == outcomes[0].entry_index);
    CHECK(outcomes[repeat].event_id == outcomes[0].event_id);
  }
  for (size_t repeat : {7, 11}) {
    CHECK(outcomes[repeat].status == ImportStatus::kPresent);
    CHECK(outcomes[repeat].entry_index == outcomes[2].entry_index);
  }
  CHECK(outcomes[13].status == ImportStatus::kPresent);
  CHECK(outcomes[13].entry_index == outcomes[12].entry_index);
  CHECK(outcomes[1].status == ImportStatus::kRejected);
  CHECK(outcomes[1].rule == "ledger");
  for (size_t repeat : {6, 10}) {
    CHECK(outcomes[repeat].status == ImportStatus::kRejected);
    CHECK(outcomes[repeat].rule == "ledger");
    CHECK_THAT(outcomes[repeat].message, Catch::Contains("other-board"));
  }
}

}  // namespace
}  // namespace evl::cli
