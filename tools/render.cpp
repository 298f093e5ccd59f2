#include "tools/render.h"

#include <ctime>

#include <nlohmann/json.hpp>

#include "events/utf8.h"

namespace evl::cli {

namespace {

using nlohmann::ordered_json;

std::string hex(ByteView b) { return hex_encode(b); }

ordered_json roles_json(const std::vector<Role>& roles) {
  ordered_json out = ordered_json::array();
  for (Role r : roles) out.push_back(role_name(r));
  return out;
}

ordered_json manifest_json(const ManifestText& m) {
  ordered_json out;
  out["digest"] = digest_text(sha256(as_bytes(m.canonical)));
  auto parsed = ordered_json::parse(m.canonical, nullptr, false);
  out["manifest"] = parsed.is_discarded() ? ordered_json(m.canonical) : parsed;
  if (!m.metadata.empty()) {
    auto meta = ordered_json::parse(m.metadata, nullptr, false);
    out["metadata"] = meta.is_discarded() ? ordered_json(m.metadata) : meta;
  }
  return out;
}

struct PayloadJson {
  const KeyPolicy& keys;

  ordered_json operator()(const Genesis& g) const {
    ordered_json admins = ordered_json::array();
    for (const auto& a : g.admins) admins.push_back({{"name", a.name}, {"publicKey", hex(a.public_key)}});
    return {{"origin", g.origin}, {"logKey", hex(g.log_key)}, {"admins", admins},
            {"rerunTolerance", g.rerun_tolerance_milli / 1000.0}};
  }
  ordered_json operator()(const KeyGrant& g) const {
    return {{"name", g.key.name}, {"publicKey", hex(g.key.public_key)},
            {"roles", roles_json(g.roles)}, {"scope", g.scope}};
  }
  ordered_json operator()(const KeyRevoke& r) const {
    ordered_json out = {{"key", keys.describe(r.public_key)},
                        {"publicKey", hex(r.public_key)},
                        {"reason", revoke_reason_name(r.reason)}};
    if (r.reason == RevokeReason::kCompromised) out["voidFrom"] = r.void_from;
    return out;
  }
  ordered_json operator()(const ManifestEvent& m) const { return manifest_json(m.manifest); }
  ordered_json operator()(const Observation& o) const { return manifest_json(o.manifest); }
  ordered_json operator()(const Rerun& r) const {
    ordered_json out = {{"target", digest_text(r.target)}, {"run", manifest_json(r.run)}};
    if (!r.cases.empty()) {
      auto cases = ordered_json::parse(r.cases, nullptr, false);
      out["cases"] = cases.is_discarded() ? ordered_json(r.cases) : cases;
    }
    return out;
  }
  ordered_json operator()(const Attestation& a) const {
    ordered_json out = {{"target", digest_text(a.target)},
                        {"type", attestation_type_name(a.type)},
                        {"text", a.text}};
    if (!a.evidence_url.empty()) out["evidenceUrl"] = a.evidence_url;
    if (a.observed_ns != 0) out["observedNs"] = a.observed_ns;
    if (!a.environment.empty()) out["environment"] = a.environment;
    return out;
  }
  ordered_json operator()(const Correction& c) const {
    static const char* kNames[] = {"retract", "supersede", "disqualify"};
    ordered_json out = {{"type", kNames[static_cast<int>(c.kind)]},
                        {"target", digest_text(c.target)},
                        {"reason", c.reason}};
    if (c.kind == Correction::Kind::kSupersede) out["replacement"] = digest_text(c.replacement);
    if (c.kind == Correction::Kind::kDisqualify) {
      out["source"] = c.source;
      out["at"] = format_time_ms(c.at_ms);
    }
    return out;
  }
};

ordered_json to_json(uint64_t index, const SignedEvent& entry, const EventBody& body,
                     const KeyPolicy& keys) {
  ordered_json sigs = ordered_json::array();
  for (const auto& s : entry.signatures) {
    sigs.push_back({{"signer", keys.describe(s.public_key)},
                    {"publicKey", hex(s.public_key)},
                    {"signature", hex(s.signature)}});
  }
  ordered_json out = {{"index", index},
                      {"id", digest_text(event_id(entry.body))},
                      {"kind", event_kind_name(body.kind())},
                      {"author", keys.describe(body.author)},
                      {"claimedTime", format_time_ms(body.claimed_time_ms)},
                      {"schemaVersion", body.schema_version},
                      {"signatures", sigs}};
  out[event_kind_name(body.kind())] = std::visit(PayloadJson{keys}, body.payload);
  if (auto cause = keys.void_cause(body.author, index)) out["void"] = *cause;
  return out;
}

}  // namespace

std::string visible_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    out += visible_text(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    out.push_back('\n');
    start = end + 1;
  }
}

std::string format_time_ms(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  int millis = static_cast<int>(ms % 1000);
  if (millis < 0) {
    millis += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::string entry_json(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys) {
  return to_json(index, entry, body, keys).dump(-1, ' ', false,
                                                ordered_json::error_handler_t::replace);
}

std::string entry_text(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys) {
  // JSON escapes C0 controls in its strings; the rest (DEL, C1, bidi marks) is made visible.
  return visible_lines(to_json(index, entry, body, keys)
                           .dump(2, ' ', false, ordered_json::error_handler_t::replace)) +
         "\n";
}

std::string entry_line(uint64_t index, const SignedEvent& entry, const EventBody& body,
                       const KeyPolicy& keys) {
  std::string summary;
  if (const auto* g = std::get_if<KeyGrant>(&body.payload)) {
    std::string roles;
    for (Role r : g->roles) roles += std::string(roles.empty() ? "" : ",") + role_name(r);
    summary = g->key.name + " as " + roles;
  } else if (const auto* r = std::get_if<KeyRevoke>(&body.payload)) {
    summary = keys.describe(r->public_key) + " (" + revoke_reason_name(r->reason) + ")";
  } else if (const auto* g0 = std::get_if<Genesis>(&body.payload)) {
    summary = "origin " + g0->origin;
  } else if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) {
    summary = digest_text(sha256(as_bytes(m->manifest.canonical))).substr(0, 19) + "…";
  } else if (const auto* o = std::get_if<Observation>(&body.payload)) {
    summary = digest_text(sha256(as_bytes(o->manifest.canonical))).substr(0, 19) + "…";
  }
  char head[64];
  std::snprintf(head, sizeof head, "%8llu  %-11s  ", static_cast<unsigned long long>(index),
                event_kind_name(body.kind()));
  std::string line = std::string(head) + digest_text(event_id(entry.body)).substr(0, 23) +
                     "…  " + format_time_ms(body.claimed_time_ms) + "  " +
                     keys.describe(body.author) + (summary.empty() ? "" : "  " + summary);
  if (keys.void_cause(body.author, index)) line += "  [void]";
  return visible_text(line);
}

Result<StoredEvent> decode_stored_entry(uint64_t index, ByteView stored) {
  auto entry = decode_entry(stored);
  auto body = entry ? decode_body(entry->body) : Result<EventBody>(entry.error());
  if (!body) {
    return corrupt("stored entry " + std::to_string(index) + ": " + body.error().message() +
                   "; run evledger verify");
  }
  return StoredEvent{std::move(*entry), std::move(*body)};
}

Result<std::string> stored_entry_json(uint64_t index, ByteView stored, const KeyPolicy& keys) {
  auto event = decode_stored_entry(index, stored);
  if (!event) return event.error();
  return entry_json(index, event->entry, event->body, keys);
}

std::vector<std::string> key_registry_json(const KeyPolicy& keys, std::string_view from,
                                           size_t limit, std::optional<std::string>& next) {
  std::vector<std::string> out;
  next.reset();
  for (const auto& [pk, rec] : keys.keys()) {
    std::string hex_key = hex(pk);
    if (hex_key < from) continue;
    if (out.size() == limit) {
      next = std::move(hex_key);
      break;
    }
    ordered_json roles = roles_json(rec.roles);
    ordered_json j = {{"name", rec.name},
                      {"verifierKey", VerifierKey::of(rec.name, pk).to_string()},
                      {"roles", roles},
                      {"scope", rec.scope},
                      {"grantedAt", rec.granted_at}};
    if (rec.revoked_at) {
      j["revokedAt"] = *rec.revoked_at;
      j["reason"] = revoke_reason_name(rec.revoke_reason);
    }
    if (rec.void_from) j["voidFrom"] = *rec.void_from;
    out.push_back(j.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
  }
  return out;
}

}  // namespace evl::cli
