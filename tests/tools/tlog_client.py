#!/usr/bin/env python3
"""An independent tlog-tiles verifier: no evledger code, only the public specs.

Usage: tlog_client.py LOCATION VERIFIER_KEY [--quiet]

LOCATION is a directory or an http:// URL holding a C2SP tlog-tiles layout (c2sp.org/tlog-tiles):
`checkpoint`, hash tiles `tile/<L>/<N>[.p/<W>]`, entry bundles `tile/entries/<N>[.p/<W>]`.
VERIFIER_KEY is a C2SP signed-note verifier key `<name>+<8 hex key id>+<base64(0x01 || pk)>`
(or a file holding one on its first line).

It checks, each from the specs alone:
  - the key id: SHA-256(name || "\\n" || 0x01 || pk)[:4] (c2sp.org/signed-note);
  - the checkpoint note: text, blank line, signature lines "— <name> <base64(keyid || sig)>";
    an Ed25519 signature by the key over the text; the body "<origin>\\n<size>\\n<root>\\n"
    (c2sp.org/tlog-checkpoint) with origin == key name;
  - every entry bundle the size implies: big-endian uint16 length-prefixed entries, exactly
    the bundle's width of them, no trailing bytes;
  - RFC 6962 leaf hashes SHA-256(0x00 || entry); every hash tile: tile level 0 against the
    leaf hashes, each hash of tile level L against the root of the 256 level-(L-1) hashes
    below it (SHA-256(0x01 || left || right)), and each tile's length;
  - the RFC 6962 root of the size from the leaves, against the checkpoint's root.

Exit 0 when everything holds, 1 when something does not (the first failure is printed),
2 for bad usage, 3 when the layout cannot be read.

Dependencies: python3 and python3-cryptography (Ed25519).
"""

import base64
import hashlib
import os
import sys
import urllib.error
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

TILE_HEIGHT = 8
TILE_WIDTH = 256
HASH_SIZE = 32


class Failure(Exception):
    """Verification failed: the layout is not what the checkpoint and the specs say."""


class Unreadable(Exception):
    """The layout could not be read (I/O, network)."""


# ---- reading the layout ------------------------------------------------------------------


def make_fetcher(location):
    if location.startswith("http://") or location.startswith("https://"):
        base = location if location.endswith("/") else location + "/"

        def fetch(path):
            try:
                with urllib.request.urlopen(base + path, timeout=30) as response:
                    return response.read()
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    raise Failure(f"{base + path} is missing (HTTP 404)")
                raise Unreadable(f"GET {base + path}: HTTP {e.code}")
            except (urllib.error.URLError, OSError) as e:
                raise Unreadable(f"GET {base + path}: {e}")

        return fetch

    def fetch(path):
        full = os.path.join(location, path)
        try:
            with open(full, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise Failure(f"{full} is missing")
        except OSError as e:
            raise Unreadable(f"cannot read {full}: {e}")

    return fetch


def index_path(n):
    """N as 3-digit groups, all but the last prefixed "x": 1234067 -> x001/x234/067."""
    groups = [f"{n % 1000:03d}"]
    n //= 1000
    while n > 0:
        groups.insert(0, f"x{n % 1000:03d}")
        n //= 1000
    return "/".join(groups)


def tile_path(level, n, width):
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{level}/{index_path(n)}{suffix}"


def bundle_path(n, width):
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/entries/{index_path(n)}{suffix}"


# ---- keys and notes ------------------------------------------------------------------------


def parse_verifier_key(text):
    parts = text.strip().split("+", 2)  # the base64 key may itself contain '+'
    if len(parts) != 3:
        raise Failure(f"verifier key {text!r} is not <name>+<hex id>+<base64 key>")
    name, hex_id, b64 = parts
    key = base64.b64decode(b64, validate=True)
    if len(key) != 33 or key[0] != 0x01:
        raise Failure("verifier key is not an Ed25519 key (0x01 followed by 32 bytes)")
    key_id = hashlib.sha256(name.encode() + b"\n" + key).digest()[:4]
    if key_id.hex() != hex_id:
        raise Failure(f"verifier key id {hex_id} does not match its name and key ({key_id.hex()})")
    return name, key_id, Ed25519PublicKey.from_public_bytes(key[1:])


def open_note(note, name, key_id, public_key):
    """Returns the note's text after checking the key's Ed25519 signature over it."""
    try:
        note = note.decode("utf-8")
    except UnicodeDecodeError:
        raise Failure("the checkpoint is not UTF-8")
    split = note.rfind("\n\n")
    if split < 0 or not note.endswith("\n"):
        raise Failure("the checkpoint is not a signed note (no blank line before signatures)")
    text, signature_lines = note[: split + 1], note[split + 2 :].splitlines()
    for line in signature_lines:
        if not line.startswith("\u2014 "):
            raise Failure(f"signature line {line!r} does not start with an em dash and a space")
        fields = line[2:].split(" ")
        if len(fields) != 2:
            raise Failure(f"signature line {line!r} is not '— <name> <base64>'")
        sig_name, b64 = fields
        blob = base64.b64decode(b64, validate=True)
        if sig_name != name or blob[:4] != key_id:
            continue  # another key's signature (a witness's cosignature, say)
        try:
            public_key.verify(blob[4:], text.encode())
        except InvalidSignature:
            raise Failure(f"the checkpoint's signature by {name} does not verify")
        return text
    raise Failure(f"the checkpoint carries no signature by {name}")


def parse_checkpoint(text, name):
    lines = text.split("\n")[:-1]
    if len(lines) < 3:
        raise Failure("the checkpoint body needs origin, size and root lines")
    origin, size_text, root_text = lines[0], lines[1], lines[2]
    if origin != name:
        raise Failure(f"the checkpoint's origin {origin!r} is not the key's name {name!r}")
    if not size_text.isdigit() or (len(size_text) > 1 and size_text[0] == "0"):
        raise Failure(f"the checkpoint size {size_text!r} is not a decimal number")
    root = base64.b64decode(root_text, validate=True)
    if len(root) != HASH_SIZE:
        raise Failure("the checkpoint root is not 32 bytes")
    return origin, int(size_text), root


# ---- RFC 6962 --------------------------------------------------------------------------------


def leaf_hash(entry):
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_bundle(data, path, width):
    entries, pos = [], 0
    for i in range(width):
        if len(data) - pos < 2:
            raise Failure(f"{path}: ends before the length of entry {i} of {width}")
        length = int.from_bytes(data[pos : pos + 2], "big")
        pos += 2
        if len(data) - pos < length:
            raise Failure(f"{path}: entry {i} is cut short ({length} bytes announced)")
        entries.append(data[pos : pos + length])
        pos += length
    if pos != len(data):
        raise Failure(f"{path}: {len(data) - pos} trailing bytes after {width} entries")
    return entries


def read_leaves(fetch, size):
    leaves, bundles = [], 0
    for n in range((size + TILE_WIDTH - 1) // TILE_WIDTH):
        width = min(TILE_WIDTH, size - n * TILE_WIDTH)
        path = bundle_path(n, width)
        leaves.extend(leaf_hash(e) for e in split_bundle(fetch(path), path, width))
        bundles += 1
    return leaves, bundles


def check_tiles(fetch, size, leaves):
    """Checks every hash tile; returns the number of tiles. `below` holds the hashes of the
    previous tile level (the leaves for tile level 0), each already checked."""
    tiles, below, level = 0, leaves, 0
    while (size >> (TILE_HEIGHT * level)) > 0:
        count = size >> (TILE_HEIGHT * level)  # complete nodes at tree level 8*level
        if level == 0:
            expected = below
        else:
            expected = [subtree_root(below[i * TILE_WIDTH : (i + 1) * TILE_WIDTH]) for i in range(count)]
        got = []
        for n in range((count + TILE_WIDTH - 1) // TILE_WIDTH):
            width = min(TILE_WIDTH, count - n * TILE_WIDTH)
            path = tile_path(level, n, width)
            data = fetch(path)
            if len(data) != width * HASH_SIZE:
                raise Failure(f"{path}: {len(data)} bytes, a tile of width {width} has {width * HASH_SIZE}")
            for i in range(width):
                h = data[i * HASH_SIZE : (i + 1) * HASH_SIZE]
                if h != expected[n * TILE_WIDTH + i]:
                    raise Failure(f"{path}: hash {i} (tree level {TILE_HEIGHT * level}, node "
                                  f"{n * TILE_WIDTH + i}) is not the hash recomputed from the level below")
                got.append(h)
            tiles += 1
        below, level = got, level + 1
    return tiles


def subtree_root(hashes):
    """Root of a complete subtree over a power-of-two number of hashes."""
    while len(hashes) > 1:
        hashes = [node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


def tree_root(leaves):
    """RFC 6962 MTH: split at the largest power of two smaller than n."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


# ---- main ------------------------------------------------------------------------------------


def verify(location, key_text, quiet):
    if os.path.isfile(key_text):
        with open(key_text) as f:
            key_text = f.readline()
    name, key_id, public_key = parse_verifier_key(key_text)
    fetch = make_fetcher(location)
    text = open_note(fetch("checkpoint"), name, key_id, public_key)
    origin, size, root = parse_checkpoint(text, name)
    say = (lambda *a: None) if quiet else print
    say(f"checkpoint: origin {origin}, size {size}, root {base64.b64encode(root).decode()}, "
        f"signature by {name} ({key_id.hex()}) verified")
    leaves, bundles = read_leaves(fetch, size)
    say(f"entries: {len(leaves)} read from {bundles} entry bundles, framing checked, leaf hashes computed")
    tiles = check_tiles(fetch, size, leaves)
    say(f"hash tiles: {tiles} checked against the hashes recomputed from the level below")
    computed = tree_root(leaves)
    if computed != root:
        raise Failure(f"the RFC 6962 root of the {size} entries is "
                      f"{base64.b64encode(computed).decode()}, the checkpoint says "
                      f"{base64.b64encode(root).decode()}")
    say(f"root: recomputed from the entries, equal to the checkpoint's")
    print(f"ok: {location} is a valid tlog of {origin} at size {size}")


def main(argv):
    args = [a for a in argv[1:] if a != "--quiet"]
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        verify(args[0], args[1], "--quiet" in argv)
    except Failure as e:
        print(f"tlog_client: FAILED: {e}", file=sys.stderr)
        return 1
    except Unreadable as e:
        print(f"tlog_client: {e}", file=sys.stderr)
        return 3
    except (ValueError, base64.binascii.Error) as e:
        print(f"tlog_client: FAILED: malformed input: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
