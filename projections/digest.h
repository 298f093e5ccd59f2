// projections/digest.h — one hash over the whole projection state, kept up to date as the state
// changes, and the statement the log key signs about it.
//
// The digest is a homomorphic set hash (LtHash16) over the store's records, so that a change
// of one record changes it in time independent of the store's size:
//     record_hash(k, v) = SHA-256("evledger/projections/v3 record\n" ‖ u64be(len k) ‖ k ‖
//                                 u64be(len v) ‖ v)
//     expand(k, v)      = 2048 bytes of ChaCha20 (IETF, zero nonce) keyed by record_hash(k, v),
//                         read as 1024 little-endian uint16 lanes
//     lanes             = the lane-wise sum mod 2^16 of expand(k, v) over every record
//     projection_digest = SHA-256("evledger/projections/v3\n" ‖ u64be(record count) ‖ lanes)
// with the lanes written as 1024 little-endian uint16 (projections/FORMAT.md draws it, with a
// worked example). Two stores with the same records have the same digest, whatever the order in
// which they were written; replacing a record subtracts its old expansion and adds the new one.
//
// Thread safety: ProjectionAccumulator is a value type; the functions are pure over a store the
// caller reads in one snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/bytes.h"
#include "events/sha256.h"
#include "events/status.h"
#include "keys/key.h"
#include "ledger/thread_pool.h"
#include "projections/store.h"

namespace evl {

// The projection format: the state's records and their digest. Bump the version in all three,
// and in projections/FORMAT.md, together. The state names its format in its "#/version" record.
inline constexpr std::string_view kProjectionFormat = "evledger/projections/v3";
inline constexpr std::string_view kProjectionDigestDomain = "evledger/projections/v3\n";
inline constexpr std::string_view kProjectionRecordDomain = "evledger/projections/v3 record\n";
static_assert(kProjectionDigestDomain.substr(0, kProjectionFormat.size()) == kProjectionFormat &&
              kProjectionRecordDomain.substr(0, kProjectionFormat.size()) == kProjectionFormat);

inline constexpr size_t kProjectionLanes = 1024;

// The LtHash16 sums of a set of records and their count.
class ProjectionAccumulator {
 public:
  // The byte length of serialize(): u64be(count) ‖ 1024 little-endian uint16 lanes.
  static constexpr size_t kSerializedSize = 8 + 2 * kProjectionLanes;

  void add(std::string_view key, std::string_view value);
  void remove(std::string_view key, std::string_view value);
  // Adds the records `other` holds (the sums are order-free, so shares can be summed apart).
  void merge(const ProjectionAccumulator& other);
  // Removes the records `other` holds (each must be held here).
  void unmerge(const ProjectionAccumulator& other);
  Digest digest() const;

  uint64_t count() const { return count_; }
  const std::array<uint16_t, kProjectionLanes>& lanes() const { return lanes_; }

  Bytes serialize() const;
  // kCorrupt unless `bytes` is kSerializedSize long.
  static Result<ProjectionAccumulator> parse(ByteView bytes);

  friend bool operator==(const ProjectionAccumulator&, const ProjectionAccumulator&) = default;

 private:
  std::array<uint16_t, kProjectionLanes> lanes_{};
  uint64_t count_ = 0;
};

// SHA-256(kProjectionRecordDomain ‖ u64be(len key) ‖ key ‖ u64be(len value) ‖ value).
Digest projection_record_hash(std::string_view key, std::string_view value);

// Records copied side by side, to be hashed apart from the store they came from (a store's
// views are valid only during a visit). A record costs a SHA-256 and a 2 KiB ChaCha20
// expansion, so many are hashed on a pool's threads, in contiguous shares whose sums merge.
class ProjectionRecords {
 public:
  void add(std::string_view key, std::string_view value);
  // Room for `bytes` of keys and values without growing: a growing copy touches fresh pages
  // at every doubling, and a first touch costs more than the copy.
  void reserve(size_t bytes);
  size_t capacity() const { return arena_.capacity(); }
  size_t size() const { return records_.size(); }
  // The bytes of the keys and values held.
  size_t bytes() const { return arena_.size(); }
  void clear();
  // The accumulator of the records; `pool` (optional) hashes them on all its threads.
  ProjectionAccumulator sums(ThreadPool* pool) const;

 private:
  std::string arena_;                          // each record's key, then its value
  std::vector<std::array<size_t, 3>> records_;  // key offset, key length, value length
};

// The accumulator of every record of the store, from one full scan (the slow path: rebuilds,
// audits and tests; the ledger keeps it incrementally, projections/digested_store.h). Records
// are hashed on all cores, a batch at a time.
Result<ProjectionAccumulator> accumulate_projection_store(const ProjectionStore& store);

// accumulate_projection_store(store)->digest().
Result<Digest> projection_digest(const ProjectionStore& store);

// "evledger/projections/v3\n<origin>\n<size>\n<base64 digest>\n": the body of the signed note
// the ledger stores for every checkpoint (signed by the log key).
std::string projection_statement(std::string_view origin, uint64_t size, const Digest& digest);

struct ProjectionStatement {
  std::string origin;
  uint64_t size = 0;
  Digest digest{};
};

// Parses a statement body strictly (the exact form projection_statement writes); kRejected
// naming the line otherwise.
Result<ProjectionStatement> parse_projection_statement(std::string_view text);

// The format line ("evledger/projections/v1", without its newline) of a statement body made
// under another projection format than this evledger's, by an older or newer evledger; nullopt
// for a statement of this format and for a text that is no statement. Such a statement states
// the digest of a different function of the log: it is kept as history, and neither checked nor
// compared (FORMAT.md, "Statements of another format").
std::optional<std::string_view> other_projection_format(std::string_view text);

// A signed statement note whose log key signature verifies (keys/note.h open_note's rules;
// other signatures are ignored): either of this format, parsed, its origin the log key's name,
// or of another format, of which only the format line is read (other_projection_format).
struct OpenedStatement {
  std::optional<ProjectionStatement> statement;  // of this format
  std::string other_format;                      // else: the other format's line
};
// kRejected naming the rule when the signature does not verify or a statement of this format
// does not parse or names another origin.
Result<OpenedStatement> open_statement_note(std::string_view note, const VerifierKey& log_key);
// open_statement_note() of a statement that must be of this format (kRejected otherwise too).
Result<ProjectionStatement> open_projection_statement(std::string_view note,
                                                      const VerifierKey& log_key);

}  // namespace evl
