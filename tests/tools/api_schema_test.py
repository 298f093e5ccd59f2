#!/usr/bin/env python3
"""The JSON API of a running `evledger serve`, held to its OpenAPI 3.1 document.

Usage: api_schema_test.py check URL OPENAPI.json
           Requests every route of the document (with values found through the listings), with
           good and bad parameters, and validates each answer against the document: its status
           must be documented for the route, its content type too, and a JSON body must
           validate against that response's schema (JSON Schema 2020-12, python3-jsonschema).
           Fails when a route of the document was not answered 200 or when one was never
           answered with an error or a 304.
       api_schema_test.py same URL TARGET FILE
           Every item of every page of TARGET (following `next`; only the first page when
           TARGET names its limit), or the one JSON answer of a TARGET that is no listing,
           equals the JSON values of FILE, one per line, in order: the CLI's --json output for
           the same question.
       api_schema_test.py timing URL TARGET N
           Requests TARGET N times on one kept-alive connection ("{run}" in TARGET: a random
           run digest of the listing each time); prints the median, p99 and maximum latency in
           ms (a measurement, never a check).

Exit 0 when every check holds; the first failure is printed and exits 1.
"""

import copy
import http.client
import json
import random
import re
import sys
import time
import urllib.parse

import jsonschema


def fail(msg):
    print("FAILED: " + msg, file=sys.stderr)
    sys.exit(1)


class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.prefix = u.path.rstrip("/")
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)

    def get(self, target, headers=None):
        self.conn.request("GET", self.prefix + target, headers=headers or {})
        r = self.conn.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def json(self, target):
        status, _, body = self.get(target)
        if status != 200:
            fail("GET %s: %d %s" % (target, status, body[:300]))
        return json.loads(body)

    def pages(self, target, limit=1000):
        sep = "&" if "?" in target else "?"
        first = "%s%slimit=%d" % (target, sep, limit)
        items, page = [], self.json(first)
        while True:
            items += page["items"]
            if page["next"] is None:
                return items
            page = self.json(first + "&cursor=" + urllib.parse.quote(page["next"], safe=""))


class Document:
    """The OpenAPI document's routes and the JSON Schema of each response."""

    def __init__(self, path):
        self.doc = json.load(open(path))
        if self.doc.get("openapi") != "3.1.0":
            fail("the document is not OpenAPI 3.1.0")
        # Components' schemas as $defs of one 2020-12 schema, so that every $ref resolves
        # inside the schema being validated (no resolver needed, in any jsonschema 4.x).
        self.defs = self._rewrite(self.doc["components"]["schemas"])
        for name, schema in self.defs.items():
            jsonschema.Draft202012Validator.check_schema(schema)
        self.templates = []
        for template in self.doc["paths"]:
            parts = re.split(r"\{[^}]+\}", template)
            pattern = "^" + "[^/?]+".join(re.escape(p) for p in parts) + "$"
            self.templates.append((template, re.compile(pattern)))
        self.seen = {t: set() for t in self.doc["paths"]}
        self._check_refs(self.doc)

    def _rewrite(self, node):
        node = copy.deepcopy(node)

        def walk(n):
            if isinstance(n, dict):
                ref = n.get("$ref")
                if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                    n["$ref"] = "#/$defs/" + ref.rsplit("/", 1)[1]
                for v in n.values():
                    walk(v)
            elif isinstance(n, list):
                for v in n:
                    walk(v)

        walk(node)
        return node

    def _check_refs(self, node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = self.doc
                for part in ref.lstrip("#/").split("/"):
                    if part not in target:
                        fail("the document's $ref %s does not resolve" % ref)
                    target = target[part]
            for v in node.values():
                self._check_refs(v)
        elif isinstance(node, list):
            for v in node:
                self._check_refs(v)

    def resolve(self, node):
        while "$ref" in node:
            target = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def template_of(self, path):
        for template, pattern in self.templates:
            if pattern.match(path):
                return template
        return None

    def check(self, target, status, headers, body):
        path = target.split("?", 1)[0]
        template = self.template_of(path)
        if template is None:
            fail("%s is no route of the document" % path)
        responses = self.doc["paths"][template]["get"]["responses"]
        if str(status) not in responses:
            fail("GET %s answered %d, which the document does not list for %s (%s)"
                 % (target, status, template, body[:300]))
        self.seen[template].add(status)
        response = self.resolve(responses[str(status)])
        content = response.get("content")
        if status == 304:
            if body:
                fail("GET %s: a 304 with a body" % target)
            return
        ctype = headers.get("content-type", "").split(";")[0].strip()
        if not content or ctype not in content:
            fail("GET %s: %d with Content-Type %r, which the document does not list"
                 % (target, status, ctype))
        schema = content[ctype].get("schema", {})
        if ctype.endswith("json"):
            try:
                instance = json.loads(body)
            except ValueError as e:
                fail("GET %s: the body is not JSON: %s" % (target, e))
            whole = dict(self._rewrite(schema))
            whole["$defs"] = self.defs
            whole["$schema"] = "https://json-schema.org/draft/2020-12/schema"
            errors = sorted(jsonschema.Draft202012Validator(whole).iter_errors(instance),
                            key=lambda e: list(e.absolute_path))
            if errors:
                e = errors[0]
                fail("GET %s: %d does not hold to the document at %s: %s"
                     % (target, status, "/".join(str(p) for p in e.absolute_path), e.message[:500]))
            if status >= 400 and instance.get("status") != status:
                fail("GET %s: a problem whose status member says %r" % (target, instance.get("status")))
        elif "pattern" in schema and not re.match(schema["pattern"], body.decode("utf-8", "replace")):
            fail("GET %s: the text does not match %r" % (target, schema["pattern"]))


def check(url, openapi):
    doc = Document(openapi)
    c = Client(url)
    answered = 0

    def probe(target, want, headers=None):
        nonlocal answered
        status, h, body = c.get(target, headers)
        if status != want:
            fail("GET %s: %d, expected %d: %s" % (target, status, want, body[:300]))
        doc.check(target, status, h, body)
        answered += 1
        return h, body

    # Values to name things by, found through the listings themselves.
    runs = c.pages("/api/v1/runs")
    groups = c.pages("/api/v1/groups")
    benchmarks = c.pages("/api/v1/benchmarks")
    checkpoints = c.pages("/api/v1/checkpoints")
    if len(runs) < 100 or len(groups) < 5 or not benchmarks or len(checkpoints) < 3:
        fail("too little data to check: %d runs, %d groups, %d checkpoints"
             % (len(runs), len(groups), len(checkpoints)))
    rich = max(runs, key=lambda r: len(r["reruns"]) + len(r["attestations"]) + len(r["corrections"]))
    if not (rich["reruns"] or rich["attestations"] or rich["corrections"]):
        fail("no run has reruns, attestations or corrections: the activity is missing")
    run = rich["run"]
    group = groups[0]["group"]
    size = checkpoints[-1]["size"]
    older = checkpoints[-2]["size"]
    event = c.json("/api/v1/events/3")["id"]

    ok_targets = [
        "/api/v1/openapi.json",
        "/api/v1/events", "/api/v1/events?from=2&limit=5", "/api/v1/events/0", "/api/v1/events/1",
        "/api/v1/events/" + event, "/api/v1/events/3?format=raw", "/api/v1/events/%d" % (size - 1),
        "/api/v1/proofs/inclusion?index=3", "/api/v1/proofs/inclusion?id=%s&size=%d" % (event, older),
        "/api/v1/proofs/inclusion?index=3&format=tlog-proof",
        "/api/v1/proofs/consistency?from=%d" % older,
        "/api/v1/proofs/consistency?from=1&to=%d" % older,
        "/api/v1/checkpoints", "/api/v1/checkpoints?from=%d&limit=1" % older,
        "/api/v1/runs", "/api/v1/runs?limit=3", "/api/v1/runs?group=" + group,
        "/api/v1/runs?benchmark=" + urllib.parse.quote(benchmarks[0]["benchmark"]),
        "/api/v1/runs/" + run, "/api/v1/runs/" + run[7:19],
        "/api/v1/groups?limit=2", "/api/v1/groups/" + group, "/api/v1/groups/" + group[7:17],
        "/api/v1/leaders", "/api/v1/leaders?group=" + group, "/api/v1/benchmarks?limit=4",
        "/api/v1/keys", "/api/v1/keys?limit=1", "/api/v1/statement",
        "/api/v1/statement?size=%d" % size,
    ]
    # Every event kind decodes to the document's Event.
    kinds = set()
    for e in c.pages("/api/v1/events"):
        if e["kind"] not in kinds:
            kinds.add(e["kind"])
            ok_targets.append("/api/v1/events/%d" % e["index"])
    for want in ("genesis", "key_grant", "manifest", "observation", "rerun", "attestation", "correction"):
        if want not in kinds:
            fail("the log holds no %s event to check" % want)
    # Every run view of the log holds to the document (the listing), and some full ones.
    for r in runs[::25]:
        ok_targets.append("/api/v1/runs/" + r["run"])
    for target in ok_targets:
        probe(target, 200)

    zero = "sha256:" + "0" * 64
    error_targets = [
        ("/api/v1/events?limit=0", 400), ("/api/v1/events?from=x", 400),
        ("/api/v1/events/%d" % (size + 10), 404), ("/api/v1/events/" + zero, 404),
        ("/api/v1/events/nonsense", 400), ("/api/v1/events/1?format=xml", 400),
        ("/api/v1/proofs/inclusion", 400), ("/api/v1/proofs/inclusion?index=%d" % (size + 1), 404),
        ("/api/v1/proofs/inclusion?index=1&size=%d" % (older + 1), 404),
        ("/api/v1/proofs/consistency?from=0", 400), ("/api/v1/proofs/consistency?from=%d&to=%d" % (size, older), 400),
        ("/api/v1/proofs/consistency?from=1&to=%d" % (older + 1), 404),
        ("/api/v1/checkpoints?cursor=x", 400),
        ("/api/v1/runs?limit=1001", 400), ("/api/v1/runs?cursor=nothing", 400),
        ("/api/v1/runs?group=" + zero, 404), ("/api/v1/runs?sort=asc", 400),
        ("/api/v1/runs/" + run[7:11], 400), ("/api/v1/runs/" + zero, 404),
        ("/api/v1/groups?cursor=" + "z" * 64, 400), ("/api/v1/groups/" + zero, 404),
        ("/api/v1/groups/xyz", 400), ("/api/v1/leaders?group=" + zero, 404),
        ("/api/v1/leaders?limit=-1", 400), ("/api/v1/benchmarks?cursor=a/b", 400),
        ("/api/v1/keys?cursor=k", 400), ("/api/v1/statement?size=%d" % (size + 5), 404),
        ("/api/v1/statement?size=two", 400),
    ]
    for target, want in error_targets:
        probe(target, want)
    # 304 for what follows the log, on the ETag it gave.
    for target in [t for t in ok_targets if "format=raw" not in t and "size=" not in t and "to=" not in t]:
        status, h, _ = c.get(target)
        if "etag" not in h:
            fail("GET %s: no ETag" % target)
        probe(target, 304, {"If-None-Match": h["etag"]})
    # Cache headers, one rule (tools/server/api.h).
    immutable = "public, max-age=31536000, immutable"
    for target in ("/api/v1/events/3?format=raw", "/api/v1/proofs/inclusion?index=3&size=%d" % older,
                   "/api/v1/proofs/consistency?from=1&to=%d" % older):
        _, h, _ = c.get(target)
        if h.get("cache-control") != immutable:
            fail("GET %s: Cache-Control %r, expected %r" % (target, h.get("cache-control"), immutable))
    for target in ("/api/v1/runs", "/api/v1/events/3", "/api/v1/keys", "/api/v1/statement"):
        _, h, _ = c.get(target)
        if h.get("cache-control") != "public, max-age=2":
            fail("GET %s: Cache-Control %r" % (target, h.get("cache-control")))
    for template, seen in doc.seen.items():
        if 200 not in seen:
            fail("%s was never answered 200" % template)
        if len(seen) < 2:
            fail("%s was never answered with an error or a 304" % template)
    print("check: %d answers of %d routes hold to the document" % (answered, len(doc.seen)))


def same(url, target, path):
    c = Client(url)
    expected = [json.loads(line) for line in open(path) if line.strip()]
    status, _, body = c.get(target)
    if status != 200:
        fail("GET %s: %d %s" % (target, status, body[:300]))
    answer = json.loads(body)
    if isinstance(answer, dict) and set(answer) == {"items", "next"}:
        # A target that names its limit is one page; else every page.
        got = answer["items"] if "limit=" in target else c.pages(target)
    else:
        got = [answer]
    if got != expected:
        for i, (a, b) in enumerate(zip(got, expected)):
            if a != b:
                fail("%s: item %d differs from the CLI's:\n  api %s\n  cli %s"
                     % (target, i, json.dumps(a)[:600], json.dumps(b)[:600]))
        fail("%s: %d items, the CLI printed %d" % (target, len(got), len(expected)))
    print("same: %s gives the CLI's %d values" % (target, len(got)))


def timing(url, target, n):
    c = Client(url)
    runs = [r["run"] for r in c.pages("/api/v1/runs")] if "{run}" in target else []
    rng = random.Random(7)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        status, _, _ = c.get(target.replace("{run}", rng.choice(runs)) if runs else target)
        times.append((time.perf_counter() - t) * 1000)
        if status != 200:
            fail("GET %s: %d" % (target, status))
    times.sort()
    print("timing %s: n=%d median %.3f ms p99 %.3f ms max %.3f ms"
          % (target, n, times[n // 2], times[min(n - 1, int(n * 0.99))], times[-1]))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5 and sys.argv[1] == "timing":
        timing(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
