// keys/policy.h — who may append what, at which log position.
//
// The key state is a fold over the log's key events (genesis, grants, revokes), evaluated at a
// log position. Rules (DESIGN.md "Event kinds"):
//   - genesis only at index 0 and only once; its author is its first admin;
//   - grants and revokes only by an admin active at that position;
//   - revocation is forward-only: events before the revoke stay valid, later ones are refused;
//   - except a compromise: the key's events from `void_from` on are void. They stay in the log;
//     projections skip them and say why. Voiding cascades: a grant or revoke that a voided
//     key signed is void as well, so keys granted only by it are void from their grant on.
//   - a revoked key is never granted again; names are unique; the log key signs checkpoints
//     only and is never granted a role.
//
// Which compromise revocations take effect is decided from the last to the first, in passes
// until the decisions settle: one takes effect when it stands given the effective ones after
// it and (from the previous pass) before it; an effective one then stands even if it voids its
// own author (a key reported stolen by itself ends up revoked). A compromise that stands but
// does not take effect revokes forward only. A retired or rotated key may later be revoked as
// compromised, voiding its events from void_from up to its first revocation. The result is a
// function of the key events alone, so it does not depend on how the log was batched.
//
// Thread safety: a KeyPolicy is a value; const methods may run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "events/event.h"

namespace evl {

struct KeyRecord {
  PublicKey public_key{};
  std::string name;
  std::vector<Role> roles;          // sorted, unique
  std::vector<std::string> scope;   // sorted, unique
  uint64_t granted_at = 0;          // index of the first effective grant
  std::optional<uint64_t> revoked_at;
  RevokeReason revoke_reason = RevokeReason::kRetired;
  std::optional<uint64_t> void_from;  // compromise: events at or after this index are void

  bool has_role(Role role) const;
  bool in_scope(std::string_view subject) const;
  bool active_at(uint64_t index) const {
    return granted_at <= index && (!revoked_at || index < *revoked_at);
  }
  friend bool operator==(const KeyRecord&, const KeyRecord&) = default;
};

class KeyPolicy {
 public:
  // The genesis, once index 0 is applied.
  const std::optional<Genesis>& genesis() const { return genesis_; }
  const KeyRecord* find(const PublicKey& key) const;
  const std::map<PublicKey, KeyRecord>& keys() const { return keys_; }

  // Whether `body` may be appended at `index` (the current log size). `scope_subject` is the
  // source slug of an observation (from its manifest); disqualifications carry their own.
  // kDenied with the signer's name and the reason when the signer is not a key of the ledger
  // here, is revoked, or lacks the role or scope; kRejected when the event itself breaks a rule
  // (a second genesis, a grant that renames a key, a revocation of an unknown key, ...).
  [[nodiscard]] Status check(uint64_t index, const EventBody& body,
                             std::string_view scope_subject = {}) const;

  // Records an event that check() accepted at `index`. Events other than genesis, grants and
  // revokes leave the state unchanged.
  void apply(uint64_t index, const EventBody& body);

  // The roles `key` held at log position `index`: those of the genesis (an admin's) and of its
  // grants at or before `index` that stand (a grant whose signer is void there counts for
  // nothing), sorted; empty before its first grant. find() gives the roles at the head.
  std::vector<Role> roles_at(const PublicKey& key, uint64_t index) const;

  // Why the event at `index` by `author` is void, or nullopt when it stands.
  std::optional<std::string> void_cause(const PublicKey& author, uint64_t index) const;

  // True when a compromise took effect, so that some events are void.
  bool voids_anything() const;

  // A short printable name for a key: its granted name or the first bytes of its hex.
  std::string describe(const PublicKey& key) const;

 private:
  struct KeyEvent {
    uint64_t index;
    EventBody body;
  };

  Status check_signer(uint64_t index, const EventBody& body, std::string_view subject) const;
  Status check_grant(uint64_t index, const KeyGrant& grant) const;
  Status check_revoke(uint64_t index, const KeyRevoke& revoke) const;
  // `voids`: a compromise revocation also voids the key's events from its void_from.
  void apply_key_event(uint64_t index, const EventBody& body, bool voids);
  std::map<PublicKey, uint64_t> void_map(const std::set<uint64_t>& effective) const;
  void replay();
  // Folds key_events_ into keys_ with the given voids; returns whether the event at
  // `stands_index` stood.
  bool fold(const std::map<PublicKey, uint64_t>& void_from, const std::set<uint64_t>& effective,
            uint64_t stands_index);
  size_t active_admins_at(uint64_t index) const;

  std::optional<Genesis> genesis_;
  std::map<PublicKey, KeyRecord> keys_;
  std::map<PublicKey, std::string> voided_grants_;  // keys whose grants were all voided: why
  std::vector<KeyEvent> key_events_;
};

}  // namespace evl
