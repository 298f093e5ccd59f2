#!/usr/bin/env python3
"""Compares two hosts of one C2SP tlog-tiles layout byte for byte (a log and its mirror).

Usage: same_tiles.py SIZE URL_A URL_B [--every-width] [--dir EXPORT]

The paths compared are those of the tree of SIZE entries (c2sp.org/tlog-tiles): `checkpoint`,
every entry bundle and every hash tile at every level, each at its width in that tree (full, or
the partial tile at the right edge). Each must answer 200 at both hosts with the same bytes,
and the checkpoints must be of SIZE. With --every-width, also every narrower partial width of
each of those tiles and bundles (the tiles of smaller trees), which both hosts must answer with
the same status and the same bytes. With --dir, the files under EXPORT (an export-tiles
directory) must be exactly the paths of the tree of SIZE.

Exit 0 when everything is the same (the number of paths compared is printed), 1 otherwise
(the first difference is printed), 2 for bad usage.
"""

import http.client
import os
import sys
import urllib.parse

from tlog_client import TILE_HEIGHT, TILE_WIDTH, bundle_path, tile_path


def layout(size):
    """The paths of the tree of `size` entries, each with its width: bundles, then hash tiles
    level by level."""
    paths = []
    for n in range((size + TILE_WIDTH - 1) // TILE_WIDTH):
        width = min(TILE_WIDTH, size - n * TILE_WIDTH)
        paths.append((bundle_path, 0, n, width))
    level = 0
    while (size >> (TILE_HEIGHT * level)) > 0:
        count = size >> (TILE_HEIGHT * level)
        for n in range((count + TILE_WIDTH - 1) // TILE_WIDTH):
            paths.append((tile_path, level, n, min(TILE_WIDTH, count - n * TILE_WIDTH)))
        level += 1
    return paths


def path_of(kind, level, n, width):
    return bundle_path(n, width) if kind is bundle_path else tile_path(level, n, width)


class Host:
    """Keep-alive GETs to one host (the answers are small; thousands are asked)."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port or 80
        self.prefix = u.path if u.path.endswith("/") else u.path + "/"
        self.conn = None

    def get(self, path):
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.conn.request("GET", self.prefix + path)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.conn = None  # the server closed a kept-alive connection: once more
                if attempt == 1:
                    raise


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    every_width = "--every-width" in argv
    export = None
    if "--dir" in argv:
        export = argv[argv.index("--dir") + 1]
        args.remove(export)
    if len(args) != 3 or not args[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    size, a, b = int(args[0]), Host(args[1]), Host(args[2])
    tiles = layout(size)
    if export is not None:
        files = set()
        for root, _, names in os.walk(export):
            for name in names:
                files.add(os.path.relpath(os.path.join(root, name), export))
        wanted = {"checkpoint"} | {path_of(*t) for t in tiles}
        if files != wanted:
            print(f"FAILED: {export} holds {sorted(files - wanted)[:5]} beyond the tree of "
                  f"{size} and lacks {sorted(wanted - files)[:5]}", file=sys.stderr)
            return 1
    compared = 0
    for path, must_exist in [("checkpoint", True)] + [(path_of(*t), True) for t in tiles] + [
        (path_of(kind, level, n, w), False)
        for kind, level, n, width in (tiles if every_width else [])
        for w in range(1, width)
    ]:
        sa, ba = a.get(path)
        sb, bb = b.get(path)
        if (must_exist and (sa != 200 or sb != 200)) or sa != sb or ba != bb:
            print(f"FAILED: {path}: HTTP {sa} ({len(ba)} bytes) at {args[1]}, HTTP {sb} "
                  f"({len(bb)} bytes) at {args[2]}", file=sys.stderr)
            return 1
        if path == "checkpoint" and ba.split(b"\n")[1] != str(size).encode():
            print(f"FAILED: the checkpoint is not of size {size}: {ba[:200]!r}", file=sys.stderr)
            return 1
        compared += 1
    print(f"{compared} paths byte-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
