// tests/fuzz/make_seeds.cpp — writes the generated part of the seed corpora of tests/fuzz/
// (the hand-written seeds beside them stay as they are):
//
//   build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
//
// Everything comes from the fixtures' fixed keys (tests/support/fixtures.h, and the witnesses
// of tests/fuzz/fuzz_keys.h) and a ledger built in a temporary directory from the fixtures'
// entries, so two runs write the same bytes. Signatures in the seeds verify under the keys the
// fuzz targets hold, which lets the fuzzer start inside the accepting paths.
#include <sodium.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "events/jcs.h"
#include "keys/checkpoint.h"
#include "keys/witness_format.h"
#include "ledger/ledger.h"
#include "ledger/proof_format.h"
#include "ledger/proofs.h"
#include "ledger/split_view.h"
#include "ledger/tile_path.h"
#include "ledger/tiles.h"
#include "tests/fuzz/fuzz_keys.h"
#include "tools/gen/sol_catalog.h"

namespace {

using namespace evl;
namespace fs = std::filesystem;

fs::path out_root;

void write(const std::string& target, const std::string& name, std::string_view bytes) {
  fs::create_directories(out_root / target);
  std::ofstream out(out_root / target / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz_make_seeds: cannot write %s/%s\n", target.c_str(), name.c_str());
    std::exit(1);
  }
}

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  write(target, name, as_chars(bytes));
}

template <class T>
T must(Result<T> r, const char* what) {
  if (!r) {
    std::fprintf(stderr, "fuzz_make_seeds: %s: %s\n", what, r.error().message().c_str());
    std::exit(1);
  }
  return std::move(*r);
}

std::string cosigned(const std::string& note, const Checkpoint& checkpoint) {
  std::string out = note;
  for (const auto& w : fuzz::witness_keys()) {
    out += note_signature_line(cosign_checkpoint(checkpoint, w, 1700000000));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR (tests/fuzz/corpus)\n");
    return 2;
  }
  if (sodium_init() < 0) return 1;
  out_root = argv[1];
  test::Cast cast;

  // ---- entries: one of every kind, a cosigned one, a body alone -----------------------------
  std::vector<Bytes> entries = cast.prologue_entries();
  const Bytes observation = test::signed_entry(
      cast.importer, test::observation_body(cast.importer, "gpumode", "17828"));
  const Digest run = event_id(must(decode_entry(observation), "observation").body);
  entries.push_back(observation);
  entries.push_back(test::signed_entry(cast.runner, test::rerun_body(cast.runner, run)));
  entries.push_back(test::signed_entry(cast.attestor, test::attestation_body(cast.attestor, run)));
  entries.push_back(test::signed_entry(cast.curator, test::retract_body(cast.curator, run)));
  entries.push_back(test::cosigned_entry(cast.importer, {&cast.runner},
                                         test::observation_body(cast.importer, "gpumode", "2")));
  const char* names[] = {"genesis", "grant-importer", "grant-runner", "grant-curator",
                         "grant-attestor", "observation", "rerun", "attestation", "retract",
                         "cosigned-observation"};
  for (size_t i = 0; i < entries.size(); ++i) write("entry", names[i], entries[i]);
  write("entry", "observation-body", must(decode_entry(observation), "observation").body);

  // ---- a ledger of those entries: checkpoints, proofs, tiles --------------------------------
  char path[] = "/tmp/evl-fuzz-seeds-XXXXXX";
  if (::mkdtemp(path) == nullptr) return 1;
  {
    OpenOptions options;
    options.dir = path;
    options.create = true;
    options.log_key = test::test_log_key();
    auto ledger = must(Ledger::open(options), "open the ledger");
    for (size_t i = 0; i < entries.size(); i += 3) {
      std::vector<Bytes> batch(entries.begin() + i,
                               entries.begin() + std::min(entries.size(), i + 3));
      for (const auto& o : ledger->append(batch)) {
        if (!o.status.is_ok()) {
          std::fprintf(stderr, "fuzz_make_seeds: append: %s\n", o.status.message().c_str());
          return 1;
        }
      }
    }
    const uint64_t size = ledger->size();
    StoredCheckpoint head = must(stored_checkpoint(*ledger), "checkpoint");
    StoredCheckpoint old = must(stored_checkpoint(*ledger, 3), "checkpoint at 3");
    const std::string witnessed = cosigned(head.note, head.checkpoint);

    write("note", "checkpoint", head.note);
    write("note", "checkpoint-cosigned", witnessed);
    write("note", "checkpoint-3", old.note);
    write("note", "checkpoint-body", checkpoint_body(head.checkpoint));
    std::vector<NoteSignature> lines;
    for (const auto& w : fuzz::witness_keys()) {
      lines.push_back(cosign_checkpoint(head.checkpoint, w, 1700000000));
    }
    write("note", "cosignature-lines", format_cosignature_lines(lines));
    ConsistencyProofDoc consistency = must(prove_consistency(*ledger, 3), "consistency proof");
    AddCheckpointRequest request;
    request.old_size = 3;
    request.proof = consistency.hashes;
    request.checkpoint = head.note;
    write("note", "add-checkpoint", format_add_checkpoint_request(request));
    write("note", "tlog-size", format_tlog_size(size));
    write("note", "log-vkey", head.log_key.to_string());
    write("note", "witness-vkey", fuzz::cosigner_keys()[0].to_string());

    ProvenInclusion inclusion = must(prove_inclusion(*ledger, 5), "inclusion proof");
    write("proof", "inclusion.tlog-proof", format_tlog_proof(inclusion.proof));
    write("proof", "inclusion.json", format_inclusion_proof_json(inclusion.proof));
    InclusionProofDoc with_extra = inclusion.proof;
    with_extra.extra = {1, 2, 3};
    with_extra.checkpoint_note = witnessed;
    write("proof", "inclusion-extra-cosigned.tlog-proof", format_tlog_proof(with_extra));
    write("proof", "consistency.json", format_consistency_proof_json(consistency));
    ProvenInclusion first = must(prove_inclusion(*ledger, 0, 3), "inclusion proof at 3");
    write("proof", "inclusion-old.tlog-proof", format_tlog_proof(first.proof));

    for (const HashTile& tile : hash_tiles(size)) {
      write("tile", "path-" + std::to_string(tile.level), hash_tile_path(tile));
      std::string bytes = must(read_hash_tile(*ledger, tile, size), "tile");
      std::string indexed(8, '\0');  // stored hash 0, as the target reads its first 8 bytes
      write("tile", "tile-" + std::to_string(tile.level), indexed + bytes);
    }
    for (const EntryBundle& bundle : entry_bundles(size)) {
      write("tile", "bundle-path", entry_bundle_path(bundle));
      write("tile", "bundle", must(read_entry_bundle(*ledger, bundle, size), "bundle"));
    }
    write("tile", "path-full", hash_tile_path(1, 1234067, 256));
    write("tile", "path-entries-full", entry_bundle_path(5, 256));

    // ---- router: the requests of each kind of route --------------------------------------
    std::string framed;
    for (size_t i = 5; i < 7; ++i) append_entry_frame(framed, entries[i]);
    const std::string id = "sha256:" + hex_encode(run);
    const std::vector<std::pair<std::string, std::string>> requests = {
        {"checkpoint", "GET /checkpoint\n"},
        {"checkpoint-etag", "GET /checkpoint\nIf-None-Match: \"x\"\n"},
        {"tile", "GET /" + hash_tile_path(hash_tiles(size)[0]) + "\n"},
        {"bundle", "GET /" + entry_bundle_path(entry_bundles(size)[0]) + "\n"},
        {"healthz", "HEAD /healthz\n"},
        {"metrics", "GET /metrics\n"},
        {"add-event-one", "POST /add-event\nContent-Type: application/octet-stream\n\n" +
                              std::string(as_chars(entries[5]))},
        {"add-event-framed", "POST /add-event?receipts=0\nContent-Type: "
                             "application/vnd.evledger.entries\n\n" + framed},
        {"api-events", "GET /api/v1/events?from=0&limit=3\n"},
        {"api-event", "GET /api/v1/events/" + id + "?format=raw\n"},
        {"api-inclusion", "GET /api/v1/proofs/inclusion?index=5&format=tlog-proof\n"},
        {"api-consistency", "GET /api/v1/proofs/consistency?from=3\n"},
        {"api-checkpoints", "GET /api/v1/checkpoints?limit=2\n"},
        {"api-runs", "GET /api/v1/runs?benchmark=b&limit=2\n"},
        {"api-run", "GET /api/v1/runs/" + id.substr(7, 12) + "\n"},
        {"api-groups", "GET /api/v1/groups?limit=1\n"},
        {"api-leaders", "GET /api/v1/leaders\n"},
        {"api-keys", "GET /api/v1/keys\n"},
        {"api-statement", "GET /api/v1/statement\n"},
        {"page-index", "GET /\n"},
        {"page-run", "GET /runs/" + hex_encode(run) + "\n"},
        {"page-compare", "GET /compare?run=" + hex_encode(run) + "&run=ab12\n"},
        {"asset", "GET /assets/app.css\n"},
    };
    for (const auto& [name, text] : requests) write("router", name, text);
  }
  fs::remove_all(path);

  // ---- policies -----------------------------------------------------------------------------
  const std::string log_line = "log " + cast.log.verifier().to_string() + " https://log.example/\n";
  std::string witnesses;
  for (size_t i = 0; i < fuzz::cosigner_keys().size(); ++i) {
    witnesses += "witness W" + std::to_string(i) + " " + fuzz::cosigner_keys()[i].to_string() +
                 " https://w" + std::to_string(i) + ".example/\n";
  }
  write("policy", "quorum-2-of-2", "# two witnesses\n" + log_line + witnesses +
                                        "group both 2 W0 W1\nquorum both\n");
  write("policy", "quorum-any", log_line + witnesses + "group one any W0 W1\ngroup top all one\n"
                                "quorum top\n");
  write("policy", "quorum-none", log_line + "quorum none\n");
  write("policy", "quorum-witness", witnesses + "quorum W1\n");

  // ---- split-view evidence: two roots at one size, forked prefixes, and a doctored path -----
  {
    // A tree of `size` leaves; from leaf `fork_at` on, the leaves of another history.
    auto tree_of = [](uint64_t size, uint64_t fork_at) {
      MemoryHashStore tree;
      for (uint64_t i = 0; i < size; ++i) {
        tree.append(leaf_hash(Bytes{static_cast<uint8_t>(i), static_cast<uint8_t>(i >= fork_at)}));
      }
      return tree;
    };
    const SecretKey& key = fuzz::log_key();
    auto signed_at = [&](const MemoryHashStore& tree) {
      return sign_checkpoint(Checkpoint{key.name(), tree.size(), tree.root(), {}}, key);
    };
    const std::pair<uint64_t, uint64_t> pairs[] = {{20, 20}, {20, 37}, {16, 37}, {1, 5}};
    for (auto [older, newer] : pairs) {
      MemoryHashStore a = tree_of(older, 0), b = tree_of(newer, UINT64_MAX);
      auto found = must(compare_checkpoints(signed_at(a), signed_at(b), key.verifier(), b),
                        "compare checkpoints");
      if (!found) {
        std::fprintf(stderr, "fuzz_make_seeds: no split view at %llu/%llu\n",
                     static_cast<unsigned long long>(older), static_cast<unsigned long long>(newer));
        return 1;
      }
      write("evidence", "split-" + std::to_string(older) + "-" + std::to_string(newer) + ".txt",
            format_split_view(*found));
      if (older == 20 && newer == 37) {
        SplitView bent = *found;
        bent.path[0][0] ^= 1;  // a path that no longer leads to the newer root
        write("evidence", "bent-path-20-37.txt", format_split_view(bent));
      }
    }
  }

  // ---- manifests and JSON: a generated catalog in each form ---------------------------------
  std::vector<std::string> docs;
  gen::generate_sol_catalog({3, 7}, [&](const Json& m) { docs.push_back(jcs_serialize(m)); });
  std::string jsonl, array = "[\n", yaml;
  for (size_t i = 0; i < docs.size(); ++i) {
    jsonl += docs[i] + "\n";
    array += docs[i] + (i + 1 < docs.size() ? ",\n" : "\n]\n");
    yaml += "---\n" + docs[i] + "\n";
  }
  write("manifest", "catalog.jsonl", jsonl);
  write("manifest", "catalog-array.json", array);
  write("manifest", "catalog-flow.yaml", yaml);
  write("manifest", "run.json", test::run_manifest_text("gpumode", "17828"));
  write("manifest", "environment.json", test::environment_manifest_text());
  write("jcs", "run.json", docs.back());
  write("jcs", "environment.json", test::environment_manifest_text());
  return 0;
}
