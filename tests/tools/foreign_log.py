#!/usr/bin/env python3
"""A C2SP transparency log that is not evledger's, and a witness client: no evledger code, only
the public specs (c2sp.org/signed-note, tlog-checkpoint, tlog-cosignature, tlog-witness).

The log: an Ed25519 key of its own, an origin evledger never made, an RFC 6962 tree of made-up
leaves; its state (key seed, origin, leaf count) is a JSON file, so that separate commands see
one log. The client posts add-checkpoint requests to a witness over one kept-alive HTTP/1.1
connection and checks every answer against the spec: status codes, the 409 body and content
type, and each cosignature (key id SHA-256(name || "\\n" || 0x04 || pk)[:4], an 8-byte
big-endian time that is never 0, Ed25519 over "cosignature/v1\\ntime <t>\\n" || the body).

Usage:
  foreign_log.py keygen STATE ORIGIN SEED     make a log; print its verifier key
  foreign_log.py drive URL WITNESS_VKEY STATE every status of add-checkpoint, proofs good,
                                              bad and from 0, the monitoring endpoint
  foreign_log.py expect-size URL WITNESS_VKEY STATE SIZE   old 0 gets 409 with SIZE, and the
                                              monitoring endpoint the log's latest (a restart)
  foreign_log.py race URL WITNESS_VKEY STATE ROUNDS   pairs of updates from one old size, sent
                                              at once on two connections: exactly one wins
  foreign_log.py grow URL WITNESS_VKEY STATE ACKS   grows the log by 1 to 8 leaves at a time
                                              and sends each checkpoint until the witness
                                              stops answering (a kill test): every size
                                              cosigned is appended to ACKS at once; a 409
                                              must give a size no smaller than any in ACKS
  foreign_log.py submit URL WITNESS_VKEY OLD CHECKPOINT_FILE [PROOF_JSON] [--expect STATUS]
                                              any log's checkpoint (an evledger one, with
                                              `evledger proof consistency` JSON)
Exit 0 when every check holds, 1 otherwise (the failures are printed).

Dependencies: python3 and python3-cryptography (Ed25519).
"""

import base64
import hashlib
import http.client
import json
import random
import sys
import threading
import urllib.parse

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (Ed25519PrivateKey,
                                                               Ed25519PublicKey)
from cryptography.hazmat.primitives import serialization

EM_DASH = "\u2014"
FAILURES = []
CHECKS = [0]


def check(condition, what):
    CHECKS[0] += 1
    if not condition:
        FAILURES.append(what)
        print("FAILED: " + what, file=sys.stderr)


def sha256(data):
    return hashlib.sha256(data).digest()


def b64(data):
    return base64.b64encode(data).decode()


# ---- RFC 6962 ---------------------------------------------------------------------------------

def largest_power_below(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves):
    if not leaves:
        return sha256(b"")
    if len(leaves) == 1:
        return leaves[0]
    k = largest_power_below(len(leaves))
    return sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def subproof(m, leaves, complete):
    n = len(leaves)
    if m == n:
        return [] if complete else [mth(leaves)]
    k = largest_power_below(n)
    if m <= k:
        return subproof(m, leaves[:k], complete) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def consistency_proof(m, leaves):
    return [] if m in (0, len(leaves)) else subproof(m, leaves, True)


# ---- the log ----------------------------------------------------------------------------------

class Log:
    def __init__(self, path):
        self.path = path
        with open(path) as f:
            state = json.load(f)
        self.origin = state["origin"]
        self.size = state["size"]
        self.key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(state["seed"]))
        self.seed = state["seed"]
        pk = self.key.public_key().public_bytes(serialization.Encoding.Raw,
                                                serialization.PublicFormat.Raw)
        self.key_id = sha256(self.origin.encode() + b"\n\x01" + pk)[:4]
        self.vkey = "%s+%s+%s" % (self.origin, self.key_id.hex(), b64(b"\x01" + pk))

    @staticmethod
    def create(path, origin, seed_hex):
        with open(path, "w") as f:
            json.dump({"origin": origin, "seed": seed_hex, "size": 0}, f)
        return Log(path)

    def save(self):
        with open(self.path, "w") as f:
            json.dump({"origin": self.origin, "seed": self.seed, "size": self.size}, f)

    def leaves(self, size=None):
        n = self.size if size is None else size
        return [sha256(b"\x00" + ("%s leaf %d" % (self.origin, i)).encode()) for i in range(n)]

    def body(self, size=None, root=None):
        n = self.size if size is None else size
        r = mth(self.leaves(n)) if root is None else root
        return "%s\n%d\n%s\n" % (self.origin, n, b64(r))

    def sign(self, body, key=None, key_id=None):
        key = key or self.key
        sig = key.sign(body.encode())
        return body + "\n" + "%s %s %s\n" % (EM_DASH, self.origin, b64((key_id or self.key_id) + sig))

    def request(self, old, proof=None, note=None):
        if proof is None:
            proof = consistency_proof(old, self.leaves())
        lines = "".join(b64(h) + "\n" for h in proof)
        return "old %d\n%s\n%s" % (old, lines, note if note is not None else self.sign(self.body()))


# ---- the witness client -----------------------------------------------------------------------

def parse_cosigner_vkey(text):
    name, key_id, key = text.strip().split("+", 2)
    raw = base64.b64decode(key)
    assert raw[0] == 0x04 and len(raw) == 33, "not a tlog-cosignature Ed25519 vkey"
    pk = raw[1:]
    assert sha256(name.encode() + b"\n\x04" + pk)[:4].hex() == key_id, "vkey key id mismatch"
    return name, bytes.fromhex(key_id), Ed25519PublicKey.from_public_bytes(pk)


def verify_cosignature(line, body, vkey):
    """The time of a valid cosignature line by `vkey` over `body`, else None."""
    name, key_id, pk = vkey
    prefix = EM_DASH + " " + name + " "
    if not line.startswith(prefix):
        return None
    raw = base64.b64decode(line[len(prefix):])
    if len(raw) != 4 + 8 + 64 or raw[:4] != key_id:
        return None
    time = int.from_bytes(raw[4:12], "big")
    message = ("cosignature/v1\ntime %d\n" % time).encode() + body.encode()
    try:
        pk.verify(raw[12:], message)
    except InvalidSignature:
        return None
    return time


class Witness:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.prefix = u.hostname, u.port, u.path.rstrip("/")
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def request(self, method, path, body=None):
        self.conn.request(method, self.prefix + path, body=body)
        r = self.conn.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read().decode("utf-8", "replace")

    def add(self, body):
        return self.request("POST", "/add-checkpoint", body.encode())


class Cosigned:
    """Checks 200 answers: one valid cosignature each, times never 0 and never going back."""

    def __init__(self, vkey):
        self.vkey = vkey
        self.last_time = 0

    def expect(self, answer, body, what):
        status, _, text = answer
        check(status == 200, "%s: HTTP %d, expected 200 (%s)" % (what, status, text[:200]))
        if status != 200:
            return None
        lines = text.splitlines()
        check(len(lines) == 1 and text.endswith("\n"), what + ": one cosignature line")
        time = verify_cosignature(lines[0], body, self.vkey) if lines else None
        check(time is not None, what + ": the cosignature verifies under the witness's vkey")
        if time is not None:
            check(time > 0, what + ": the cosignature's time is not 0")
            check(time >= self.last_time, what + ": the time does not go back")
            self.last_time = time
        return lines[0] + "\n" if lines else None


def expect_status(answer, status, what):
    got, ctype, text = answer
    check(got == status, "%s: HTTP %d, expected %d (%s)" % (what, got, status, text[:200]))


def expect_conflict(answer, size, what):
    expect_status(answer, 409, what)
    check(answer[1] == "text/x.tlog.size", what + ": Content-Type text/x.tlog.size, not " + answer[1])
    check(answer[2] == "%d\n" % size, "%s: 409 body %r, expected %r" % (what, answer[2], "%d\n" % size))


def drive(url, vkey_text, state):
    log, w = Log(state), Witness(url)
    vkey = parse_cosigner_vkey(vkey_text)
    cosigned = Cosigned(vkey)
    assert log.size == 0, "drive starts from a fresh log"
    # The empty tree has one root.
    expect_status(w.add(log.request(0, note=log.sign(log.body(0, sha256(b"x"))))), 422,
                  "size 0 with a root that is not the empty tree's")
    cosigned.expect(w.add(log.request(0)), log.body(), "the empty tree")
    log.size = 10
    expect_status(w.add(log.request(0, proof=[sha256(b"p")])), 422, "a non-empty proof from 0")
    cosigned.expect(w.add(log.request(0)), log.body(), "size 10 from 0")
    expect_conflict(w.add(log.request(0)), 10, "old 0 after size 10")
    expect_status(w.add(log.request(11, proof=[])), 400, "old 11 beyond size 10")
    log.size = 25
    good = consistency_proof(10, log.leaves())
    bad = list(good)
    bad[1] = bytes([bad[1][0] ^ 1]) + bad[1][1:]
    expect_status(w.add(log.request(10, proof=bad)), 422, "a consistency proof with a flipped bit")
    expect_status(w.add(log.request(10, proof=good[:-1])), 422, "a consistency proof cut short")
    expect_status(w.add(log.request(10, proof=[])), 422, "no consistency proof from 10")
    cosigned.expect(w.add(log.request(10, proof=good)), log.body(), "size 25 from 10")
    # The same size again: the same root is cosigned anew, another root is a fork (422).
    cosigned.expect(w.add(log.request(25)), log.body(), "size 25 again")
    fork = log.sign(log.body(25, sha256(b"fork")))
    expect_status(w.add(log.request(25, proof=[], note=fork)), 422, "another root at size 25")
    # Signatures: an untrusted key of the same origin, a trusted key's broken line, none.
    other = Ed25519PrivateKey.from_private_bytes(bytes(32))
    other_pk = other.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw)
    other_id = sha256(log.origin.encode() + b"\n\x01" + other_pk)[:4]
    log.size = 30
    proof = consistency_proof(25, log.leaves())
    untrusted = log.sign(log.body(), key=other, key_id=other_id)
    expect_status(w.add(log.request(25, proof, note=untrusted)), 403, "signed by an untrusted key")
    genuine = log.sign(log.body())
    line_start = genuine.index(EM_DASH)
    raw = bytearray(base64.b64decode(genuine[line_start + len(EM_DASH) + len(log.origin) + 2:]))
    raw[10] ^= 1
    broken = genuine[:line_start] + "%s %s %s\n" % (EM_DASH, log.origin, b64(bytes(raw)))
    expect_status(w.add(log.request(25, proof, note=broken)), 403, "a trusted key's bad signature")
    stranger = Log.create(state + ".stranger", "stranger.example/never-configured", "11" * 32)
    stranger.size = 3
    expect_status(w.add(stranger.request(0)), 404, "an origin the witness does not know")
    for what, body in [("no empty line", "old 25\n"), ("old in hex", "old 0x19\n\n" + genuine),
                       ("a proof line that is not base64", "old 25\n!!!\n\n" + genuine),
                       ("64 proof lines", "old 25\n" + (b64(sha256(b"h")) + "\n") * 64 + "\n" + genuine),
                       ("a checkpoint that is not a note", "old 25\n\nhello\n")]:
        expect_status(w.add(body), 400, what)
    status, _, _ = w.add("old 25\n\n" + "x" * (70 * 1024))
    check(status == 413, "a body over the witness's limit: HTTP %d, expected 413" % status)
    w = Witness(url)  # the server closes a connection after a 413
    # Other witnesses' cosignatures on the note are ignored, not refused.
    third = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
    third_pk = third.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw)
    third_id = sha256(b"third.example/w\n\x04" + third_pk)[:4]
    extra = "%s third.example/w %s\n" % (EM_DASH, b64(third_id + (5).to_bytes(8, "big") +
                                                   third.sign(b"anything")))
    line = cosigned.expect(w.add(log.request(25, proof, note=genuine + extra)), log.body(),
                           "size 30 from 25, with another witness's line on it")
    monitor(w, log, vkey, line)
    log.save()


def monitor(w, log, vkey, line=None):
    origin_hash = sha256(log.origin.encode()).hex()
    status, _, note = w.request("GET", "/%s/checkpoint" % origin_hash)
    check(status == 200, "the monitoring endpoint: HTTP %d" % status)
    body, _, sigs = note.partition("\n\n")
    body += "\n"
    check(body == log.body(), "the monitoring endpoint serves the latest cosigned checkpoint")
    lines = sigs.splitlines()
    check(len(lines) == 2, "the monitored note has the log's line and the witness's: %r" % lines)
    if len(lines) == 2:
        check(lines[0] + "\n" == log.sign(body)[len(body) + 1:], "the log's own signature line")
        check(verify_cosignature(lines[1], body, vkey) is not None, "the witness's cosignature")
        if line is not None:
            check(lines[1] + "\n" == line, "the cosignature add-checkpoint returned")
    status, _, _ = w.request("GET", "/%s/checkpoint" % sha256(b"nobody").hex())
    check(status == 404, "the monitoring endpoint of an origin never cosigned: HTTP %d" % status)


def race(url, vkey_text, state, rounds):
    log = Log(state)
    vkey = parse_cosigner_vkey(vkey_text)
    clients = [Witness(url), Witness(url)]
    for r in range(rounds):
        old = log.size
        bodies = []
        for extra in (1 + r % 3, 2 + r % 3):
            log.size = old + extra
            bodies.append((log.size, log.request(old), log.body()))
        barrier = threading.Barrier(2)
        answers = [None, None]

        def send(i):
            barrier.wait()
            answers[i] = clients[i].add(bodies[i][1])

        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i in range(2) if answers[i][0] == 200]
        check(len(winners) == 1, "round %d: exactly one of two racing updates wins: %s" %
              (r, [a[0] for a in answers]))
        if len(winners) != 1:
            break
        win = winners[0]
        lose = 1 - win
        time = verify_cosignature(answers[win][2].strip(), bodies[win][2], vkey)
        check(time is not None and time > 0, "round %d: the winner's cosignature verifies" % r)
        expect_conflict(answers[lose], bodies[win][0], "round %d: the loser" % r)
        log.size = bodies[win][0]
    log.save()
    print("race: %d rounds, size %d" % (rounds, log.size))


def grow(url, vkey_text, state, acks):
    """Sends a growing log's checkpoints until the connection fails (the witness was killed).
    The old size of each request is the newest size the witness is known to hold: the last
    one in ACKS, or what a 409 says (a size it stored without answering, before a kill)."""
    log, cosigned = Log(state), Cosigned(parse_cosigner_vkey(vkey_text))
    with open(acks) as f:
        acked = [int(line) for line in f if line.strip()]
    held = max(acked, default=0)
    out = open(acks, "a")
    w = Witness(url)
    leaves = log.leaves()
    rng = random.Random(log.size)
    while True:
        log.size += rng.randint(1, 8)
        leaves += [sha256(b"\x00" + ("%s leaf %d" % (log.origin, i)).encode())
                   for i in range(len(leaves), log.size)]
        log.save()
        body = log.body()
        proof = consistency_proof(held, leaves)
        request = "old %d\n%s\n%s" % (held, "".join(b64(h) + "\n" for h in proof), log.sign(body))
        try:
            answer = w.add(request)
        except (OSError, http.client.HTTPException):
            return
        if answer[0] == 409:
            size = int(answer[2])
            check(size >= max(acked, default=0),
                  "the witness holds size %d, smaller than the %d it cosigned" % (size, max(acked)))
            held = size
            continue
        cosigned.expect(answer, body, "size %d from %d" % (log.size, held))
        if answer[0] != 200:
            return
        acked.append(log.size)
        out.write("%d\n" % log.size)
        out.flush()
        held = log.size


def submit(url, vkey_text, old, checkpoint_file, proof_json, expected):
    with open(checkpoint_file) as f:
        note = f.read()
    proof = []
    if proof_json:
        with open(proof_json) as f:
            doc = json.load(f)
        proof = [base64.b64decode(h) for h in doc["hashes"]]
        note = doc["checkpoint"]
    body = "old %d\n%s\n%s" % (old, "".join(b64(h) + "\n" for h in proof), note)
    answer = Witness(url).add(body)
    if expected != 200:
        expect_status(answer, expected, "submit")
        return
    text = note[:note.index("\n\n") + 1]
    Cosigned(parse_cosigner_vkey(vkey_text)).expect(answer, text, "submit")
    if answer[0] == 200:
        print(text.split("\n")[1])


def main(argv):
    if len(argv) >= 4 and argv[1] == "keygen":
        print(Log.create(argv[2], argv[3], argv[4]).vkey)
        return 0
    if len(argv) == 5 and argv[1] == "drive":
        drive(argv[2], argv[3], argv[4])
    elif len(argv) == 6 and argv[1] == "expect-size":
        log, w = Log(argv[4]), Witness(argv[2])
        expect_conflict(w.add(log.request(0)), int(argv[5]), "old 0")
        monitor(w, log, parse_cosigner_vkey(argv[3]))
    elif len(argv) == 6 and argv[1] == "race":
        race(argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) == 6 and argv[1] == "grow":
        grow(argv[2], argv[3], argv[4], argv[5])
    elif len(argv) >= 6 and argv[1] == "submit":
        rest = argv[6:]
        expected = 200
        if "--expect" in rest:
            expected = int(rest[rest.index("--expect") + 1])
            rest = rest[:rest.index("--expect")]
        submit(argv[2], argv[3], int(argv[4]), argv[5], rest[0] if rest else None, expected)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print("%d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
