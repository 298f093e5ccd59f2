#!/usr/bin/env python3
"""The directory a power cut could leave, from the power-loss shim's journal (shim.c).

Usage: materialise.py BASE JOURNAL OUT --seed N [--mode nothing|everything|random]

BASE is a copy of the directory taken before the journalled process started; OUT (which must
not exist) becomes BASE plus what the disk holds after the cut. The model, per file:
  - every write before the file's last completed fsync/fdatasync is on the disk;
  - every write through an O_DSYNC/O_SYNC descriptor is on the disk;
  - of the other writes after the last sync, each 4 KiB-aligned piece is on the disk or not,
    as the seeded RNG chooses: --mode nothing keeps none, everything keeps all, random keeps
    each with a probability drawn from the seed. Pieces kept are applied in their order.
A file opened under the directory and absent from BASE is created (empty at the last sync).
A torn last record (the process killed while the shim wrote it) is ignored. The journal of an
msync is refused: writable shared mappings are not modelled.
Prints one line: files, writes, pieces kept and dropped.
"""
import argparse
import os
import random
import shutil
import struct
import sys

PAGE = 4096


def records(path):
    data = open(path, "rb").read()
    at = 0
    while at + 24 <= len(data):
        total, kind, _, path_len, offset, length = struct.unpack_from("<IBBHQQ", data, at)
        if total < 24 or at + total > len(data):
            break  # the torn last record
        name = data[at + 24:at + 24 + path_len].decode()
        body = data[at + 24 + path_len:at + total]
        yield chr(kind), name, offset, length, body
        at += total


def pieces(offset, body):
    """The write split at 4 KiB boundaries of the file."""
    at = 0
    while at < len(body):
        end = min(len(body), (offset + at) // PAGE * PAGE + PAGE - offset)
        yield offset + at, body[at:end]
        at = end


def main():
    p = argparse.ArgumentParser()
    p.add_argument("base")
    p.add_argument("journal")
    p.add_argument("out")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--mode", choices=["nothing", "everything", "random"], default="random")
    a = p.parse_args()
    rng = random.Random(a.seed)
    keep = {"nothing": 0.0, "everything": 1.0}.get(a.mode, rng.random())

    # Per file: the list of operations since the start, and the index just past its last sync.
    ops, last_sync = {}, {}
    for kind, name, offset, length, body in records(a.journal):
        if kind == "M":
            sys.exit("materialise: the journal has an msync; writable shared mappings are not "
                     "modelled (open LMDB without MDB_WRITEMAP)")
        if kind == "O":
            ops.setdefault(name, [])
        elif kind in "WDT":
            ops.setdefault(name, []).append((kind, offset, body))
        elif kind == "S":
            ops.setdefault(name, [])
            last_sync[name] = len(ops[name])
        else:
            sys.exit("materialise: unknown record %r in %s" % (kind, a.journal))

    shutil.copytree(a.base, a.out, symlinks=True)
    writes = kept = dropped = 0
    for name, file_ops in sorted(ops.items()):
        path = os.path.join(a.out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "r+b" if os.path.exists(path) else "w+b") as f:
            synced = last_sync.get(name, 0)
            for i, (kind, offset, body) in enumerate(file_ops):
                if kind == "T":
                    f.truncate(offset)
                    continue
                writes += 1
                for at, piece in pieces(offset, body):
                    if i < synced or kind == "D" or rng.random() < keep:
                        f.seek(at)
                        f.write(piece)
                        kept += 1
                    else:
                        dropped += 1
    print("materialised: files %d, writes %d, pieces kept %d, dropped %d" %
          (len(ops), writes, kept, dropped))


if __name__ == "__main__":
    main()
