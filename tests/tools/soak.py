#!/usr/bin/env python3
"""Appends and reads against one `evledger serve` at once for a bounded time, and watches the
server: its memory, its file descriptors and the LMDB reader slots must stay flat, and no
request may fail.

Usage: soak.py URL PID LEDGER_DIR ENTRIES SECONDS [--rate R] [--writers N] [--readers M]

ENTRIES is a file of uint16-framed signed entries (what tile/entries bundles hold), new to the
log. N writer threads post them one per request (R entries/s in all, default 300), each on its
own kept-alive connection; M reader threads fetch the checkpoint, tiles, entry bundles, API
resources and pages in turn. Each second a sampler reads the server's heap (RssAnon: the pages
of data.mdb it maps grow with the log and are the kernel's to drop) and its open descriptors
from /proc/PID, and the LMDB read transactions open at that moment (`mdb_stat -r`).

Prints one line per tenth of the run (requests, errors, p50/p99 ms of appends and of reads,
RSS, descriptors, readers) and a JSON summary last. Exit 0 when no request failed, memory
grew by at most 20% + 16 MB from the first tenth to the last, descriptors came back within 4
of the first tenth, and the open read transactions at the end were at most 4 more than in the
first tenth (none is left open); 1 otherwise.
"""

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from append_load import split_frames  # noqa: E402 (beside this file)


class Stats:
    def __init__(self, seconds):
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.seconds = seconds
        self.appends = [[] for _ in range(10)]
        self.reads = [[] for _ in range(10)]
        self.errors = [0] * 10
        self.samples = [[] for _ in range(10)]
        self.failures = []

    def tenth(self):
        return min(9, int((time.monotonic() - self.start) * 10 / self.seconds))

    def done(self):
        return time.monotonic() - self.start >= self.seconds

    def record(self, kind, ms, ok, what):
        t = self.tenth()
        with self.lock:
            (self.appends if kind == "append" else self.reads)[t].append(ms)
            if not ok:
                self.errors[t] += 1
                if len(self.failures) < 10:
                    self.failures.append(what)


def percentile(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))]


def connect(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30), u.path.rstrip("/")


def writer(url, entries, stats, interval):
    conn, prefix = connect(url)
    next_at = time.monotonic()
    while not stats.done():
        try:
            entry = entries.pop()
        except IndexError:
            return
        t0 = time.monotonic()
        try:
            conn.request("POST", prefix + "/add-event", body=entry,
                         headers={"Content-Type": "application/octet-stream"})
            resp = conn.getresponse()
            body = resp.read()
            ok = resp.status == 200
            what = "POST %d %s" % (resp.status, body[:200])
        except (OSError, http.client.HTTPException) as e:
            ok, what = False, "POST: %r" % e
            conn.close()
            conn, prefix = connect(url)
        stats.record("append", (time.monotonic() - t0) * 1000, ok, what)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))


def reader(url, paths, stats, offset):
    conn, prefix = connect(url)
    i = offset
    while not stats.done():
        path = paths[i % len(paths)]
        i += 1
        t0 = time.monotonic()
        try:
            conn.request("GET", prefix + path)
            resp = conn.getresponse()
            resp.read()
            ok = resp.status == 200
            what = "GET %s: %d" % (path, resp.status)
        except (OSError, http.client.HTTPException) as e:
            ok, what = False, "GET %s: %r" % (path, e)
            conn.close()
            conn, prefix = connect(url)
        stats.record("read", (time.monotonic() - t0) * 1000, ok, what)


def sample(pid, ledger, stats):
    while not stats.done():
        try:
            status = open("/proc/%d/status" % pid).read()
            rss = int(re.search(r"RssAnon:\s+(\d+) kB", status).group(1)) // 1024
            fds = len(os.listdir("/proc/%d/fd" % pid))
        except OSError:
            stats.failures.append("the server is gone")
            return
        out = subprocess.run(["mdb_stat", "-r", ledger + "/db"], capture_output=True, text=True).stdout
        readers = sum(1 for line in out.splitlines() if re.match(r"\s*\d+\s+[0-9a-f]+\s+\S+", line))
        with stats.lock:
            stats.samples[stats.tenth()].append((rss, fds, readers))
        time.sleep(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("pid", type=int)
    ap.add_argument("ledger")
    ap.add_argument("entries")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--rate", type=float, default=300)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--readers", type=int, default=4)
    args = ap.parse_args()

    entries = split_frames(open(args.entries, "rb").read())
    entries.reverse()  # pop() takes them in log order
    conn, prefix = connect(args.url)
    conn.request("GET", prefix + "/api/v1/runs?limit=20")
    runs = [r["run"] for r in json.loads(conn.getresponse().read())["items"]]
    conn.request("GET", prefix + "/api/v1/groups?limit=5")
    groups = [g["group"] for g in json.loads(conn.getresponse().read())["items"]]
    conn.close()
    paths = ["/checkpoint", "/tile/0/000", "/tile/entries/000", "/api/v1/events/1",
             "/api/v1/runs?limit=50", "/api/v1/statement", "/healthz"]
    paths += ["/api/v1/runs/" + r for r in runs[:10]] + ["/runs/" + r for r in runs[:10]]
    paths += ["/groups/" + g for g in groups]

    stats = Stats(args.seconds)
    threads = [threading.Thread(target=writer, args=(args.url, entries, stats,
                                                     args.writers / args.rate))
               for _ in range(args.writers)]
    threads += [threading.Thread(target=reader, args=(args.url, paths, stats, k * 7))
                for k in range(args.readers)]
    threads.append(threading.Thread(target=sample, args=(args.pid, args.ledger, stats)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    rows = []
    for t in range(10):
        s = stats.samples[t] or [(0, 0, 0)]
        rows.append({
            "appends": len(stats.appends[t]), "reads": len(stats.reads[t]),
            "errors": stats.errors[t],
            "appendP50": round(percentile(stats.appends[t], 0.5), 2),
            "appendP99": round(percentile(stats.appends[t], 0.99), 2),
            "readP50": round(percentile(stats.reads[t], 0.5), 2),
            "readP99": round(percentile(stats.reads[t], 0.99), 2),
            "rssMB": max(x[0] for x in s), "fds": s[-1][1], "readers": max(x[2] for x in s)})
        r = rows[-1]
        print("%3d%%  %5d appends (p50 %6.2f, p99 %7.2f ms)  %6d reads (p50 %6.2f, p99 %7.2f ms)"
              "  %d errors  heap %d MB  %d fds  %d readers" % (
                  (t + 1) * 10, r["appends"], r["appendP50"], r["appendP99"], r["reads"],
                  r["readP50"], r["readP99"], r["errors"], r["rssMB"], r["fds"], r["readers"]))
    first, last = rows[0], rows[-1]
    problems = list(stats.failures)
    if sum(r["errors"] for r in rows):
        problems.append("%d requests failed" % sum(r["errors"] for r in rows))
    if last["rssMB"] > first["rssMB"] * 1.2 + 16:
        problems.append("memory grew from %d MB to %d MB" % (first["rssMB"], last["rssMB"]))
    if abs(last["fds"] - first["fds"]) > 4:
        problems.append("descriptors went from %d to %d" % (first["fds"], last["fds"]))
    if last["readers"] > first["readers"] + 4:
        problems.append("open LMDB read transactions went from %d to %d" % (first["readers"], last["readers"]))
    if sum(r["appends"] for r in rows) == 0 or sum(r["reads"] for r in rows) == 0:
        problems.append("no appends or no reads were made")
    print(json.dumps({"seconds": args.seconds, "tenths": rows, "problems": problems}))
    for p in problems:
        print("soak: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
