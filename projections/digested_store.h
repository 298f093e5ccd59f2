// projections/digested_store.h — the projection digest kept up to date as the state changes.
//
// A DigestTracker holds the accumulator (projections/digest.h) of a store and the keys
// changed since it was last brought up to date. A DigestedStore is a KeyValueStore decorator
// through which the fold writes: before the first put or erase of a key it keeps the key's
// record as it was, and it remembers the key's latest value. update() then subtracts each kept
// record and adds each key's latest one, so a record written many times between updates (the
// "#/next" counter, a run view that several events of one commit touch) is hashed twice, not
// once per write, and update() reads nothing back from the store. With a thread pool, update()
// hashes on all its threads: a record costs a SHA-256 and a 2 KiB ChaCha20 expansion, and a
// commit may change tens of thousands.
//
// When the tracker does not know the sums (a store written without it), it tracks nothing and
// update() scans the whole store once.
//
// A SummingStore is the decorator for a state written from nothing (a rebuild writes every
// record of the state, most of them once): each put adds its record and subtracts the one it
// replaces, each erase subtracts the one it removes, so the sums are known when the writing
// ends, without the scan. It learns the replaced records from the store's own write
// (put_replacing), copies the records, and hashes them on a thread of its own a few megabytes
// at a time while the writing goes on (or on the writer's, when that thread is still busy). A
// writer that makes records on several threads may hash them there instead (put_summed): a
// rebuild's run views are hashed where they are serialized.
//
// Lifetimes: a DigestedStore refers to its inner store and tracker, which must outlive it; a
// tracker refers to no store (each call names the one it reads), so one tracker may follow a
// state through several short-lived store handles of one transaction. Every write to the
// state between two updates must go through a DigestedStore on the tracker, or be followed
// by forget(). A SummingStore refers to its inner store, which must outlive it.
// Thread safety: one thread at a time, like the store (a SummingStore's own thread only hashes
// copies of the records).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "projections/digest.h"
#include "projections/store.h"

namespace evl {

class Worker;  // projections/internal/worker.h

class DigestTracker {
 public:
  // `sums`: the accumulator of the store as it is now, or nullopt when unknown.
  explicit DigestTracker(std::optional<ProjectionAccumulator> sums) : sums_(std::move(sums)) {}

  // Brings the sums up to date with `store` (the changes tracked since the last update, or a
  // full scan when they were unknown) and returns them; `pool` (optional) hashes the changed
  // records in parallel. The store's errors unchanged.
  [[nodiscard]] Result<ProjectionAccumulator> update(const KeyValueStore& store,
                                                     ThreadPool* pool = nullptr);

  // The store was changed without the tracker (emptied, refolded): the sums are unknown until
  // the next update's full scan, and nothing is tracked meanwhile.
  void forget();

  bool knows_sums() const { return sums_.has_value(); }

 private:
  friend class DigestedStore;
  // Unless `key` changed since the last update: keeps its record in `store` (if any), to be
  // subtracted from the sums. Remembers `value`, the value about to be written (nullopt for an
  // erase), as the key's latest: writing back the value an untracked key already has changes
  // nothing, so it is not tracked.
  [[nodiscard]] Status before_write(const KeyValueStore& store, std::string_view key,
                                    std::optional<std::string_view> value);

  // Transparent hashing, so that lookups by string_view do not copy the key.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
  };

  // The sums, still with the records kept in `removed_`; nullopt when unknown.
  std::optional<ProjectionAccumulator> sums_;
  // The records as they were before the first write of each key of `changed_` (absent keys
  // keep nothing).
  ProjectionRecords removed_;
  // Each changed key's latest value (nullopt: erased). Unordered on purpose: the sums are added
  // mod 2^16, so the order of update()'s additions cannot show in the digest, and a commit may
  // change tens of thousands of keys.
  std::unordered_map<std::string, std::optional<std::string>, KeyHash, std::equal_to<>> changed_;
};

// The decorators below read through to their inner store; only their writes differ.
class WriteDecorator : public KeyValueStore {
 public:
  explicit WriteDecorator(KeyValueStore& inner) : inner_(inner) {}

  Result<std::optional<std::string>> get(std::string_view key) const override {
    return inner_.get(key);
  }
  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return inner_.scan(prefix, visit);
  }
  void expect_ascending_writes(bool ascending) override {
    inner_.expect_ascending_writes(ascending);
  }

 protected:
  KeyValueStore& inner_;
};

class DigestedStore final : public WriteDecorator {
 public:
  DigestedStore(KeyValueStore& inner, DigestTracker& tracker)
      : WriteDecorator(inner), tracker_(tracker) {}

  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;

 private:
  DigestTracker& tracker_;
};

class SummingStore final : public WriteDecorator {
 public:
  // `inner` holds nothing yet, or exactly the records whose accumulator is `start`.
  explicit SummingStore(KeyValueStore& inner, ProjectionAccumulator start = {});
  // Waits for the batch being hashed.
  ~SummingStore() override;
  SummingStore(const SummingStore&) = delete;
  SummingStore& operator=(const SummingStore&) = delete;

  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;

  // put() of a record that the writer hashes itself, wherever it makes the record (a rebuild's
  // flush hashes each run view on the thread that serialized it, while the text is in the
  // cache), into sums it hands to add_summed(): no copy of it is made for the worker. What a
  // put_summed() replaces is still subtracted here. Every record written so must be in sums
  // given to add_summed() exactly once before sums(), or sums() is wrong.
  Status put_summed(std::string_view key, std::string_view value);
  void add_summed(const ProjectionAccumulator& sums);

  // Hands the records written since the last hand-over to the worker, to be hashed while the
  // writer goes on (a rebuild calls it after each batch's writes, before folding the next);
  // when the worker is still busy with the last ones, hashes them on this thread instead of
  // waiting. Also done on its own whenever the copies reach kBatchBytes, so that memory stays
  // bounded.
  void hand_over();

  // The accumulator of the store's records after every write so far (the hashing finishes
  // first; `pool`, optional, hashes what was not handed over yet). Valid only if every write to
  // the store went through this decorator and none failed.
  ProjectionAccumulator sums(ThreadPool* pool = nullptr);

 private:
  // Writes through to the inner store; what the write replaces is subtracted.
  Status put_inner(std::string_view key, std::string_view value);
  // hand_over() once the copies reach kBatchBytes, so that memory stays bounded.
  void hand_over_when_full();
  // Hashes the records not handed over on this thread (with `pool`, optional), into
  // hashed_here_, and empties their buffers.
  void hash_here(ThreadPool* pool);

  // A record costs the writer a copy; its SHA-256 and expansion cost the worker about 1.5 µs.
  static constexpr size_t kBatchBytes = 4 << 20;
  // A batch ends with the record that reaches kBatchBytes: room for most such records too.
  static constexpr size_t kBatchSlack = 64 << 10;

  ProjectionRecords added_, removed_;                  // filling, on the writing thread
  ProjectionRecords hashing_added_, hashing_removed_;  // being hashed by the worker
  ProjectionAccumulator sums_;                         // the worker's, between hand-overs
  ProjectionAccumulator hashed_here_;                  // hashed on the writing thread
  std::unique_ptr<Worker> worker_;                     // destroyed (joined) first
};

}  // namespace evl
