// A model's Markdown, read into a tree of plain objects (parse: no DOM, the node tests run it)
// and drawn as elements (markdown): fenced code blocks (highlighted, with a copy button),
// headings, paragraphs, lists, block quotes, tables, rules; inline code, emphasis, strong,
// strikethrough, links. No HTML: a tag in the text is text, every node is made with h(), and a
// link is made only for http(s) and mailto URLs. An unclosed fence (a reply still streaming)
// is a code block up to the end.

import { h } from "./dom.js";
import { highlight } from "./highlight.js";

// Each pattern is linear in its line (no nested or overlapping repeats): a model's longest
// line is read in one pass.
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;
const DEEPEST = 16; // quotes, lists and spans nested deeper are read as plain text

// --- blocks ----------------------------------------------------------------------------------

export function parse(text) {
  return blocks(String(text ?? "").replace(/\r\n?/g, "\n").split("\n"));
}

function blocks(lines, depth = 0) {
  if (depth > DEEPEST) return [{ type: "paragraph", inline: [{ type: "text", text: lines.join("\n") }] }];
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (!lines[i].trim()) { i += 1; continue; }
    const reader = READERS.find((r) => r.starts(lines, i));
    const [block, next] = reader ? reader.read(lines, i, depth) : paragraph(lines, i);
    out.push(block);
    i = next;
  }
  return out;
}

const READERS = [
  { starts: (lines, i) => fence(lines[i]) !== null, read: fenced },
  { starts: (lines, i) => HEADING.test(lines[i]), read: heading },
  { starts: (lines, i) => RULE.test(lines[i]), read: (lines, i) => [{ type: "rule" }, i + 1] },
  { starts: (lines, i) => QUOTE.test(lines[i]), read: quote },
  { starts: (lines, i) => ITEM.test(lines[i]), read: list },
  { starts: (lines, i) => isTable(lines, i), read: table },
];

// A fence's indent, marks and language; null for no fence (a backtick fence's info has no `).
function fence(line) {
  const m = FENCE.exec(line);
  if (!m || (m[2][0] === "`" && m[3].includes("`"))) return null;
  return { indent: m[1], marks: m[2], lang: m[3].trim().split(/\s+/)[0] };
}

function fenced(lines, start) {
  const { indent, marks, lang } = fence(lines[start]);
  const closing = new RegExp(`^ {0,3}${marks[0] === "`" ? "`" : "~"}{${marks.length},}\\s*$`);
  const body = [];
  let i = start + 1;
  while (i < lines.length && !closing.test(lines[i])) {
    body.push(lines[i].replace(new RegExp(`^ {0,${indent.length}}`), ""));
    i += 1;
  }
  const open = i >= lines.length;
  return [{ type: "code", lang: lang.toLowerCase(), text: body.join("\n"), open }, i + 1];
}

function heading(lines, i) {
  const [, marks, content] = HEADING.exec(lines[i]);
  return [{ type: "heading", level: marks.length, inline: inline(withoutClosingHashes(content || "")) }, i + 1];
}

// "Title ##" is "Title" (closing hashes after a space go).
function withoutClosingHashes(text) {
  const trimmed = text.trimEnd();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === "#") end -= 1;
  return end === 0 || trimmed[end - 1] === " " || trimmed[end - 1] === "\t" ? trimmed.slice(0, end).trimEnd() : trimmed;
}

function quote(lines, start, depth) {
  const inner = [];
  let i = start;
  while (i < lines.length && QUOTE.test(lines[i])) { inner.push(lines[i].replace(QUOTE, "")); i += 1; }
  return [{ type: "quote", blocks: blocks(inner, depth + 1) }, i];
}

// A list: its items (each its lines, de-indented, read as blocks) while the markers are of the
// same kind; a line indented under an item belongs to it, and so does a paragraph's next line.
function list(lines, start, depth) {
  const first = ITEM.exec(lines[start]);
  const ordered = /\d/.test(first[2]);
  const items = [];
  let i = start;
  let loose = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || /\d/.test(m[2]) !== ordered || m[1].length > first[1].length + 1) break;
    const width = m[1].length + m[2].length + Math.min(m[3].length || 1, 4);
    const body = [m[4]];
    i += 1;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {
        const more = i + 1 < lines.length && indentOf(lines[i + 1]) >= width;
        if (!more) break;
        body.push("");
        i += 1;
        continue;
      }
      if (indentOf(line) >= width) { body.push(line.slice(width)); i += 1; continue; }
      if (ITEM.test(line) || startsBlock(lines, i) || !body[body.length - 1].trim()) break;
      body.push(line.trim()); // a lazy continuation of the item's paragraph
      i += 1;
    }
    items.push(blocks(body, depth + 1));
    if (i < lines.length && !lines[i].trim()) {
      let j = i;
      while (j < lines.length && !lines[j].trim()) j += 1;
      const after = j < lines.length ? ITEM.exec(lines[j]) : null;
      if (!after || /\d/.test(after[2]) !== ordered) break;
      loose = true;
      i = j;
    }
  }
  return [{ type: "list", ordered, start: ordered ? parseInt(first[2], 10) : 1, loose, items }, i];
}

function indentOf(line) {
  return line.length - line.replace(/^\s+/, "").length;
}

function startsBlock(lines, i) {
  return READERS.some((r) => r.read !== list && r.starts(lines, i));
}

function cells(line) {
  const trimmed = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function isTable(lines, i) {
  return i + 1 < lines.length && lines[i].includes("|") && TABLE_RULE.test(lines[i + 1])
    && lines[i + 1].includes("-") && cells(lines[i]).length === cells(lines[i + 1]).length;
}

function table(lines, start) {
  const head = cells(lines[start]);
  const align = cells(lines[start + 1]).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : c.startsWith(":") ? "left" : null));
  const rows = [];
  let i = start + 2;
  while (i < lines.length && lines[i].trim() && lines[i].includes("|")) {
    const row = cells(lines[i]);
    rows.push(head.map((_, n) => inline(row[n] ?? "")));
    i += 1;
  }
  return [{ type: "table", align, head: head.map(inline), rows }, i];
}

function paragraph(lines, start) {
  const body = [lines[start].trim()];
  let i = start + 1;
  while (i < lines.length && lines[i].trim() && !startsBlock(lines, i) && !ITEM.test(lines[i])) {
    body.push(lines[i].trim());
    i += 1;
  }
  return [{ type: "paragraph", inline: inline(body.join("\n")) }, i];
}

// --- inline ----------------------------------------------------------------------------------

const PUNCTUATION = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;
const BARE_URL = /^https?:\/\/[^\s<>"]+/i;
const TRAILING = ".,;:!?'*_~";
const LABEL_MOST = 1000; // a link's label is looked for this far (else each [ reads to the end)
const SPANS = [
  { mark: "**", type: "strong" },
  { mark: "__", type: "strong", word: true },
  { mark: "~~", type: "del" },
  { mark: "*", type: "em" },
  { mark: "_", type: "em", word: true },
];

// The inline nodes of a text: text, code, strong, em, del, link, br.
export function inline(text, depth = 0) {
  if (depth > DEEPEST) return [{ type: "text", text }];
  const misses = new Map(); // mark -> a position from which it closes no span (nor from later)
  const out = [];
  let plain = "";
  const flush = () => { if (plain) out.push({ type: "text", text: plain }); plain = ""; };
  let i = 0;
  while (i < text.length) {
    const found = inlineAt(text, i, misses, depth);
    if (found) { flush(); if (found.node) out.push(found.node); i = found.end; continue; }
    if (text[i] === "\\" && PUNCTUATION.test(text[i + 1] || "")) { plain += text[i + 1]; i += 2; continue; }
    plain += text[i];
    i += 1;
  }
  flush();
  return out;
}

function inlineAt(text, i, misses, depth) {
  const c = text[i];
  if (c === "\n") return { node: { type: "br" }, end: i + 1 };
  if (c === "`") return codeSpan(text, i);
  if (c === "[" || (c === "!" && text[i + 1] === "[")) return link(text, i, depth);
  if (c === "<") return autolink(text, i);
  if ((c === "h" || c === "H") && !WORD.test(text[i - 1] || "")) return bareUrl(text, i);
  for (const span of SPANS) {
    const found = text.startsWith(span.mark, i) ? emphasis(text, i, span, misses, depth) : null;
    if (found) return found;
  }
  return null;
}

function codeSpan(text, i) {
  const run = /^`+/.exec(text.slice(i))[0];
  let j = text.indexOf(run, i + run.length);
  while (j !== -1 && text[j + run.length] === "`") {
    let k = j;
    while (text[k] === "`") k += 1;
    j = text.indexOf(run, k);
  }
  if (j === -1) return { node: { type: "text", text: run }, end: i + run.length };
  let code = text.slice(i + run.length, j).replace(/\n/g, " ");
  if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
  return { node: { type: "code", text: code }, end: j + run.length };
}

// The end of a span opened before `from` by `mark`: not after whitespace, code spans skipped.
// Where it is depends on `from` alone, so a search that failed is not made again from later
// (many openers without a closer would make the text's reading quadratic).
function closing(text, from, span, misses) {
  if (from >= (misses.get(span.mark) ?? Infinity)) return -1;
  for (let j = from; j < text.length; j += 1) {
    if (text[j] === "\\") { j += 1; continue; }
    if (text[j] === "`") { const code = codeSpan(text, j); j = code.end - 1; continue; }
    if (!text.startsWith(span.mark, j) || /\s/.test(text[j - 1])) continue;
    const single = span.mark.length === 1;
    if (single && text[j + 1] === span.mark) { j += 1; continue; } // a double mark: another span's
    if (span.word && WORD.test(text[j + span.mark.length] || "")) continue;
    return j;
  }
  misses.set(span.mark, from);
  return -1;
}

function emphasis(text, i, span, misses, depth) {
  const after = text[i + span.mark.length] || "";
  if (!after || /\s/.test(after) || (span.word && WORD.test(text[i - 1] || ""))) return null;
  const end = closing(text, i + span.mark.length + 1, span, misses);
  if (end === -1) return null;
  return { node: { type: span.type, children: inline(text.slice(i + span.mark.length, end), depth + 1) }, end: end + span.mark.length };
}

// [label](url "title"), and ![alt](url) drawn as a link to it (nothing is loaded).
function link(text, i, depth) {
  const image = text[i] === "!";
  const open = image ? i + 1 : i;
  let brackets = 0;
  let close = -1;
  for (let j = open; j < Math.min(text.length, open + LABEL_MOST); j += 1) {
    if (text[j] === "\\") { j += 1; continue; }
    if (text[j] === "[") brackets += 1;
    if (text[j] === "]" && --brackets === 0) { close = j; break; }
  }
  if (close === -1 || text[close + 1] !== "(") return null;
  const target = /^\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(text.slice(close + 1));
  if (!target) return null;
  const label = inline(text.slice(open + 1, close), depth + 1);
  const href = target[1];
  const children = label.length ? label : [{ type: "text", text: href }];
  const node = SAFE_URL.test(href) ? { type: "link", href, children } : { type: "span", children };
  return { node, end: close + 1 + target[0].length };
}

function autolink(text, i) {
  const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
  return m ? { node: { type: "link", href: m[1], children: [{ type: "text", text: m[1] }] }, end: i + m[0].length } : null;
}

function bareUrl(text, i) {
  const m = BARE_URL.exec(text.slice(i));
  if (!m) return null;
  let end = m[0].length;
  while (end > 0 && TRAILING.includes(m[0][end - 1])) end -= 1; // a sentence's, not the URL's
  let url = m[0].slice(0, end);
  while (url.endsWith(")") && (url.match(/\(/g) || []).length < (url.match(/\)/g) || []).length) url = url.slice(0, -1);
  return { node: { type: "link", href: url, children: [{ type: "text", text: url }] }, end: i + url.length };
}

// --- drawing ---------------------------------------------------------------------------------

const INLINE = {
  text: (n) => n.text,
  br: () => h("br"),
  code: (n) => h("code", {}, n.text),
  strong: (n) => h("strong", {}, drawInline(n.children)),
  em: (n) => h("em", {}, drawInline(n.children)),
  del: (n) => h("del", {}, drawInline(n.children)),
  span: (n) => h("span", {}, drawInline(n.children)),
  link: (n) => h("a", { href: n.href, rel: "noreferrer noopener", target: "_blank" }, drawInline(n.children)),
};

function drawInline(nodes) {
  return nodes.map((n) => INLINE[n.type](n));
}

const BLOCKS = {
  paragraph: (b) => h("p", {}, drawInline(b.inline)),
  heading: (b) => h(`h${b.level}`, {}, drawInline(b.inline)),
  rule: () => h("hr"),
  quote: (b) => h("blockquote", {}, drawBlocks(b.blocks)),
  code: codeBlock,
  list: (b) => h(b.ordered ? "ol" : "ul", { start: b.ordered && b.start !== 1 ? String(b.start) : null },
    b.items.map((item) => h("li", {}, drawItem(item, b.loose)))),
  table: (b) => h("div", { class: "table-scroll" }, h("table", {},
    h("thead", {}, h("tr", {}, b.head.map((cell, n) => h("th", { scope: "col", class: alignClass(b.align[n]) }, drawInline(cell))))),
    h("tbody", {}, b.rows.map((row) => h("tr", {}, row.map((cell, n) => h("td", { class: alignClass(b.align[n]) }, drawInline(cell)))))))),
};

function alignClass(align) {
  return align ? `align-${align}` : null;
}

// A tight item's paragraph is drawn without its <p>.
function drawItem(item, loose) {
  if (!loose && item[0]?.type === "paragraph") return [drawInline(item[0].inline), drawBlocks(item.slice(1))];
  return drawBlocks(item);
}

function drawBlocks(list) {
  return list.map((b) => BLOCKS[b.type](b));
}

// Writes `text` to the clipboard: the Clipboard API where the page may use it (a secure
// context), else a selected textarea and the copy command.
async function copy(text) {
  if (navigator.clipboard && window.isSecureContext) { await navigator.clipboard.writeText(text); return; }
  const area = h("textarea", { class: "offscreen", readonly: true, text });
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

function codeBlock(b) {
  const button = h("button", { type: "button", class: "secondary copy", "aria-label": `Copy ${b.lang || "code"}` }, "Copy");
  button.addEventListener("click", () => copy(b.text).then(
    () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); },
    () => { button.textContent = "Copy failed"; }));
  return h("div", { class: "codeblock", "data-lang": b.lang || null },
    h("div", { class: "codebar" }, h("span", { class: "lang" }, b.lang || "code"), button),
    h("pre", { class: "code" }, h("code", { class: b.lang ? `lang-${b.lang}` : null },
      highlight(b.text, b.lang).map((t) => (t.kind ? h("span", { class: `tok-${t.kind}` }, t.text) : t.text)))));
}

// The elements of a Markdown text.
export function markdown(text) {
  return h("div", { class: "markdown" }, drawBlocks(parse(text)));
}
