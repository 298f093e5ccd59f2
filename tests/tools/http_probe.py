#!/usr/bin/env python3
"""HTTP probes of a running `evledger serve`, over raw sockets so that every byte sent is ours.

Usage: http_probe.py details URL    HEAD, keep-alive, pipelining, ETag and cache headers
       http_probe.py hostile URL    hostile requests each get their status; slow and idle
                                    clients are cut off or held without hurting anyone else

The server under test should run with short timeouts (--header-timeout and --body-timeout of
about 1.5 s) so that the slow-client probes finish quickly. Exit 0 when every probe holds; the
first failure is printed and exits 1.
"""

import resource
import socket
import sys
import time
import urllib.parse


def fail(msg):
    print("FAILED: " + msg, file=sys.stderr)
    sys.exit(1)


class Conn:
    def __init__(self, url, timeout=10):
        u = urllib.parse.urlparse(url)
        self.prefix = u.path.rstrip("/")
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def request(self, method, path, headers=(), body=b"", send=True):
        lines = ["%s %s%s HTTP/1.1" % (method, self.prefix, path), "Host: probe"]
        lines += list(headers)
        if body:
            lines.append("Content-Length: %d" % len(body))
        data = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        if send:
            self.send(data)
        return data

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def response(self, head=False):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        header, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = 0 if head or status in (204, 304) else int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, headers, body

    def closed_within(self, seconds):
        """True when the server closes the connection within `seconds`."""
        self.sock.settimeout(seconds)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return True

    def close(self):
        self.sock.close()


def expect(cond, msg):
    if not cond:
        fail(msg)


def details(url):
    c = Conn(url)
    c.request("GET", "/checkpoint")
    status, h, body = c.response()
    expect(status == 200, "GET /checkpoint: %d" % status)
    expect(h.get("content-type") == "text/plain; charset=utf-8", "checkpoint type %r" % h)
    expect("max-age" in h.get("cache-control", ""), "checkpoint cache-control %r" % h)
    etag = h.get("etag", "")
    expect(etag.startswith('"') and len(etag) == 34, "etag %r" % etag)
    # Kept alive: the same connection answers again, and HEAD has the headers but no body.
    c.request("HEAD", "/checkpoint")
    status, hh, _ = c.response(head=True)
    expect(status == 200 and int(hh["content-length"]) == len(body), "HEAD /checkpoint %r" % hh)
    c.request("GET", "/checkpoint", ["If-None-Match: " + etag])
    status, _, b = c.response()
    expect(status == 304 and b == b"", "If-None-Match: %d" % status)
    # Pipelined: two requests in one write, two answers in order.
    c.send(c.request("GET", "/healthz", send=False) + c.request("GET", "/tile/entries/000", send=False))
    s1, h1, _ = c.response()
    s2, h2, b2 = c.response()
    expect(s1 == 200 and h1.get("content-type") == "application/json", "pipelined healthz %d" % s1)
    expect(s2 == 200 and h2.get("cache-control") == "public, max-age=31536000, immutable",
           "full bundle %d %r" % (s2, h2))
    expect(len(b2) > 512, "bundle of %d bytes" % len(b2))
    # Connection: close is honoured.
    c.request("GET", "/healthz", ["Connection: close"])
    status, h, _ = c.response()
    expect(status == 200 and h.get("connection", "").lower() == "close", "close %r" % h)
    expect(c.closed_within(2), "the server closes after Connection: close")
    c.close()
    print("details: ok")


def status_of(url, raw=None, method="GET", path="/", headers=(), body=b""):
    c = Conn(url)
    if raw is not None:
        c.send(raw)
    else:
        c.request(method, path, headers, body)
    try:
        return c.response()[0]
    finally:
        c.close()


def hostile(url):
    checks = [
        ("traversal", dict(path="/tile/../../db/data.mdb"), 400),
        ("encoded traversal", dict(path="/tile/%2e%2e/%2e%2e/db/data.mdb"), 400),
        ("encoded slash", dict(path="/tile%2F..%2Fdb"), 400),
        ("absolute form", dict(path="http://x/../db/data.mdb"), 400),
        ("a database file", dict(path="/db/data.mdb"), 404),
        ("absurd tile index", dict(path="/tile/0/x001/x000/x000/x000/x000/x000/000"), 404),
        ("absurd level", dict(path="/tile/99/000"), 400),
        ("absurd width", dict(path="/tile/0/000.p/999"), 400),
        ("wider than the tree", dict(path="/tile/entries/x999/000.p/255"), 404),
        ("unknown method", dict(method="BREW", path="/checkpoint"), 405),
        ("malformed request line", dict(raw=b"GARBAGE\r\n\r\n"), 400),
        ("header flood", dict(path="/checkpoint",
                              headers=["X-Flood-%d: %s" % (i, "a" * 100) for i in range(200)]), 431),
        ("a body too large, declared", dict(raw=b"POST /add-event HTTP/1.1\r\nHost: p\r\n"
                                            b"Content-Type: application/octet-stream\r\n"
                                            b"Content-Length: 100000000\r\n\r\n"), 413),
        ("a body on a read route", dict(method="GET", path="/checkpoint", body=b"x" * 10), 413),
        ("not an entry", dict(method="POST", path="/add-event", body=b"hello",
                              headers=["Content-Type: application/octet-stream"]), 400),
        ("no content type", dict(method="POST", path="/add-event", body=b"hello"), 415),
    ]
    for name, kw, want in checks:
        got = status_of(url, **kw)
        expect(got == want, "%s: HTTP %d, expected %d" % (name, got, want))

    # A chunked body that never ends: the server cuts it off (body timeout or limit).
    c = Conn(url)
    c.send(b"POST /add-event HTTP/1.1\r\nHost: p\r\nContent-Type: application/octet-stream\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n")
    start = time.time()
    cut = False
    try:
        while time.time() - start < 10:
            c.send(b"1\r\nx\r\n")
            time.sleep(0.1)
    except (BrokenPipeError, ConnectionResetError):
        cut = True
    expect(cut or c.closed_within(1), "a never-ending chunked body is cut off")
    expect(time.time() - start < 9, "cut off within the body timeout")
    c.close()

    # A client that sends half a request line and stalls is disconnected.
    c = Conn(url)
    c.send(b"GET /checkp")
    expect(c.closed_within(8), "a stalled request line is cut off")
    c.close()

    # A truncated body: the client goes away; nothing happens.
    c = Conn(url)
    c.send(b"POST /add-event HTTP/1.1\r\nHost: p\r\nContent-Type: application/octet-stream\r\n"
           b"Content-Length: 1000\r\n\r\nabc")
    c.close()

    # Thousands of idle connections: everyone else is still served.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    idle = []
    try:
        for _ in range(min(2000, hard - 100)):
            idle.append(Conn(url, timeout=5))
        expect(status_of(url, path="/checkpoint") == 200, "served beside 2,000 idle connections")
    finally:
        for c in idle:
            c.close()
    print("hostile: ok (%d probes, %d idle connections)" % (len(checks) + 4, len(idle)))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("details", "hostile"):
        print(__doc__)
        sys.exit(2)
    url = sys.argv[2]
    {"details": details, "hostile": hostile}[sys.argv[1]](url)


if __name__ == "__main__":
    main()
