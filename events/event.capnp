@0xfe0bee2af48ff6d6;
# events/event.capnp — the bytes of evledger's log entries.
#
# An entry is the canonical encoding (single segment, no segment table) of SignedEvent; its body
# is the canonical encoding of EventBody. SignedEvent and Signature are normative (DESIGN.md):
# their ordinals and types never change. EventBody is evledger's own: fields are only appended;
# a change of meaning is a new struct and a new schemaVersion. events/FORMAT.md draws every byte.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("evl::schema");

struct SignedEvent @0xba4cb27d6d722721 {
  body @0 :Data;                    # canonical EventBody bytes; event id = SHA-256(body)
  signatures @1 :List(Signature);   # DSSE v1 signatures over PAE(type, body); the first is the author's
}

struct Signature @0xdd14c1c8fe0d8f65 {
  publicKey @0 :Data;               # 32-byte Ed25519 public key
  signature @1 :Data;               # 64-byte Ed25519 signature
}

struct EventBody @0xe6578d22e51b924f {
  schemaVersion @0 :UInt16;         # 1
  author @1 :Data;                  # 32-byte Ed25519 public key; equals signatures[0].publicKey
  claimedTimeMs @2 :Int64;          # the author's claimed time, milliseconds since 1970 UTC
  union {
    genesis @3 :Genesis;
    keyGrant @4 :KeyGrant;
    keyRevoke @5 :KeyRevoke;
    manifest @6 :Manifest;          # a KernelIndex manifest registered by digest
    observation @7 :Manifest;       # a source-reported BenchmarkRun (spec.sourceNative present)
    rerun @8 :Rerun;
    attestation @9 :Attestation;
    correction @10 :Correction;
  }
}

struct KeyRef @0xaef6778b02017570 {
  publicKey @0 :Data;               # 32 bytes
  name @1 :Text;                    # C2SP key name: no spaces, no '+'
}

struct Genesis @0x995c0c53bf9132f2 {
  origin @0 :Text;                  # the log's origin line; also the log key's name
  logKey @1 :Data;                  # 32-byte public key that signs checkpoints
  admins @2 :List(KeyRef);          # the first admins; admins[0] authors this event
  rerunToleranceMilli @3 :UInt32;   # tolerance policy v1: delta in thousandths (50 = 0.05)
}

enum Role @0xb6ee53722f11e1ef {
  admin @0;
  importer @1;
  runner @2;
  curator @3;
  attestor @4;
}

struct KeyGrant @0x9280fd448b3d8e9c {
  key @0 :KeyRef;
  roles @1 :List(Role);             # strictly increasing, at least one
  scope @2 :List(Text);             # source slugs (importers), owner and host ids (runners); sorted, unique
}

enum RevokeReason @0xd076952ddd2f1d2a {
  retired @0;
  rotated @1;
  compromised @2;
}

struct KeyRevoke @0xf03a7466c18fb56b {
  publicKey @0 :Data;
  reason @1 :RevokeReason;
  voidFrom @2 :UInt64;              # compromised only: the key's events from this index on are void (>= 1); else 0
}

struct Manifest @0x8f5e75f8d32e51d8 {
  canonical @0 :Text;               # RFC 8785 JSON of {apiVersion, kind, spec}; digest = SHA-256 of it
  metadata @1 :Text;                # RFC 8785 JSON of the manifest's metadata (not in the digest), or empty
}

struct Rerun @0xfbfddb2da1ae2e5a {
  target @0 :Data;                  # 32-byte digest of the observed run's manifest
  run @1 :Manifest;                 # the rerun's BenchmarkRun manifest (no sourceNative)
  cases @2 :Text;                   # RFC 8785 JSON array of per-case results, or empty
}

enum AttestationType @0xde7e78c22c80b381 {
  reproduced @0;
  couldNotReproduce @1;
  environmentNote @2;
  regressionObserved @3;
}

struct Attestation @0x955c8c98f596fad2 {
  target @0 :Data;                  # 32-byte run digest
  type @1 :AttestationType;
  text @2 :Text;                    # at most 2000 characters
  evidenceUrl @3 :Text;             # https URL or empty
  observedNs @4 :UInt64;            # 0 when not given
  environment @5 :Text;             # free-form environment summary, or empty
}

struct Correction @0xa795f17b14700703 {
  reason @0 :Text;                  # required
  union {
    retract @1 :Data;               # 32-byte run digest
    supersede @2 :Supersede;
    disqualify @3 :Disqualify;
  }
}

struct Supersede @0x92139adde51dd4bc {
  target @0 :Data;                  # the superseded run digest
  replacement @1 :Data;             # the run digest that replaces it
}

struct Disqualify @0xa4a94056f85f7eef {
  source @0 :Text;                  # the source slug; an importer needs it in its scope
  target @1 :Data;                  # 32-byte run digest
  atMs @2 :Int64;                   # when the source disqualified it
}
