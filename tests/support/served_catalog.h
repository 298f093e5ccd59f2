// A ledger holding a generated catalog with its projections, served by the log's, the API's
// and the pages' routes without a socket: for the tests of the server's handlers.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "events/json.h"
#include "projections/ledger_hook.h"
#include "projections/query.h"
#include "tests/support/fixtures.h"
#include "tests/support/ledger_support.h"
#include "tests/support/served_routes.h"
#include "tests/support/test_support.h"
#include "tools/gen/sol_catalog.h"
#include "tools/import_reader.h"
#include "tools/importer.h"
#include "tools/server/api.h"
#include "tools/server/handlers.h"
#include "tools/server/pages.h"

namespace evl::test {

using server::Request;
using server::Response;

inline std::string body_of(const Response& r) { return r.body ? *r.body : std::string(); }

inline Json json_of(const Response& r) {
  auto j = parse_json(body_of(r));
  INFO(body_of(r));
  REQUIRE(j.has_value());
  return std::move(*j);
}

// A ledger with the prologue and a generated catalog of `runs` runs, kept with projections,
// served.
struct Catalog {
  explicit Catalog(uint64_t runs = 60) {
    OpenOptions options;
    options.create = true;
    options.hook = make_projection_hook();
    ledger = test::open_test_ledger(dir, options);
    test::append_all(*ledger, cast.prologue_entries());
    import(runs, 5);
    served = std::make_unique<Served>(*ledger);
  }

  // Imports a generated catalog, each manifest first passed through `edit` when given.
  void import(uint64_t runs, uint64_t seed, const std::function<void(Json&)>& edit = {}) {
    std::string jsonl;
    gen::generate_sol_catalog({runs, seed}, [&](const Json& m) {
      Json copy = m;
      if (edit) edit(copy);
      jsonl += jcs_serialize(copy) + "\n";
    });
    std::istringstream in(jsonl);
    auto reader = cli::ManifestReader::from_stream(in, "catalog");
    cli::ImportOptions options;
    options.batch = 17;  // several commits, so several checkpoints
    LocalLog log(*ledger);
    cli::Importer importer(log, cast.importer, options);
    REQUIRE(importer.import(*reader).is_ok());
    REQUIRE(importer.totals().rejected == 0);
  }

  Response get(std::string target, std::vector<server::Header> headers = {}) {
    return served->get(std::move(target), std::move(headers));
  }

  // Follows `next` from `first` (a target with a query) to the end; each page must be 200.
  std::vector<Json> all_pages(const std::string& first, size_t* pages = nullptr) {
    std::vector<Json> items;
    std::string target = first;
    for (size_t n = 1;; ++n) {
      Response r = get(target);
      INFO(target << ": " << body_of(r));
      REQUIRE(r.status == 200);
      Json page = json_of(r);
      for (const Json& item : page.find("items")->as_array()) items.push_back(item);
      const Json* next = page.find("next");
      REQUIRE(next != nullptr);
      if (next->is_null()) {
        if (pages != nullptr) *pages = n;
        return items;
      }
      target = first + "&cursor=" + next->as_string();
    }
  }

  // What `fn` reads from one snapshot of the projections, as the CLI reads them.
  template <typename T>
  T read(const std::function<Result<T>(const ProjectionStore&)>& fn) {
    std::optional<T> out;
    REQUIRE(read_projections(*ledger, [&](const ProjectionStore& state, uint64_t) -> Status {
              auto r = fn(state);
              if (!r) return r.error();
              out = std::move(*r);
              return Status::ok();
            }).is_ok());
    return std::move(*out);
  }

  std::vector<Json> cli_runs(const RunFilter& filter = {}) {
    return read<std::vector<Json>>(
        [&](const ProjectionStore& s) { return list_runs(s, filter); });
  }

  TempDir dir;
  Cast cast;
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<Served> served;
};

}  // namespace evl::test
