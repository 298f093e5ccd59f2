#include "events/event.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>

#include "events/event.capnp.h"
#include "events/utf8.h"

namespace evl {

namespace {

namespace s = schema;

constexpr const char* kRoleNames[] = {"admin", "importer", "runner", "curator", "attestor"};
constexpr const char* kReasonNames[] = {"retired", "rotated", "compromised"};
constexpr const char* kAttestationNames[] = {"reproduced", "could_not_reproduce",
                                             "environment_note", "regression_observed"};
constexpr const char* kKindNames[] = {"genesis",     "key_grant", "key_revoke",
                                      "manifest",    "observation", "rerun",
                                      "attestation", "correction"};

template <typename E, size_t N>
std::optional<E> parse_name(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<E>(i);
  }
  return std::nullopt;
}

kj::ArrayPtr<const kj::byte> kj_bytes(ByteView b) { return kj::arrayPtr(b.data(), b.size()); }

// ---- encoding --------------------------------------------------------------------------
// Empty texts, data and lists are left unset (a null pointer), so each value has one encoding.

void encode_key_ref(s::KeyRef::Builder b, const KeyRef& k) {
  b.setPublicKey(kj_bytes(k.public_key));
  if (!k.name.empty()) b.setName(k.name);
}

void encode_manifest(s::Manifest::Builder b, const ManifestText& m) {
  if (!m.canonical.empty()) b.setCanonical(m.canonical);
  if (!m.metadata.empty()) b.setMetadata(m.metadata);
}

struct PayloadEncoder {
  s::EventBody::Builder b;

  void operator()(const Genesis& g) {
    auto out = b.initGenesis();
    if (!g.origin.empty()) out.setOrigin(g.origin);
    out.setLogKey(kj_bytes(g.log_key));
    if (!g.admins.empty()) {
      auto list = out.initAdmins(static_cast<unsigned>(g.admins.size()));
      for (unsigned i = 0; i < g.admins.size(); ++i) encode_key_ref(list[i], g.admins[i]);
    }
    out.setRerunToleranceMilli(g.rerun_tolerance_milli);
  }
  void operator()(const KeyGrant& g) {
    auto out = b.initKeyGrant();
    encode_key_ref(out.initKey(), g.key);
    if (!g.roles.empty()) {
      auto roles = out.initRoles(static_cast<unsigned>(g.roles.size()));
      for (unsigned i = 0; i < g.roles.size(); ++i) roles.set(i, static_cast<s::Role>(g.roles[i]));
    }
    if (!g.scope.empty()) {
      auto scope = out.initScope(static_cast<unsigned>(g.scope.size()));
      for (unsigned i = 0; i < g.scope.size(); ++i) scope.set(i, g.scope[i]);
    }
  }
  void operator()(const KeyRevoke& r) {
    auto out = b.initKeyRevoke();
    out.setPublicKey(kj_bytes(r.public_key));
    out.setReason(static_cast<s::RevokeReason>(r.reason));
    out.setVoidFrom(r.void_from);
  }
  void operator()(const ManifestEvent& m) { encode_manifest(b.initManifest(), m.manifest); }
  void operator()(const Observation& o) { encode_manifest(b.initObservation(), o.manifest); }
  void operator()(const Rerun& r) {
    auto out = b.initRerun();
    out.setTarget(kj_bytes(r.target));
    encode_manifest(out.initRun(), r.run);
    if (!r.cases.empty()) out.setCases(r.cases);
  }
  void operator()(const Attestation& a) {
    auto out = b.initAttestation();
    out.setTarget(kj_bytes(a.target));
    out.setType(static_cast<s::AttestationType>(a.type));
    if (!a.text.empty()) out.setText(a.text);
    if (!a.evidence_url.empty()) out.setEvidenceUrl(a.evidence_url);
    out.setObservedNs(a.observed_ns);
    if (!a.environment.empty()) out.setEnvironment(a.environment);
  }
  void operator()(const Correction& c) {
    auto out = b.initCorrection();
    if (!c.reason.empty()) out.setReason(c.reason);
    switch (c.kind) {
      case Correction::Kind::kRetract:
        out.setRetract(kj_bytes(c.target));
        break;
      case Correction::Kind::kSupersede: {
        auto sup = out.initSupersede();
        sup.setTarget(kj_bytes(c.target));
        sup.setReplacement(kj_bytes(c.replacement));
        break;
      }
      case Correction::Kind::kDisqualify: {
        auto dq = out.initDisqualify();
        if (!c.source.empty()) dq.setSource(c.source);
        dq.setTarget(kj_bytes(c.target));
        dq.setAtMs(c.at_ms);
        break;
      }
    }
  }
};

Bytes to_bytes(const kj::Array<capnp::word>& words) {
  auto bytes = words.asBytes();
  return Bytes(bytes.begin(), bytes.end());
}

// ---- decoding --------------------------------------------------------------------------

// Cap'n Proto reads whole words, and LMDB hands out 2-byte aligned values: those are copied
// first. Word-aligned bytes (a heap buffer, a body inside a decoded entry) are read in place.
struct AlignedMessage {
  kj::Array<capnp::word> words;
  kj::ArrayPtr<const capnp::word> segments[1];

  explicit AlignedMessage(ByteView bytes) {
    const size_t count = bytes.size() / sizeof(capnp::word);
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(capnp::word) == 0) {
      segments[0] = kj::arrayPtr(reinterpret_cast<const capnp::word*>(bytes.data()), count);
      return;
    }
    words = kj::heapArray<capnp::word>(count);
    std::memcpy(words.begin(), bytes.data(), count * sizeof(capnp::word));
    segments[0] = words.asPtr();
  }
};

capnp::ReaderOptions strict_options(size_t bytes) {
  capnp::ReaderOptions options;
  // Canonical messages have no far pointers or shared data: reading touches each word once.
  options.traversalLimitInWords = bytes / sizeof(capnp::word) + 64;
  options.nestingLimit = 16;
  return options;
}

Status need_len(ByteView data, size_t len, const char* field) {
  if (data.size() != len) {
    return rejected(std::string(field) + " must be " + std::to_string(len) + " bytes, found " +
                    std::to_string(data.size()));
  }
  return Status::ok();
}

template <size_t N>
Status read_fixed(capnp::Data::Reader data, std::array<uint8_t, N>& out, const char* field) {
  EVL_RETURN_IF_ERROR(need_len(ByteView(data.begin(), data.size()), N, field));
  std::memcpy(out.data(), data.begin(), N);
  return Status::ok();
}

Result<std::string> read_text(capnp::Text::Reader text, const char* field) {
  std::string out(text.cStr(), text.size());
  if (out.find('\0') != std::string::npos || !is_valid_utf8(out)) {
    return rejected(std::string(field) + " is not valid UTF-8 text without NUL bytes");
  }
  return out;
}

#define EVL_READ_TEXT(target, reader_expr, field)          \
  do {                                                     \
    auto evl_text_ = read_text((reader_expr), (field));    \
    if (!evl_text_) return evl_text_.error();              \
    (target) = std::move(evl_text_.value());               \
  } while (0)

template <typename E>
Status read_enum(uint16_t raw, uint16_t count, E& out, const char* field) {
  if (raw >= count) {
    return rejected(std::string(field) + " has unknown value " + std::to_string(raw));
  }
  out = static_cast<E>(raw);
  return Status::ok();
}

Status decode_key_ref(s::KeyRef::Reader r, KeyRef& out, const char* field) {
  EVL_RETURN_IF_ERROR(read_fixed(r.getPublicKey(), out.public_key, field));
  EVL_READ_TEXT(out.name, r.getName(), field);
  return Status::ok();
}

Status decode_manifest(s::Manifest::Reader r, ManifestText& out) {
  EVL_READ_TEXT(out.canonical, r.getCanonical(), "manifest canonical text");
  EVL_READ_TEXT(out.metadata, r.getMetadata(), "manifest metadata");
  return Status::ok();
}

Status decode_genesis(s::Genesis::Reader r, Genesis& g) {
  EVL_READ_TEXT(g.origin, r.getOrigin(), "genesis origin");
  EVL_RETURN_IF_ERROR(read_fixed(r.getLogKey(), g.log_key, "genesis log key"));
  for (auto admin : r.getAdmins()) {
    KeyRef k;
    EVL_RETURN_IF_ERROR(decode_key_ref(admin, k, "genesis admin key"));
    g.admins.push_back(std::move(k));
  }
  g.rerun_tolerance_milli = r.getRerunToleranceMilli();
  return Status::ok();
}

Status decode_grant(s::KeyGrant::Reader r, KeyGrant& g) {
  EVL_RETURN_IF_ERROR(decode_key_ref(r.getKey(), g.key, "granted key"));
  for (auto role : r.getRoles()) {
    Role out{};
    EVL_RETURN_IF_ERROR(read_enum(static_cast<uint16_t>(role), 5, out, "grant role"));
    g.roles.push_back(out);
  }
  for (auto scope : r.getScope()) {
    std::string out;
    EVL_READ_TEXT(out, scope, "grant scope");
    g.scope.push_back(std::move(out));
  }
  return Status::ok();
}

Status decode_revoke(s::KeyRevoke::Reader r, KeyRevoke& out) {
  EVL_RETURN_IF_ERROR(read_fixed(r.getPublicKey(), out.public_key, "revoked key"));
  EVL_RETURN_IF_ERROR(
      read_enum(static_cast<uint16_t>(r.getReason()), 3, out.reason, "revoke reason"));
  out.void_from = r.getVoidFrom();
  return Status::ok();
}

Status decode_rerun(s::Rerun::Reader r, Rerun& out) {
  EVL_RETURN_IF_ERROR(read_fixed(r.getTarget(), out.target, "rerun target"));
  EVL_RETURN_IF_ERROR(decode_manifest(r.getRun(), out.run));
  EVL_READ_TEXT(out.cases, r.getCases(), "rerun cases");
  return Status::ok();
}

Status decode_attestation(s::Attestation::Reader r, Attestation& out) {
  EVL_RETURN_IF_ERROR(read_fixed(r.getTarget(), out.target, "attestation target"));
  EVL_RETURN_IF_ERROR(
      read_enum(static_cast<uint16_t>(r.getType()), 4, out.type, "attestation type"));
  EVL_READ_TEXT(out.text, r.getText(), "attestation text");
  EVL_READ_TEXT(out.evidence_url, r.getEvidenceUrl(), "attestation evidence URL");
  out.observed_ns = r.getObservedNs();
  EVL_READ_TEXT(out.environment, r.getEnvironment(), "attestation environment");
  return Status::ok();
}

Status decode_correction(s::Correction::Reader r, Correction& out) {
  EVL_READ_TEXT(out.reason, r.getReason(), "correction reason");
  switch (r.which()) {
    case s::Correction::RETRACT:
      out.kind = Correction::Kind::kRetract;
      return read_fixed(r.getRetract(), out.target, "retract target");
    case s::Correction::SUPERSEDE:
      out.kind = Correction::Kind::kSupersede;
      EVL_RETURN_IF_ERROR(read_fixed(r.getSupersede().getTarget(), out.target, "superseded run"));
      return read_fixed(r.getSupersede().getReplacement(), out.replacement, "replacement run");
    case s::Correction::DISQUALIFY: {
      out.kind = Correction::Kind::kDisqualify;
      auto dq = r.getDisqualify();
      EVL_READ_TEXT(out.source, dq.getSource(), "disqualification source");
      out.at_ms = dq.getAtMs();
      return read_fixed(dq.getTarget(), out.target, "disqualified run");
    }
  }
  return rejected("correction has an unknown kind " + std::to_string(r.which()));
}

Status decode_payload(s::EventBody::Reader r, Payload& payload) {
  switch (r.which()) {
    case s::EventBody::GENESIS: {
      Genesis g;
      EVL_RETURN_IF_ERROR(decode_genesis(r.getGenesis(), g));
      payload = std::move(g);
      return Status::ok();
    }
    case s::EventBody::KEY_GRANT: {
      KeyGrant g;
      EVL_RETURN_IF_ERROR(decode_grant(r.getKeyGrant(), g));
      payload = std::move(g);
      return Status::ok();
    }
    case s::EventBody::KEY_REVOKE: {
      KeyRevoke k;
      EVL_RETURN_IF_ERROR(decode_revoke(r.getKeyRevoke(), k));
      payload = k;
      return Status::ok();
    }
    case s::EventBody::MANIFEST: {
      ManifestEvent m;
      EVL_RETURN_IF_ERROR(decode_manifest(r.getManifest(), m.manifest));
      payload = std::move(m);
      return Status::ok();
    }
    case s::EventBody::OBSERVATION: {
      Observation o;
      EVL_RETURN_IF_ERROR(decode_manifest(r.getObservation(), o.manifest));
      payload = std::move(o);
      return Status::ok();
    }
    case s::EventBody::RERUN: {
      Rerun x;
      EVL_RETURN_IF_ERROR(decode_rerun(r.getRerun(), x));
      payload = std::move(x);
      return Status::ok();
    }
    case s::EventBody::ATTESTATION: {
      Attestation a;
      EVL_RETURN_IF_ERROR(decode_attestation(r.getAttestation(), a));
      payload = std::move(a);
      return Status::ok();
    }
    case s::EventBody::CORRECTION: {
      Correction c;
      EVL_RETURN_IF_ERROR(decode_correction(r.getCorrection(), c));
      payload = std::move(c);
      return Status::ok();
    }
  }
  return rejected("event body has unknown kind " + std::to_string(r.which()) +
                  " (a newer evledger may know it)");
}

Status check_message_shape(ByteView bytes, const char* what) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    return rejected(std::string(what) + " is " + std::to_string(bytes.size()) +
                    " bytes: canonical Cap'n Proto is a whole number of 8-byte words");
  }
  return Status::ok();
}

template <typename T>
Status equals_canonical(ByteView bytes, const T& value,
                        kj::Array<capnp::word> (*encode)(const T&), const char* what) {
  kj::Array<capnp::word> words = encode(value);
  auto again = words.asBytes();
  if (again.size() != bytes.size() || !std::equal(again.begin(), again.end(), bytes.begin())) {
    return rejected(std::string(what) +
                    " is not in canonical form (single segment, no segment table, no unknown "
                    "fields, empty values left unset); re-encode it with `capnp convert "
                    "json:canonical` or evledger's encoder");
  }
  return Status::ok();
}

bool strictly_increasing_roles(const std::vector<Role>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (!(v[i - 1] < v[i])) return false;
  }
  return true;
}

bool strictly_increasing(const std::vector<std::string>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (!(v[i - 1] < v[i])) return false;
  }
  return true;
}

Status check_name(const std::string& name, const char* what) {
  if (name.empty()) return rejected(std::string(what) + " has no name");
  for (unsigned char c : name) {
    if (c <= 0x20 || c == 0x7f || c == '+') {
      return rejected(std::string(what) + " name '" + name +
                      "' has a space, a control character or '+', which C2SP key names forbid");
    }
  }
  if (has_unicode_space(name)) {
    return rejected(std::string(what) + " name '" + name +
                    "' has a Unicode space, which C2SP key names forbid");
  }
  return Status::ok();
}

Status check_manifest_text(const ManifestText& m, const char* what) {
  if (m.canonical.empty()) return rejected(std::string(what) + " has no manifest text");
  return Status::ok();
}

struct FieldChecker {
  Status operator()(const Genesis& g) const {
    EVL_RETURN_IF_ERROR(check_name(g.origin, "genesis origin"));
    if (g.admins.empty()) return rejected("genesis names no admin key");
    for (const auto& a : g.admins) EVL_RETURN_IF_ERROR(check_name(a.name, "genesis admin key"));
    return Status::ok();
  }
  Status operator()(const KeyGrant& g) const {
    EVL_RETURN_IF_ERROR(check_name(g.key.name, "granted key"));
    if (g.roles.empty()) return rejected("key grant names no role");
    if (!strictly_increasing_roles(g.roles)) {
      return rejected("key grant roles must be listed once each in order admin, importer, "
                      "runner, curator, attestor");
    }
    if (!strictly_increasing(g.scope)) {
      return rejected("key grant scope must be sorted and without duplicates");
    }
    for (const auto& sc : g.scope) {
      if (sc.empty()) return rejected("key grant scope has an empty entry");
    }
    return Status::ok();
  }
  Status operator()(const KeyRevoke& r) const {
    if (r.reason == RevokeReason::kCompromised && r.void_from == 0) {
      return rejected("a compromise revocation needs voidFrom >= 1 (index 0 is the genesis)");
    }
    if (r.reason != RevokeReason::kCompromised && r.void_from != 0) {
      return rejected(std::string("voidFrom is only for compromised keys, not ") +
                      revoke_reason_name(r.reason));
    }
    return Status::ok();
  }
  Status operator()(const ManifestEvent& m) const {
    return check_manifest_text(m.manifest, "manifest event");
  }
  Status operator()(const Observation& o) const {
    return check_manifest_text(o.manifest, "observation");
  }
  Status operator()(const Rerun& r) const { return check_manifest_text(r.run, "rerun"); }
  Status operator()(const Attestation& a) const {
    if (utf8_length(a.text) > kMaxAttestationText) {
      return rejected("attestation text has " + std::to_string(utf8_length(a.text)) +
                      " characters; the limit is " + std::to_string(kMaxAttestationText) +
                      ": shorten it and put the details behind its evidence URL");
    }
    return a.evidence_url.empty() ? Status::ok() : check_evidence_url(a.evidence_url);
  }

  static Status check_evidence_url(const std::string& url) {
    constexpr std::string_view kScheme = "https://";
    if (url.rfind(kScheme, 0) != 0) {
      return rejected("attestation evidence URL must start with https:// (lowercase), not " +
                      url + ": evidence is fetched over TLS; publish it at an https address");
    }
    if (url.find_first_of("/?#", kScheme.size()) == kScheme.size() || url.size() == kScheme.size()) {
      return rejected("attestation evidence URL " + url + " has no host after https://");
    }
    for (unsigned char c : url) {
      if (c <= 0x20 || c == 0x7f) {
        return rejected("attestation evidence URL holds a space or control character; "
                        "percent-encode it (%20)");
      }
    }
    if (utf8_length(url) > kMaxEvidenceUrl) {
      return rejected("attestation evidence URL has " + std::to_string(utf8_length(url)) +
                      " characters; the limit is " + std::to_string(kMaxEvidenceUrl) +
                      ": link to a shorter address");
    }
    return Status::ok();
  }
  Status operator()(const Correction& c) const {
    if (c.reason.empty()) return rejected("a correction needs a reason");
    if (c.kind == Correction::Kind::kDisqualify && c.source.empty()) {
      return rejected("a disqualification names its source");
    }
    if (c.kind == Correction::Kind::kSupersede && c.target == c.replacement) {
      return rejected("a run cannot supersede itself");
    }
    return Status::ok();
  }
};

}  // namespace

const char* role_name(Role role) { return kRoleNames[static_cast<size_t>(role)]; }
std::optional<Role> parse_role(std::string_view name) { return parse_name<Role>(kRoleNames, name); }
const char* revoke_reason_name(RevokeReason r) { return kReasonNames[static_cast<size_t>(r)]; }
std::optional<RevokeReason> parse_revoke_reason(std::string_view name) {
  return parse_name<RevokeReason>(kReasonNames, name);
}
const char* attestation_type_name(AttestationType t) {
  return kAttestationNames[static_cast<size_t>(t)];
}
std::optional<AttestationType> parse_attestation_type(std::string_view name) {
  return parse_name<AttestationType>(kAttestationNames, name);
}
const char* event_kind_name(EventKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

namespace {

// Words for a builder's first segment: enough for `bytes` of texts plus the structs, so that
// one right-sized allocation replaces MallocMessageBuilder's default 8 KiB zeroed segment.
unsigned first_segment_words(size_t bytes) { return static_cast<unsigned>(bytes / 8 + 64); }

size_t payload_text_bytes(const EventBody& body) {
  size_t n = 0;
  auto add = [&](const ManifestText& m) { n += m.canonical.size() + m.metadata.size(); };
  if (const auto* m = std::get_if<ManifestEvent>(&body.payload)) add(m->manifest);
  if (const auto* o = std::get_if<Observation>(&body.payload)) add(o->manifest);
  if (const auto* r = std::get_if<Rerun>(&body.payload)) {
    add(r->run);
    n += r->cases.size();
  }
  if (const auto* a = std::get_if<Attestation>(&body.payload)) {
    n += a->text.size() + a->evidence_url.size() + a->environment.size();
  }
  if (const auto* g = std::get_if<Genesis>(&body.payload)) n += 64 * g->admins.size();
  if (const auto* g = std::get_if<KeyGrant>(&body.payload)) {
    for (const auto& sc : g->scope) n += sc.size() + 8;
  }
  return n;
}

}  // namespace

namespace {

kj::Array<capnp::word> canonical_body_words(const EventBody& body) {
  capnp::MallocMessageBuilder message(first_segment_words(payload_text_bytes(body) + 256));
  auto b = message.initRoot<s::EventBody>();
  b.setSchemaVersion(body.schema_version);
  b.setAuthor(kj_bytes(body.author));
  b.setClaimedTimeMs(body.claimed_time_ms);
  std::visit(PayloadEncoder{b}, body.payload);
  return capnp::canonicalize(b.asReader());
}

kj::Array<capnp::word> canonical_entry_words(const SignedEvent& entry) {
  capnp::MallocMessageBuilder message(
      first_segment_words(entry.body.size() + entry.signatures.size() * 112));
  auto b = message.initRoot<s::SignedEvent>();
  if (!entry.body.empty()) b.setBody(kj_bytes(entry.body));
  if (!entry.signatures.empty()) {
    auto list = b.initSignatures(static_cast<unsigned>(entry.signatures.size()));
    for (unsigned i = 0; i < entry.signatures.size(); ++i) {
      list[i].setPublicKey(kj_bytes(entry.signatures[i].public_key));
      list[i].setSignature(kj_bytes(entry.signatures[i].signature));
    }
  }
  return capnp::canonicalize(b.asReader());
}

}  // namespace

Bytes encode_body(const EventBody& body) { return to_bytes(canonical_body_words(body)); }

Bytes encode_entry(const SignedEvent& entry) { return to_bytes(canonical_entry_words(entry)); }

Status check_body_fields(const EventBody& body) {
  if (body.schema_version != kSchemaVersion) {
    return rejected("event schema version " + std::to_string(body.schema_version) +
                    " is unknown; this evledger reads version " + std::to_string(kSchemaVersion));
  }
  return std::visit(FieldChecker{}, body.payload);
}

namespace {

// ---- reading in place ------------------------------------------------------------------------
// The encoder lays the common messages out one way for given field sizes, so a message in
// exactly that layout is checked word by word where it lies instead of being decoded and
// encoded again to compare (which cost as much as hashing it). Anything else is left to the
// full decoding, which says what is wrong or accepts it if only the in-place reading was too
// narrow: an in-place reading never accepts what the full decoding refuses, and the tests hold
// each to the encoder.

uint64_t word_at(ByteView bytes, size_t index) {
  uint64_t v = 0;
  for (size_t i = 8; i-- > 0;) v = (v << 8) | bytes[index * 8 + i];
  return v;
}

size_t words_for(size_t bytes) { return (bytes + 7) / 8; }

constexpr uint64_t kByteElements = 2, kInlineComposite = 7;

constexpr uint64_t struct_pointer(uint64_t offset, uint64_t data_words, uint64_t pointers) {
  return (offset << 2) | ((data_words | (pointers << 16)) << 32);
}

constexpr uint64_t list_pointer(uint64_t offset, uint64_t element_size, uint64_t count) {
  return (offset << 2) | 1 | ((element_size | (count << 3)) << 32);
}

// Whether bytes [from, from + size) are zero.
bool zero_bytes(ByteView bytes, size_t from, size_t size) {
  for (size_t i = from; i < from + size; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

// A non-empty text whose byte list (with its NUL) starts at word `at` and has `count` bytes:
// the text as read_text would read it, or nullopt when the encoder would not have written it so.
std::optional<std::string> text_in_place(ByteView bytes, size_t at, uint64_t count) {
  if (count < 2) return std::nullopt;  // an empty text is left unset
  const size_t begin = at * 8, size = count - 1;
  if (bytes[begin + size] != 0 || !zero_bytes(bytes, begin + count, words_for(count) * 8 - count)) {
    return std::nullopt;
  }
  std::string_view text(reinterpret_cast<const char*>(bytes.data()) + begin, size);
  if (text.find('\0') != std::string_view::npos || !is_valid_utf8(text)) return std::nullopt;
  return std::string(text);
}

// A manifest or observation body (the events of imports and most of any log). For canonical
// text of C bytes (with its NUL; Wc words), metadata of M bytes (0 when empty; Wm words), the
// layout is, with D = 2 data words (1 when the claimed time is 0) and P = 1 + D:
//
//   word 0        root struct pointer: D data words, 2 pointers
//   word 1        schemaVersion 1 | union tag << 16 (3 manifest, 4 observation)
//   word 2        claimedTimeMs (only when D = 2, and then non-zero)
//   word P        author: byte list pointer, offset 1, 32 bytes
//   word P+1      payload: struct pointer, offset 4, 0 data words, k pointers (2 with metadata)
//   P+2 .. P+5    the author's key
//   Q = P+6       canonical text pointer (offset k - 1), then the metadata pointer when k = 2
//   Q+k ..        the canonical text, NUL, zero padding; then the metadata likewise
bool read_manifest_body_in_place(ByteView bytes, EventBody& out) {
  const size_t words = bytes.size() / 8;
  if (bytes.size() % 8 != 0 || words < 10) return false;
  const uint64_t root = word_at(bytes, 0);
  const uint64_t data_words = (root >> 32) & 0xffff;
  if ((data_words != 1 && data_words != 2) || root != struct_pointer(0, data_words, 2)) return false;
  const uint64_t head = word_at(bytes, 1);
  const uint64_t tag = head >> 16;
  if ((head & 0xffff) != kSchemaVersion || (tag != 3 && tag != 4)) return false;
  int64_t claimed = 0;
  if (data_words == 2) {
    claimed = static_cast<int64_t>(word_at(bytes, 2));
    if (claimed == 0) return false;  // a zero time is truncated away
  }
  const size_t p = 1 + data_words, q = p + 6;
  if (word_at(bytes, p) != list_pointer(1, kByteElements, 32)) return false;
  const uint64_t payload = word_at(bytes, p + 1);
  const uint64_t pointers = payload >> 48;
  if ((pointers != 1 && pointers != 2) || payload != struct_pointer(4, 0, pointers)) return false;
  if (q + pointers > words) return false;
  const uint64_t canonical_count = word_at(bytes, q) >> 35;
  if (word_at(bytes, q) != list_pointer(pointers - 1, kByteElements, canonical_count)) return false;
  const size_t canonical_at = q + pointers, metadata_at = canonical_at + words_for(canonical_count);
  uint64_t metadata_count = 0;
  if (pointers == 2) {
    metadata_count = word_at(bytes, q + 1) >> 35;
    if (word_at(bytes, q + 1) !=
        list_pointer(metadata_at - q - 2, kByteElements, metadata_count)) {
      return false;
    }
  }
  if (words != metadata_at + words_for(metadata_count)) return false;
  ManifestText text;
  auto canonical = text_in_place(bytes, canonical_at, canonical_count);
  if (!canonical) return false;
  text.canonical = std::move(*canonical);
  if (pointers == 2) {
    auto metadata = text_in_place(bytes, metadata_at, metadata_count);
    if (!metadata) return false;
    text.metadata = std::move(*metadata);
  }
  out.schema_version = kSchemaVersion;
  std::memcpy(out.author.data(), bytes.data() + (p + 2) * 8, 32);
  out.claimed_time_ms = claimed;
  if (tag == 3) {
    out.payload = ManifestEvent{std::move(text)};
  } else {
    out.payload = Observation{std::move(text)};
  }
  return true;
}

}  // namespace

bool body_in_canonical_layout(ByteView body) {
  EventBody ignored;
  return read_manifest_body_in_place(body, ignored);
}

Result<EventBody> decode_body(ByteView bytes) {
  if (EventBody body; read_manifest_body_in_place(bytes, body)) {
    EVL_RETURN_IF_ERROR(check_body_fields(body));
    return body;
  }
  EVL_RETURN_IF_ERROR(check_message_shape(bytes, "event body"));
  EventBody body;
  try {
    AlignedMessage aligned(bytes);
    capnp::SegmentArrayMessageReader reader(aligned.segments, strict_options(bytes.size()));
    auto r = reader.getRoot<s::EventBody>();
    body.schema_version = r.getSchemaVersion();
    if (body.schema_version != kSchemaVersion) {
      return rejected("event schema version " + std::to_string(body.schema_version) +
                      " is unknown; this evledger reads version " +
                      std::to_string(kSchemaVersion));
    }
    EVL_RETURN_IF_ERROR(read_fixed(r.getAuthor(), body.author, "event author"));
    body.claimed_time_ms = r.getClaimedTimeMs();
    EVL_RETURN_IF_ERROR(decode_payload(r, body.payload));
  } catch (const kj::Exception& e) {
    return rejected(std::string("event body is not a valid Cap'n Proto message: ") +
                    e.getDescription().cStr());
  }
  EVL_RETURN_IF_ERROR(equals_canonical(bytes, body, &canonical_body_words, "event body"));
  EVL_RETURN_IF_ERROR(check_body_fields(body));
  return body;
}

namespace {

// ---- the envelope read in place (see "reading in place" above) -------------------------------
// canonical_entry_words lays every valid envelope out one way. For a body of L bytes
// (W = ceil(L / 8) words) and n signatures:
//
//   word 0          root struct pointer: 0 data words, 2 pointers
//   word 1          body: list pointer, offset 1, bytes, count L
//   word 2          signatures: list pointer, offset W, inline composite, 2n words
//   words 3 ..      the body, zero-padded to W words
//   word T = 3 + W  the list's tag: n elements of 0 data words and 2 pointers
//   T+1+2i, T+2+2i  signature i's publicKey and signature pointers (byte lists of 32 and 64)
//   T+1+2n+12i ..   signature i's public key (4 words), then its signature (8 words)
//
// Anything else is left to decode_canonical_entry.

struct EnvelopeView {
  ByteView body;
  std::vector<EntrySignature> signatures;
};

bool read_envelope_in_place(ByteView bytes, EnvelopeView& out) {
  const size_t words = bytes.size() / 8;
  if (bytes.size() % 8 != 0 || bytes.size() > kMaxEntryBytes || words < 4) return false;
  if (word_at(bytes, 0) != struct_pointer(0, 0, 2)) return false;
  const uint64_t body_pointer = word_at(bytes, 1);
  const uint64_t body_size = body_pointer >> 35;
  if (body_size == 0 || body_pointer != list_pointer(1, kByteElements, body_size)) return false;
  const size_t body_words = words_for(body_size);
  const size_t tag = 3 + body_words;
  if (tag >= words) return false;
  const uint64_t count = (word_at(bytes, tag) & 0xffffffffu) >> 2;
  if (count == 0 || count > kMaxSignatures || word_at(bytes, tag) != struct_pointer(count, 0, 2) ||
      word_at(bytes, 2) != list_pointer(body_words, kInlineComposite, 2 * count) ||
      words != tag + 1 + 14 * count) {
    return false;
  }
  if (!zero_bytes(bytes, 24 + body_size, 8 * body_words - body_size)) return false;
  out.body = bytes.subspan(24, body_size);
  out.signatures.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t pointer = tag + 1 + 2 * i, data = tag + 1 + 2 * count + 12 * i;
    if (word_at(bytes, pointer) != list_pointer(data - pointer - 1, kByteElements, 32) ||
        word_at(bytes, pointer + 1) != list_pointer(data + 4 - pointer - 2, kByteElements, 64)) {
      return false;
    }
    std::memcpy(out.signatures[i].public_key.data(), bytes.data() + data * 8, 32);
    std::memcpy(out.signatures[i].signature.data(), bytes.data() + data * 8 + 32, 64);
  }
  return true;
}

Result<SignedEvent> decode_canonical_entry(ByteView bytes) {
  if (bytes.size() > kMaxEntryBytes) {
    return rejected("entry is " + std::to_string(bytes.size()) + " bytes; the limit is " +
                    std::to_string(kMaxEntryBytes) + " (the tile bundle's 16-bit length prefix)");
  }
  EVL_RETURN_IF_ERROR(check_message_shape(bytes, "entry"));
  SignedEvent entry;
  try {
    AlignedMessage aligned(bytes);
    capnp::SegmentArrayMessageReader reader(aligned.segments, strict_options(bytes.size()));
    auto r = reader.getRoot<s::SignedEvent>();
    auto body = r.getBody();
    entry.body.assign(body.begin(), body.end());
    auto sigs = r.getSignatures();
    if (sigs.size() > kMaxSignatures) {
      return rejected("entry has " + std::to_string(sigs.size()) + " signatures; the limit is " +
                      std::to_string(kMaxSignatures));
    }
    for (auto sig : sigs) {
      EntrySignature out;
      EVL_RETURN_IF_ERROR(read_fixed(sig.getPublicKey(), out.public_key, "signature public key"));
      EVL_RETURN_IF_ERROR(read_fixed(sig.getSignature(), out.signature, "signature"));
      entry.signatures.push_back(out);
    }
  } catch (const kj::Exception& e) {
    return rejected(std::string("entry is not a valid Cap'n Proto message: ") +
                    e.getDescription().cStr());
  }
  EVL_RETURN_IF_ERROR(equals_canonical(bytes, entry, &canonical_entry_words, "entry envelope"));
  if (entry.body.empty()) return rejected("entry has no body");
  if (entry.signatures.empty()) return rejected("entry has no signature; at least one is needed");
  return entry;
}

}  // namespace

bool entry_in_canonical_layout(ByteView entry) {
  EnvelopeView view;
  return read_envelope_in_place(entry, view);
}

Result<SignedEvent> decode_entry(ByteView bytes) {
  EnvelopeView view;
  if (!read_envelope_in_place(bytes, view)) return decode_canonical_entry(bytes);
  return SignedEvent{Bytes(view.body.begin(), view.body.end()), std::move(view.signatures)};
}

namespace {

// The envelope read in place, or, in any other layout, decoded whole into `decoded`, which then
// holds the body that `view` refers to.
Status read_envelope(ByteView bytes, EnvelopeView& view, SignedEvent& decoded) {
  if (read_envelope_in_place(bytes, view)) return Status::ok();
  auto slow = decode_canonical_entry(bytes);
  if (!slow) return slow.error();
  decoded = std::move(slow.value());
  view.body = decoded.body;
  view.signatures = std::move(decoded.signatures);
  return Status::ok();
}

}  // namespace

Result<EventBody> decode_entry_body(ByteView entry, Digest& id) {
  EnvelopeView view;
  SignedEvent decoded;
  EVL_RETURN_IF_ERROR(read_envelope(entry, view, decoded));
  auto body = decode_body(view.body);
  if (body) id = event_id(view.body);
  return body;
}

Result<CheckedEntry> check_entry(ByteView bytes) {
  EnvelopeView entry;
  SignedEvent decoded;
  EVL_RETURN_IF_ERROR(read_envelope(bytes, entry, decoded));
  auto body = decode_body(entry.body);
  if (!body) return body.error();
  CheckedEntry out;
  out.id = event_id(entry.body);
  if (entry.signatures[0].public_key != body->author) {
    return rejected("the first signature must be the author's; it is by another key");
  }
  // One buffer per thread for the signed message: the checks run on every core for every
  // entry, and the body is up to 64 KiB.
  thread_local Bytes message;
  pae_into(kEventPayloadType, entry.body, message);
  for (size_t i = 0; i < entry.signatures.size(); ++i) {
    const auto& sig = entry.signatures[i];
    for (size_t j = 0; j < i; ++j) {
      if (entry.signatures[j].public_key == sig.public_key) {
        return rejected("signature " + std::to_string(i) + " repeats the key of signature " +
                        std::to_string(j));
      }
    }
    if (!ed25519_verify(sig.public_key, message, sig.signature)) {
      return rejected("signature " + std::to_string(i) + " by key " +
                      hex_encode(ByteView(sig.public_key).first(8)) +
                      "… does not verify over the DSSE PAE of the body");
    }
    out.signers.push_back(sig.public_key);
  }
  out.body = std::move(body.value());
  return out;
}

}  // namespace evl
