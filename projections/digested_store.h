// projections/digested_store.h — the projection digest kept up to date as the state changes.
//
// A DigestTracker holds the accumulator (projections/digest.h) of a store and the records
// changed since it was last brought up to date. A DigestedStore is a KeyValueStore decorator
// through which the fold writes: before the first put or erase of a key it remembers the key's
// value as it was. update() then subtracts each changed key's old record and adds its current
// one, so a record written many times between updates (the "#/next" counter, a run view that
// several events of one commit touch) is hashed twice, not once per write.
//
// When the tracker does not know the sums (a store written without it, or emptied and refolded
// by a rebuild), it tracks nothing and update() scans the whole store once.
//
// Lifetimes: a DigestedStore refers to its inner store and tracker, which must outlive it; a
// tracker refers to no store (each call names the one it reads), so one tracker may follow a
// state through several short-lived store handles of one transaction. Every write to the
// state between two updates must go through a DigestedStore on the tracker, or be followed
// by forget().
// Thread safety: one thread at a time, like the store.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "projections/digest.h"
#include "projections/store.h"

namespace evl {

class DigestTracker {
 public:
  // Above this many bytes of remembered old values the tracker folds them into the sums early,
  // so that a huge commit holds a bounded copy of the old state.
  static constexpr size_t kMaxRememberedBytes = 64u << 20;

  // `sums`: the accumulator of the store as it is now, or nullopt when unknown.
  explicit DigestTracker(std::optional<ProjectionAccumulator> sums,
                         size_t max_remembered_bytes = kMaxRememberedBytes)
      : sums_(std::move(sums)), max_remembered_bytes_(max_remembered_bytes) {}

  // Brings the sums up to date with `store` (the changes tracked since the last update, or a
  // full scan when they were unknown) and returns them. The store's errors unchanged.
  [[nodiscard]] Result<ProjectionAccumulator> update(const KeyValueStore& store);

  // The store was changed without the tracker (emptied, refolded): the sums are unknown until
  // the next update's full scan, and nothing is tracked meanwhile.
  void forget();

  bool knows_sums() const { return sums_.has_value(); }

 private:
  friend class DigestedStore;
  // Remembers `key`'s current value in `store` unless already remembered since the last
  // update. Applies the changes so far first when the remembered values grow too large.
  [[nodiscard]] Status before_write(const KeyValueStore& store, std::string_view key);
  Status apply_changes(const KeyValueStore& store);

  std::optional<ProjectionAccumulator> sums_;
  // Key → its value at the last update (nullopt: absent then).
  std::map<std::string, std::optional<std::string>, std::less<>> before_;
  size_t before_bytes_ = 0;
  size_t max_remembered_bytes_;
};

class DigestedStore final : public KeyValueStore {
 public:
  DigestedStore(KeyValueStore& inner, DigestTracker& tracker) : inner_(inner), tracker_(tracker) {}

  Result<std::optional<std::string>> get(std::string_view key) const override {
    return inner_.get(key);
  }
  Status put(std::string_view key, std::string_view value) override;
  Status erase(std::string_view key) override;
  Status scan(std::string_view prefix, const KeyValueVisitor& visit) const override {
    return inner_.scan(prefix, visit);
  }

 private:
  KeyValueStore& inner_;
  DigestTracker& tracker_;
};

}  // namespace evl
