#include "keys/policy.h"

#include <algorithm>
#include <set>

namespace evl {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

std::string roles_text(const std::vector<Role>& roles) {
  std::vector<std::string> names;
  for (Role r : roles) names.push_back(role_name(r));
  return join(names);
}

template <typename T>
void merge_sorted(std::vector<T>& into, const std::vector<T>& more) {
  std::set<T> all(into.begin(), into.end());
  all.insert(more.begin(), more.end());
  into.assign(all.begin(), all.end());
}

bool is_compromise(const EventBody& body) {
  const auto* revoke = std::get_if<KeyRevoke>(&body.payload);
  return revoke != nullptr && revoke->reason == RevokeReason::kCompromised;
}

std::string short_hex(const PublicKey& key) { return hex_encode(ByteView(key).first(8)); }

}  // namespace

bool KeyRecord::has_role(Role role) const {
  return std::binary_search(roles.begin(), roles.end(), role);
}

bool KeyRecord::in_scope(std::string_view subject) const {
  return std::binary_search(scope.begin(), scope.end(), std::string(subject));
}

const KeyRecord* KeyPolicy::find(const PublicKey& key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

std::string KeyPolicy::describe(const PublicKey& key) const {
  const KeyRecord* rec = find(key);
  return rec != nullptr ? rec->name : "key " + short_hex(key) + "…";
}

size_t KeyPolicy::active_admins_at(uint64_t index) const {
  size_t n = 0;
  for (const auto& [pk, rec] : keys_) n += rec.active_at(index) && rec.has_role(Role::kAdmin);
  return n;
}

Status KeyPolicy::check(uint64_t index, const EventBody& body,
                        std::string_view scope_subject) const {
  if (body.kind() == EventKind::kGenesis) {
    if (index != 0 || genesis_) {
      return rejected("a second genesis at index " + std::to_string(index) +
                      ": this ledger's genesis is at index 0 and there is only one");
    }
    const auto& g = std::get<Genesis>(body.payload);
    if (g.admins[0].public_key != body.author) {
      return rejected("the genesis must be signed by its first admin key");
    }
    std::set<PublicKey> seen{g.log_key};
    std::set<std::string> names{g.origin};
    for (const auto& admin : g.admins) {
      if (!seen.insert(admin.public_key).second || !names.insert(admin.name).second) {
        return rejected("genesis admin key '" + admin.name +
                        "' repeats another admin's or the log key's key or name");
      }
    }
    return Status::ok();
  }
  if (!genesis_) {
    return rejected(std::string("index 0 must hold the genesis event, not a ") +
                    event_kind_name(body.kind()) + "; run 'evledger init' to create a ledger");
  }
  EVL_RETURN_IF_ERROR(check_signer(index, body, scope_subject));
  if (const auto* grant = std::get_if<KeyGrant>(&body.payload)) return check_grant(index, *grant);
  if (const auto* revoke = std::get_if<KeyRevoke>(&body.payload)) {
    return check_revoke(index, *revoke);
  }
  return Status::ok();
}

Status KeyPolicy::check_signer(uint64_t index, const EventBody& body,
                               std::string_view subject) const {
  const KeyRecord* rec = find(body.author);
  if (rec == nullptr) {
    auto voided = voided_grants_.find(body.author);
    return denied("signer " + describe(body.author) + " is not a key of this ledger" +
                    (voided != voided_grants_.end() ? " (" + voided->second + ")"
                                                    : "; an admin must grant it a role first"));
  }
  if (rec->revoked_at && index >= *rec->revoked_at) {
    return denied("signer " + rec->name + " was revoked at index " +
                    std::to_string(*rec->revoked_at) + " (" +
                    revoke_reason_name(rec->revoke_reason) + ")");
  }
  auto need = [&](Role role, const char* what) -> Status {
    if (rec->has_role(role)) return Status::ok();
    return denied("signer " + rec->name + " has no " + role_name(role) + " role, which " +
                    what + " needs (granted: " + roles_text(rec->roles) + ")");
  };
  auto need_scope = [&](const char* role, std::string_view source) -> Status {
    if (rec->in_scope(source)) return Status::ok();
    return denied("signer " + rec->name + " has no " + role + " role for source " +
                    std::string(source) + " (granted: " + join(rec->scope) + ")");
  };
  switch (body.kind()) {
    case EventKind::kGenesis:
      break;
    case EventKind::kKeyGrant:
      return need(Role::kAdmin, "a key grant");
    case EventKind::kKeyRevoke:
      return need(Role::kAdmin, "a key revocation");
    case EventKind::kManifest:
      if (rec->has_role(Role::kImporter) || rec->has_role(Role::kRunner) ||
          rec->has_role(Role::kCurator)) {
        return Status::ok();
      }
      return denied("signer " + rec->name +
                      " needs an importer, runner or curator role to register a manifest "
                      "(granted: " + roles_text(rec->roles) + ")");
    case EventKind::kObservation:
      EVL_RETURN_IF_ERROR(need(Role::kImporter, "an observation"));
      return need_scope("importer", subject);
    case EventKind::kRerun:
      return need(Role::kRunner, "a controlled rerun");
    case EventKind::kAttestation:
      return Status::ok();  // any granted key may attest
    case EventKind::kCorrection: {
      const auto& c = std::get<Correction>(body.payload);
      if (rec->has_role(Role::kCurator)) return Status::ok();
      if (c.kind == Correction::Kind::kDisqualify && rec->has_role(Role::kImporter)) {
        return need_scope("importer", c.source);
      }
      return need(Role::kCurator, "a correction");
    }
  }
  return Status::ok();
}

Status KeyPolicy::check_grant(uint64_t index, const KeyGrant& grant) const {
  const PublicKey& pk = grant.key.public_key;
  if (pk == genesis_->log_key) {
    return rejected("the log key signs checkpoints only; grant roles to another key");
  }
  if (const KeyRecord* rec = find(pk)) {
    if (rec->revoked_at) {
      return rejected("key " + rec->name + " was revoked at index " +
                      std::to_string(*rec->revoked_at) +
                      "; revoked keys are never granted again: make a new key");
    }
    if (rec->name != grant.key.name) {
      return rejected("key " + rec->name + " is already granted under that name; a grant "
                      "cannot rename it to '" + grant.key.name + "'");
    }
    return Status::ok();
  }
  if (auto voided = voided_grants_.find(pk); voided != voided_grants_.end()) {
    return rejected("key " + grant.key.name + " was " + voided->second +
                    "; make a new key instead");
  }
  if (grant.key.name == genesis_->origin) {
    return rejected("key name '" + grant.key.name +
                    "' is the log's origin, which names the log key; choose another name");
  }
  for (const auto& [other_pk, rec] : keys_) {
    if (rec.name == grant.key.name) {
      return rejected("key name '" + grant.key.name +
                      "' belongs to another key already; names identify keys in messages and "
                      "must be unique");
    }
  }
  return Status::ok();
}

Status KeyPolicy::check_revoke(uint64_t index, const KeyRevoke& revoke) const {
  const KeyRecord* rec = find(revoke.public_key);
  if (rec == nullptr) {
    return rejected("cannot revoke " + describe(revoke.public_key) +
                    ": it is not a key of this ledger");
  }
  if (rec->revoked_at) {
    if (revoke.reason == RevokeReason::kCompromised &&
        rec->revoke_reason != RevokeReason::kCompromised) {
      if (revoke.void_from > *rec->revoked_at) {
        return rejected("--void-from " + std::to_string(revoke.void_from) + " is after " +
                        rec->name + "'s revocation at index " + std::to_string(*rec->revoked_at) +
                        "; it signed nothing after that");
      }
      return Status::ok();  // a retired or rotated key found compromised afterwards
    }
    return rejected("key " + rec->name + " was already revoked at index " +
                    std::to_string(*rec->revoked_at) + " (" +
                    revoke_reason_name(rec->revoke_reason) + ")");
  }
  if (revoke.reason == RevokeReason::kCompromised && revoke.void_from > index) {
    return rejected("--void-from " + std::to_string(revoke.void_from) +
                    " is after this revocation's own index " + std::to_string(index));
  }
  if (rec->has_role(Role::kAdmin) && active_admins_at(index) <= 1) {
    return rejected("revoking " + rec->name +
                    " would leave the ledger without an active admin; grant another admin first");
  }
  return Status::ok();
}

void KeyPolicy::apply(uint64_t index, const EventBody& body) {
  EventKind kind = body.kind();
  if (kind != EventKind::kGenesis && kind != EventKind::kKeyGrant &&
      kind != EventKind::kKeyRevoke) {
    return;
  }
  key_events_.push_back({index, body});
  if (is_compromise(body)) {
    replay();
  } else {
    apply_key_event(index, body, true);
  }
}

void KeyPolicy::apply_key_event(uint64_t index, const EventBody& body, bool voids) {
  if (const auto* g = std::get_if<Genesis>(&body.payload)) {
    genesis_ = *g;
    for (const auto& admin : g->admins) {
      KeyRecord rec;
      rec.public_key = admin.public_key;
      rec.name = admin.name;
      rec.roles = {Role::kAdmin};
      rec.granted_at = 0;
      keys_[admin.public_key] = rec;
    }
  } else if (const auto* grant = std::get_if<KeyGrant>(&body.payload)) {
    auto [it, fresh] = keys_.try_emplace(grant->key.public_key);
    KeyRecord& rec = it->second;
    if (fresh) {
      rec.public_key = grant->key.public_key;
      rec.name = grant->key.name;
      rec.granted_at = index;
    }
    merge_sorted(rec.roles, grant->roles);
    merge_sorted(rec.scope, grant->scope);
  } else if (const auto* revoke = std::get_if<KeyRevoke>(&body.payload)) {
    auto it = keys_.find(revoke->public_key);
    if (it == keys_.end()) return;  // after a replay its grant may be void: nothing to revoke
    KeyRecord& rec = it->second;
    bool compromise = revoke->reason == RevokeReason::kCompromised;
    if (rec.revoked_at) {
      // Only a compromise may follow a retirement or rotation: the key stays revoked from
      // the first revocation, and its events from void_from up to there become void.
      if (!compromise || rec.revoke_reason == RevokeReason::kCompromised) return;
    } else {
      rec.revoked_at = index;
    }
    rec.revoke_reason = revoke->reason;
    if (compromise && voids) rec.void_from = revoke->void_from;
  }
}

bool KeyPolicy::fold(const std::map<PublicKey, uint64_t>& void_from,
                     const std::set<uint64_t>& effective, uint64_t stands_index) {
  genesis_.reset();
  keys_.clear();
  voided_grants_.clear();
  bool stands = false;
  for (const auto& event : key_events_) {
    const PublicKey& author = event.body.author;
    if (event.index > 0 && effective.count(event.index) == 0) {
      const KeyRecord* rec = find(author);
      auto v = void_from.find(author);
      bool void_event = rec == nullptr || !rec->active_at(event.index) ||
                        (v != void_from.end() && v->second <= event.index);
      if (void_event) {
        const auto* grant = std::get_if<KeyGrant>(&event.body.payload);
        if (grant != nullptr && find(grant->key.public_key) == nullptr) {
          voided_grants_.try_emplace(grant->key.public_key,
                                     "granted at index " + std::to_string(event.index) + " by " +
                                         describe(author) + ", whose events there are void");
        }
        continue;
      }
    }
    if (event.index == stands_index) stands = true;
    // A compromise revocation that stands but did not take effect still revokes, forward
    // only; it voids nothing.
    apply_key_event(event.index, event.body, effective.count(event.index) != 0);
  }
  return stands;
}

void KeyPolicy::replay() {
  // Compromises are decided from the last to the first: one takes effect when it stands given
  // the effective compromises after it and, from the previous pass, those before it. Passes
  // repeat until the decisions settle (a later decision can restore the author of an earlier
  // one). An effective one always stands afterwards, even when it voids its own author: a key
  // reported stolen by itself must end up revoked.
  constexpr int kMaxPasses = 16;  // circular reports between voided admins may not settle
  std::set<uint64_t> previous;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    std::set<uint64_t> effective;
    for (auto it = key_events_.rbegin(); it != key_events_.rend(); ++it) {
      if (!is_compromise(it->body)) continue;
      std::set<uint64_t> decided = effective;
      decided.insert(previous.begin(), previous.lower_bound(it->index));
      if (fold(void_map(decided), decided, it->index)) effective.insert(it->index);
    }
    bool settled = effective == previous;
    previous = std::move(effective);
    if (settled) break;
  }
  fold(void_map(previous), previous, ~0ull);
}

std::map<PublicKey, uint64_t> KeyPolicy::void_map(const std::set<uint64_t>& effective) const {
  std::map<PublicKey, uint64_t> out;
  for (const auto& event : key_events_) {
    if (effective.count(event.index) == 0) continue;
    const auto& revoke = std::get<KeyRevoke>(event.body.payload);
    auto [slot, fresh] = out.try_emplace(revoke.public_key, revoke.void_from);
    if (!fresh) slot->second = std::min(slot->second, revoke.void_from);
  }
  return out;
}

bool KeyPolicy::voids_anything() const {
  if (!voided_grants_.empty()) return true;
  for (const auto& [pk, rec] : keys_) {
    if (rec.void_from) return true;
  }
  return false;
}

std::vector<Role> KeyPolicy::roles_at(const PublicKey& key, uint64_t index) const {
  std::vector<Role> roles;
  for (const auto& event : key_events_) {
    if (event.index > index) break;  // in log order
    if (const auto* g = std::get_if<Genesis>(&event.body.payload)) {
      for (const auto& admin : g->admins) {
        if (admin.public_key == key) merge_sorted(roles, std::vector<Role>{Role::kAdmin});
      }
    } else if (const auto* grant = std::get_if<KeyGrant>(&event.body.payload)) {
      if (grant->key.public_key == key && !void_cause(event.body.author, event.index)) {
        merge_sorted(roles, grant->roles);
      }
    }
  }
  return roles;
}

std::optional<std::string> KeyPolicy::void_cause(const PublicKey& author, uint64_t index) const {
  if (index == 0) return std::nullopt;
  const KeyRecord* rec = find(author);
  if (rec == nullptr || index < rec->granted_at) {
    auto voided = voided_grants_.find(author);
    if (voided != voided_grants_.end()) return "signer's grant is void: " + voided->second;
    return rec == nullptr ? "signer is not a key of this ledger"
                          : "signer was not granted until index " + std::to_string(rec->granted_at);
  }
  if (rec->void_from && index >= *rec->void_from && index < *rec->revoked_at) {
    return "signer " + rec->name + " was revoked as compromised at index " +
           std::to_string(*rec->revoked_at) + ", voiding its events from index " +
           std::to_string(*rec->void_from);
  }
  return std::nullopt;
}

}  // namespace evl
