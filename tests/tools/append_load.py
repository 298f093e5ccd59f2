#!/usr/bin/env python3
"""Concurrent publishers for `evledger serve`: post signed entries to POST /add-event from many
connections at once and record every acknowledgement.

Usage: append_load.py URL ENTRIES ACKS [--clients N] [--batch K] [--until-error] [--skip-acked]
                      [--seed S]

ENTRIES is a file of uint16-framed signed entries (what tile/entries bundles hold). Each of N
client threads keeps one connection and posts K entries per request, taking the next ones from
a shared queue in a shuffled order. Every entry the server answers as stored or present is
appended to ACKS as "<index> <event id> <added|present> <position in ENTRIES>", flushed at once, so that the file
holds every acknowledgement even when the server is killed mid-run.

Without --until-error every entry must end acknowledged: a request that fails (no answer, a
5xx, a reset connection) is sent again, on a new connection, for up to 60 s; exit 0 when every
entry was acknowledged, 1 when one was refused, 3 when the server stayed unreachable. With
--until-error a client stops at its first failed request (the server died): exit 0, and the
entries it had not acknowledged are simply not in ACKS.

--skip-acked leaves out the entries ACKS already lists (a later round of a killed run).

Prints one line: entries, acknowledged, added, present, refused, failed requests.
"""

import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse


def split_frames(data):
    out, pos = [], 0
    while pos < len(data):
        n = data[pos] << 8 | data[pos + 1]
        out.append(data[pos + 2:pos + 2 + n])
        pos += 2 + n
    return out


def frame(entries):
    return b"".join(len(e).to_bytes(2, "big") + e for e in entries)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("entries")
    ap.add_argument("acks")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--until-error", action="store_true")
    ap.add_argument("--skip-acked", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    u = urllib.parse.urlparse(args.url)
    path = u.path.rstrip("/") + "/add-event"
    entries = split_frames(open(args.entries, "rb").read())
    done = set()
    if args.skip_acked:
        try:
            done = {int(line.split()[3]) for line in open(args.acks) if line.strip()}
        except FileNotFoundError:
            pass
    order = [i for i in range(len(entries)) if i not in done]
    random.Random(args.seed).shuffle(order)
    queue_lock = threading.Lock()
    acks = open(args.acks, "a")
    ack_lock = threading.Lock()
    stats = {"ack": 0, "added": 0, "present": 0, "refused": 0, "failed": 0}
    deadline = time.time() + 60

    def take():
        with queue_lock:
            batch = order[:args.batch]
            del order[:args.batch]
            return batch

    def give_back(batch):
        with queue_lock:
            order.extend(batch)

    def record(results, batch):
        retry = []
        with ack_lock:
            for r, i in zip(results, batch):
                if "index" in r:
                    kind = "present" if r["present"] else "added"
                    acks.write("%d %s %s %d\n" % (r["index"], r["id"], kind, i))
                    stats["ack"] += 1
                    stats[kind] += 1
                elif r.get("status", 0) >= 500:
                    retry.append(i)
                else:
                    stats["refused"] += 1
                    print("refused: %r" % r, file=sys.stderr)
            acks.flush()
        return retry

    def client():
        conn = None
        while True:
            batch = take()
            if not batch:
                return
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
                body = frame([entries[i] for i in batch])
                conn.request("POST", path, body, {"Content-Type": "application/vnd.evledger.entries"})
                resp = conn.getresponse()
                data = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                if resp.status == 200 or data.startswith(b"{") and b'"results"' in data:
                    # Stored entries are acknowledged even in a 5xx answer; the rest go again.
                    batch = record(json.loads(data)["results"], batch)
                    if not batch:
                        continue
                raise IOError("HTTP %d" % resp.status)
            except (OSError, http.client.HTTPException, ValueError) as e:
                with ack_lock:
                    stats["failed"] += 1
                if conn is not None:
                    conn.close()
                    conn = None
                if args.until_error:
                    return
                give_back(batch)
                if time.time() > deadline:
                    return
                time.sleep(0.05 + random.random() * 0.2)

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("entries %d acknowledged %d added %d present %d refused %d failed-requests %d" % (
        len(entries), stats["ack"], stats["added"], stats["present"], stats["refused"], stats["failed"]))
    if args.until_error:
        return 0
    if stats["refused"]:
        return 1
    return 0 if stats["ack"] == len(entries) - len(done) else 3


if __name__ == "__main__":
    sys.exit(main())
