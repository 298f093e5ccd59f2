// What pages_test.js measures inside a page, in the browser itself: the contrast of every text
// against its effective background (WCAG 2.x), heading order, labels, keyboard focus, the one
// column of a narrow screen, and every link's target. Each function runs with page.evaluate()
// in the page (run(), with the helpers it uses) or drives it, and answers a list of problems
// (empty when there is none).
"use strict";

// Whether the browser renders `e`: not display:none, not visibility:hidden, not inside a
// closed <details> (whose content Chromium lays out but skips).
function shown(e) {
  return e.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true }) &&
         !e.closest("details:not([open]) > :not(summary)");
}

// Each element that shows text of its own: the contrast of its color (an SVG text's fill) over
// what is painted behind it, the backgrounds of its ancestors composed up to the first opaque
// one over a white canvas. WCAG 2.x's relative luminance and ratio; 4.5:1, or 3:1 for large
// text (24 px, or 18.66 px bold).
function contrastProblems() {
  const parse = (text) => {
    const m = text.match(/rgba?\(([\d.]+),?\s*([\d.]+),?\s*([\d.]+)(?:,?\s*\/?\s*([\d.]+%?))?\)/);
    if (!m) return null;
    let a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return [parseFloat(m[1]), parseFloat(m[2]), parseFloat(m[3]), a];
  };
  const over = (top, bottom) => {  // top composed over an opaque bottom
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const problems = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    if (!own || ["SCRIPT", "STYLE", "TITLE"].includes(el.tagName.toUpperCase())) continue;
    if (el.closest("title")) continue;  // an SVG <title> is a tooltip, not painted text
    const style = getComputedStyle(el);
    if (!shown(el)) continue;
    const isSvg = el instanceof SVGElement;
    const fg = parse(isSvg ? style.fill : style.color);
    if (!fg) { problems.push("unreadable color of " + el.tagName + ": " + style.color); continue; }
    const bg = background(el);
    const text = over(fg, bg);
    const [l1, l2] = [luminance(text), luminance(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
    const needed = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
    if (ratio < needed) {
      problems.push(el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className : "") +
                    " \"" + el.textContent.trim().slice(0, 40) + "\": " + ratio.toFixed(2) + ":1 < " + needed + ":1");
    }
  }
  return problems;
}

// One h1 first, and no level skipped going down (h2 after h1, h3 after h2).
function headingProblems() {
  const levels = Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6")).map((h) => Number(h.tagName[1]));
  const problems = [];
  if (levels[0] !== 1) problems.push("the first heading is h" + levels[0]);
  if (levels.filter((l) => l === 1).length !== 1) problems.push(levels.filter((l) => l === 1).length + " h1");
  levels.forEach((l, i) => { if (i > 0 && l > levels[i - 1] + 1) problems.push("h" + levels[i - 1] + " then h" + l); });
  return problems;
}

// Every form control has a label: a <label for>, a wrapping <label>, aria-label or
// aria-labelledby; a button has a name (its text or aria-label).
function labelProblems() {
  const problems = [];
  for (const c of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
    const labelled = (c.id && document.querySelector('label[for="' + c.id + '"]')) || c.closest("label") ||
                     (c.getAttribute("aria-label") || "").trim() || c.getAttribute("aria-labelledby");
    if (!labelled) problems.push(c.tagName.toLowerCase() + (c.name ? " name=" + c.name : "") + " has no label");
  }
  for (const b of document.querySelectorAll("button")) {
    if (!(b.textContent.trim() || (b.getAttribute("aria-label") || "").trim())) problems.push("a button has no name");
  }
  return problems;
}

// What the keyboard must reach: every visible link, button, summary and form control.
function focusables() {
  const all = document.querySelectorAll(
    "a[href], button, summary, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex='-1'])");
  return Array.from(all).filter(shown)
    .map((e) => { e.dataset.focusIndex = ""; return e; }).length;
}

// At a narrow width, one column: no two blocks of the main content side by side (their
// vertical extents overlap while neither holds the other).
function columnProblems() {
  const blocks = Array.from(document.querySelectorAll(
    "main section, main p, main li, main dt, main dd, main th, main td, main pre, main table, main svg, main h1, main h2, main h3"))
    .filter(shown)
    .map((e) => ({ e, r: e.getBoundingClientRect() }))
    .filter((b) => b.r.height > 0 && b.r.width > 0);
  for (let i = 0; i < blocks.length; i++) {
    for (let j = i + 1; j < blocks.length; j++) {
      const a = blocks[i], b = blocks[j];
      if (a.e.contains(b.e) || b.e.contains(a.e)) continue;
      const overlap = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (overlap > 2) {
        return [a.e.tagName.toLowerCase() + " \"" + a.e.textContent.trim().slice(0, 30) + "\" beside " +
                b.e.tagName.toLowerCase() + " \"" + b.e.textContent.trim().slice(0, 30) + "\""];
      }
    }
  }
  return [];
}

// Every URL the page points to: links, the head's <link>s, scripts and form actions, resolved
// by the browser against the page's own address.
function pageTargets() {
  const urls = new Set();
  document.querySelectorAll("a[href], link[href]").forEach((e) => urls.add(e.href));
  document.querySelectorAll("script[src]").forEach((e) => urls.add(e.src));
  document.querySelectorAll("form[action]").forEach((e) => urls.add(e.action));
  return Array.from(urls);
}

// Tabs through the page from its top: each press must reach the next of the page's focusable
// elements in document order, each with a visible outline, until all are reached.
async function keyboardProblems(page) {
  const wanted = await run(page, focusables);
  const problems = [];
  await page.evaluate(() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); });
  let reached = 0, last = null;
  for (let i = 0; i < 2 * wanted + 10 && reached < wanted; i++) {
    await page.keyboard.press("Tab");
    const f = await page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return { none: true };
      const all = Array.from(document.querySelectorAll("[data-focus-index]"));
      const s = getComputedStyle(e);
      return { index: all.indexOf(e), tag: e.tagName.toLowerCase(), text: e.textContent.trim().slice(0, 30),
               outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2 };
    });
    if (f.none) break;
    if (!f.outline) problems.push("no visible focus on " + f.tag + " \"" + f.text + "\"");
    if (f.index < 0) continue;  // a scrollable box, which Chromium lets the keyboard scroll
    if (last !== null && f.index <= last) {
      problems.push("focus went back from element " + last + " to " + f.index + " (" + f.tag + " " + f.text + ")");
      break;
    }
    last = f.index;
    reached++;
  }
  if (reached < wanted) problems.push("Tab reached " + reached + " of " + wanted + " links, buttons and controls");
  return problems.slice(0, 5);
}

// `fn` evaluated in the page, with the helpers above defined there.
function run(page, fn) {
  return page.evaluate("(() => { " + shown.toString() + "\nreturn (" + fn.toString() + ")(); })()");
}

module.exports = { run,  contrastProblems, headingProblems, labelProblems, columnProblems, pageTargets, keyboardProblems };
