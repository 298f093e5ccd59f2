// evledger's pages in a real headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core, against a running `evledger serve` (see browser_test.sh, which starts it).
//   node pages_test.js BASE_URL OUT_DIR HOSTILE_TITLE [links]
// Checks each page type against the JSON API, follows the run page's links, downloads the
// citation's .tlog-proof (and the entry's bytes) into OUT_DIR for the CLI to verify, checks
// that hostile manifest text shows as text and runs nothing, that no page logs a console error
// and that no page scrolls sideways at 390 px; keeps a screenshot of each page type in
// OUT_DIR/screenshots. On each page type it measures, in the browser (checks.js): the contrast
// of every text, heading order, labels, that Tab reaches every link and button in order with a
// visible focus, and one column at 390 px. On every page type, every link, stylesheet, script
// and form target must stay below BASE_URL and answer without an error: each kind of link is
// clicked, every other one fetched. With `links` (BASE_URL at a --prefix, or a proxy's sub-path)
// only the page types and their links are checked. Prints one line per failed check and
// "N passed, M failed".
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");
const checks = require("./checks.js");

const [base, out, hostile, mode] = process.argv.slice(2);
const linksOnly = mode === "links";
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) { passed++; } else { failed++; console.log("FAILED: " + what); }
}
async function api(target) {
  const r = await fetch(new URL(target.replace(/^\//, ""), base));
  if (!r.ok) throw new Error(target + ": HTTP " + r.status);
  return r.json();
}
const url = (target) => new URL(target.replace(/^\//, ""), base).toString();
const hex = (digest) => digest.slice(7);

// Every target of the page at `target` (a path from the root) stays below the base and
// answers without an error; a link to a kind of page not clicked yet is clicked.
async function checkLinks(page, context, type, target, clicked, fetched) {
  await page.goto(url(target));
  const targets = await checks.run(page, checks.pageTargets);
  check(targets.length > 0, type + " page has links");
  for (const t of targets) {
    if (!t.startsWith(base)) { check(false, type + " page links outside " + base + ": " + t); continue; }
    if (fetched.has(t)) continue;
    fetched.add(t);
    const r = await context.request.get(t, { maxRedirects: 0 });
    check(r.status() < 400, type + " page link " + t + ": HTTP " + r.status());
  }
  // One click per kind of link (its first path segment below the base), as a person would.
  const kinds = await page.$$eval("a[href]:not([download])", (as, b) => {
    const seen = {};
    as.forEach((a, i) => {
      if (a.getClientRects().length === 0 || !a.href.startsWith(b)) return;
      const kind = a.href.slice(b.length).split(/[/?#]/)[0] || "/";
      if (!(kind in seen)) seen[kind] = i;
    });
    return Object.entries(seen);
  }, base);
  for (const [kind, i] of kinds) {
    if (clicked.has(kind)) continue;
    clicked.add(kind);
    await page.goto(url(target));
    const link = (await page.$$("a[href]:not([download])"))[i];
    const [r] = await Promise.all([page.waitForNavigation(), link.click()]);
    check(r && r.status() < 400, type + " page: clicking a link to " + kind + " gives HTTP " + (r && r.status()));
  }
}

(async () => {
  fs.mkdirSync(path.join(out, "screenshots"), { recursive: true });
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(page.url() + ": " + m.text()); });
  page.on("pageerror", (e) => errors.push(page.url() + ": " + e.message));

  if (!linksOnly) {
    // The measures themselves find what they look for: a page that breaks each rule.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.setContent('<main><h1>t</h1><h3>skipped</h3><p style="color:#999">faint</p>' +
      '<p style="color:#767676;background:rgba(0,0,0,0.5)">faint on half black</p>' +
      '<p style="font-size:30px;color:#949494">large and just enough</p>' +
      '<div style="display:flex"><p>left</p><p>right</p></div><input id="x">' +
      '<a href="#a">reached</a><a href="#b" tabindex="-1">skipped</a><button style="outline:none">b</button></main>');
    const contrast = await checks.run(page, checks.contrastProblems);
    check(contrast.length === 2 && contrast[0].includes("faint") && contrast[1].includes("half black"),
          "the contrast measure finds faint text: " + contrast.join("; "));
    check((await checks.run(page, checks.headingProblems)).join() === "h1 then h3", "the heading measure finds h1 then h3");
    check((await checks.run(page, checks.labelProblems)).length === 1, "the label measure finds the bare input");
    check((await checks.run(page, checks.columnProblems)).length === 1, "the column measure finds two columns");
    const keys = await checks.keyboardProblems(page);
    check(keys.some((k) => k.startsWith("Tab reached")) && keys.some((k) => k.includes("no visible focus")),
          "the keyboard measure finds an unreachable link and a hidden focus: " + keys.join("; "));
    await page.setViewportSize({ width: 1280, height: 720 });
  }

  const runs = (await api("/api/v1/runs?limit=1000")).items;
  const follower = runs.find((r) => r.rank !== null && r.rank > 1 && r.leader && r.leader !== r.run);
  check(follower, "the data has a ranked run below its group's leader");
  const view = await api("/api/v1/runs/" + hex(follower.run));
  const benchmarks = (await api("/api/v1/benchmarks")).items;
  const types = {
    home: "/", run: "/runs/" + hex(view.run), group: "/groups/" + hex(view.comparisonKey),
    compare: "/compare?run=" + hex(view.leader) + "&run=" + hex(view.run),
    event: "/events/" + view.index, benchmarks: "/benchmarks",
    benchmark: "/benchmarks/" + encodeURIComponent(benchmarks[0].benchmark), records: "/records",
    keys: "/keys", search: "/search?q=" + encodeURIComponent(view.benchmark.slice(0, 6)),
  };

  // Every page type's links, at whatever path the base is.
  const clicked = new Set(), fetched = new Set();
  for (const [type, target] of Object.entries(types)) {
    await checkLinks(page, context, type, target, clicked, fetched);
  }
  check(fetched.size > 20, "links checked: " + fetched.size + ", kinds clicked: " + Array.from(clicked).join(" "));
  if (linksOnly) {
    check(errors.length === 0, "console errors: " + errors.slice(0, 5).join(" | "));
    await browser.close();
    console.log(passed + " passed, " + failed + " failed (links of every page type below " + base + ")");
    process.exit(failed === 0 ? 0 : 1);
  }

  // The run page: each section, and its numbers as the API gives them.
  const resp = await page.goto(url("/runs/" + hex(view.run).slice(0, 12)));
  check(resp.status() === 200, "run page status " + resp.status());
  check((resp.headers()["content-security-policy"] || "").includes("script-src 'self'"), "run page CSP");
  check((resp.headers()["etag"] || "") !== "", "run page ETag");
  const alternate = await page.$eval('link[rel="alternate"][type="application/json"]', (l) => l.href);
  check(alternate === url("/api/v1/runs/" + hex(view.run)), "run page alternate link " + alternate);
  const sections = await page.$$eval("main h2", (hs) => hs.map((h) => h.textContent));
  for (const s of ["Primary measurement", "Identity", "Correctness", "Workload", "Measurements",
                   "Protocol", "Environment", "Artifacts", "Controlled reruns",
                   "Replications and notes", "Corrections", "Cite this record", "Canonical manifest"]) {
    check(sections.includes(s), "run page section " + s);
  }
  const headings = await page.$$eval("h1, h2, h3, h4", (hs) => hs.map((h) => Number(h.tagName[1])));
  check(headings[0] === 1 && headings.every((h, i) => i === 0 || h <= headings[i - 1] + 1),
        "run page headings in order: " + headings.join(","));
  const mainText = await page.textContent("main");
  check(mainText.includes("Rank " + view.rank + " of " + view.groupSize), "run page rank " + view.rank);
  const cite = await page.$$eval("#citation dd", (dds) => dds.map((d) => d.textContent));
  check(cite.some((t) => t.startsWith(view.run)), "citation run digest");
  check(cite.includes(view.event), "citation event id");
  check(cite.includes(String(view.index)), "citation log index");
  if (view.externalId) check(mainText.includes(view.externalId), "run page external id");
  check(mainText.includes(view.evidence), "run page evidence " + view.evidence);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(out, "screenshots", "run.png"), fullPage: true });

  // "Compare with #1", then back and the group link.
  await Promise.all([page.waitForNavigation(), page.click("#compare-leader")]);
  check(page.url().endsWith("/compare?run=" + hex(view.leader) + "&run=" + hex(view.run)),
        "Compare with #1 leads to the comparison: " + page.url());
  const compared = await page.$$eval("main a[href]", (as) => as.map((a) => a.href));
  check(compared.includes(url("/runs/" + hex(view.leader))) && compared.includes(url("/runs/" + hex(view.run))),
        "the comparison shows both runs");
  await page.goBack();
  await Promise.all([page.waitForNavigation(), page.click("#group-link")]);
  check(page.url().endsWith("/groups/" + hex(view.comparisonKey)), "the group link: " + page.url());
  const members = (await api("/api/v1/runs?group=" + hex(view.comparisonKey) + "&limit=1000")).items;
  const rows = await page.$$eval("table.ranking tbody tr", (trs) => trs.length);
  check(rows === members.length, "group page rows " + rows + " = API members " + members.length);
  check(await page.$("svg.chart") !== null, "group page chart");

  // The citation's proof, downloaded as a person would, with the entry it proves.
  await page.goto(url("/runs/" + hex(view.run)));
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#proof")]);
  await download.saveAs(path.join(out, "run.tlog-proof"));
  const raw = await fetch(url("/api/v1/events/" + view.index + "?format=raw"));
  fs.writeFileSync(path.join(out, "run.entry"), Buffer.from(await raw.arrayBuffer()));
  fs.writeFileSync(path.join(out, "run.index"), String(view.index));

  // The event page of the observation: its runs, signers and proof.
  const ev = await page.goto(url("/events/" + view.index));
  check(ev.status() === 200, "event page status");
  const touched = await page.$$eval("#touched a", (as) => as.map((a) => a.href));
  check(touched.includes(url("/runs/" + hex(view.run))), "the event page links the run it touched");
  const event = await api("/api/v1/events/" + view.index);
  const signerText = await page.textContent("main table");
  check(event.signatures.every((s) => signerText.includes(s.signer)), "event page names its signers");
  check(await page.$("#inclusion") !== null, "event page inclusion proof");

  // Hostile manifest text: shown as text, run nowhere.
  const evil = runs.find((r) => r.title === hostile);
  check(evil, "the data has the run with the hostile title");
  const pagesWithEvil = evil ? ["/runs/" + hex(evil.run), "/search?q=" + encodeURIComponent("<script>"),
                                "/benchmarks/" + encodeURIComponent(evil.benchmark)] : [];
  if (evil && evil.comparisonKey) pagesWithEvil.push("/groups/" + hex(evil.comparisonKey));
  for (const target of pagesWithEvil) {
    const r = await page.goto(url(target));
    check(r.status() === 200, target + " status " + r.status());
    const text = await page.textContent("main");
    check(text.includes(hostile), target + " shows the hostile title as text");
    const ran = await page.evaluate(() => [window.__pwned, document.querySelectorAll("main img").length]);
    check(ran[0] === undefined && ran[1] === 0, target + " ran or built nothing of it: " + ran);
  }

  // Every page type: no console error, no sideways scroll and one column at 390 px, headings
  // in order, labels, the contrast of every text, a screenshot.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [type, target] of Object.entries(types)) {
    const r = await page.goto(url(target));
    check(r.status() === 200, type + " page status " + r.status());
    const cache = r.headers()["cache-control"] || "";
    check(cache.includes("max-age") && (r.headers()["etag"] || "") !== "", type + " page caching: " + cache);
    const alt = await page.$('link[rel="alternate"][type="application/json"]');
    check(alt !== null, type + " page links its JSON");
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth,
                                              document.documentElement.clientWidth]);
    check(widths[0] <= widths[1], type + " page at 390 px scrolls sideways: " + widths);
    const h1 = await page.$$eval("h1", (hs) => hs.length);
    check(h1 === 1, type + " page has one h1");
    const labels = await checks.run(page, checks.labelProblems);
    check(labels.length === 0, type + " page form controls have labels: " + labels.join("; "));
    const columns = await checks.run(page, checks.columnProblems);
    check(columns.length === 0, type + " page at 390 px is one column: " + columns.join("; "));
    const headings = await checks.run(page, checks.headingProblems);
    check(headings.length === 0, type + " page headings in order: " + headings.join("; "));
    const contrast = await checks.run(page, checks.contrastProblems);
    check(contrast.length === 0, type + " page contrast at 390 px: " + contrast.slice(0, 5).join("; "));
    await page.screenshot({ path: path.join(out, "screenshots", type + "-390.png"), fullPage: true });
  }
  // At 1280 px: the contrast again, and the keyboard: Tab from the top reaches every link,
  // button and control in document order, each with a visible focus.
  await page.setViewportSize({ width: 1280, height: 900 });
  for (const [type, target] of Object.entries(types)) {
    await page.goto(url(target));
    const contrast = await checks.run(page, checks.contrastProblems);
    check(contrast.length === 0, type + " page contrast: " + contrast.slice(0, 5).join("; "));
    const keyboard = await checks.keyboardProblems(page);
    check(keyboard.length === 0, type + " page keyboard: " + keyboard.join("; "));
    await page.screenshot({ path: path.join(out, "screenshots", type + ".png"), fullPage: true });
  }

  // The records feed is well-formed Atom with one entry per newest change.
  const feed = await (await fetch(url("/records/feed.xml"))).text();
  const parsed = await page.evaluate((xml) => {
    const d = new DOMParser().parseFromString(xml, "application/xml");
    if (d.querySelector("parsererror")) return { error: d.querySelector("parsererror").textContent };
    const root = d.documentElement;
    return { ns: root.namespaceURI, name: root.localName, entries: root.getElementsByTagName("entry").length,
             ids: Array.from(root.getElementsByTagName("id")).map((e) => e.textContent) };
  }, feed);
  check(!parsed.error && parsed.ns === "http://www.w3.org/2005/Atom" && parsed.name === "feed",
        "the feed is Atom: " + JSON.stringify(parsed).slice(0, 300));
  const leaders = (await api("/api/v1/leaders?limit=1000")).items;
  check(parsed.entries === Math.min(50, leaders.length), "feed entries " + parsed.entries);
  check(new Set(parsed.ids || []).size === (parsed.ids || []).length, "feed ids are distinct");

  // Search finds a run by the start of its digest.
  await page.goto(url("/search?q=" + hex(view.run).slice(0, 10)));
  const found = await page.$$eval("main table a[href]", (as, runs) => as.map((a) => a.href).filter((h) => h.startsWith(runs)),
                                  url("/runs/"));
  check(found.length === 1 && found[0] === url("/runs/" + hex(view.run)), "search by digest start: " + found);

  // Keyboard: Tab reaches the search box from the top of a page.
  await page.goto(url("/"));
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement && document.activeElement.id === "site-q");
  }
  check(reached, "the keyboard reaches the search box");

  check(errors.length === 0, "console errors: " + errors.slice(0, 5).join(" | "));
  await browser.close();
  console.log(passed + " passed, " + failed + " failed");
  process.exit(failed === 0 ? 0 : 1);
})().catch((e) => { console.log("FAILED: " + (e.stack || e)); process.exit(1); });
