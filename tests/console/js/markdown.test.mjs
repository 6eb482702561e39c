// The Markdown reader and the highlighter (src/agentloom/console/markdown.js, highlight.js)
// under node's test runner: the tree each text gives, and that nothing in it is markup.
import { test } from "node:test";
import assert from "node:assert/strict";

import { parse, inline } from "../../../src/agentloom/console/markdown.js";
import { highlight } from "../../../src/agentloom/console/highlight.js";

const text = (t) => ({ type: "text", text: t });

test("a fenced code block keeps its text exactly, with its language", () => {
  const [intro, code, after] = parse("Run this:\n\n```Python\ndef f(x):\n    return `x` * 2\n```\nDone.");
  assert.deepEqual(intro, { type: "paragraph", inline: [text("Run this:")] });
  assert.deepEqual(code, { type: "code", lang: "python", text: "def f(x):\n    return `x` * 2", open: false });
  assert.deepEqual(after, { type: "paragraph", inline: [text("Done.")] });
});

test("an unclosed fence (a reply still streaming) is code up to the end", () => {
  assert.deepEqual(parse("~~~\nnot closed\n# no heading"), [
    { type: "code", lang: "", text: "not closed\n# no heading", open: true },
  ]);
});

test("headings, rules, quotes", () => {
  assert.deepEqual(parse("## Two ##\n---\n> quoted *here*"), [
    { type: "heading", level: 2, inline: [text("Two")] },
    { type: "rule" },
    { type: "quote", blocks: [{ type: "paragraph", inline: [text("quoted "), { type: "em", children: [text("here")] }] }] },
  ]);
});

test("lists: bullets, numbers with their start, nesting, loose items", () => {
  const [bullets] = parse("- one\n- two\n  - nested\n- three\n  continued");
  assert.equal(bullets.ordered, false);
  assert.equal(bullets.loose, false);
  assert.equal(bullets.items.length, 3);
  assert.deepEqual(bullets.items[1][1].items, [[{ type: "paragraph", inline: [text("nested")] }]]);
  assert.deepEqual(bullets.items[2], [{ type: "paragraph", inline: [text("three"), { type: "br" }, text("continued")] }]);
  const [numbers] = parse("3. c\n\n4. d");
  assert.equal(numbers.ordered, true);
  assert.equal(numbers.start, 3);
  assert.equal(numbers.loose, true);
  assert.equal(numbers.items.length, 2);
  const [a, b] = parse("- a\n1. b");
  assert.equal(a.ordered, false);
  assert.equal(b.ordered, true);
});

test("a table with its alignment; a row short of cells is filled", () => {
  const [table] = parse("| name | n |\n|:-----|--:|\n| a | 1 |\n| b |");
  assert.deepEqual(table.align, ["left", "right"]);
  assert.deepEqual(table.head, [[text("name")], [text("n")]]);
  assert.deepEqual(table.rows, [[[text("a")], [text("1")]], [[text("b")], []]]);
});

test("inline: code, strong, emphasis, strikethrough, escapes, words with underscores", () => {
  assert.deepEqual(inline("a `x*y*` **b _c_** ~~d~~ \\*e\\* snake_case_name"), [
    text("a "), { type: "code", text: "x*y*" }, text(" "),
    { type: "strong", children: [text("b "), { type: "em", children: [text("c")] }] }, text(" "),
    { type: "del", children: [text("d")] }, text(" *e* snake_case_name"),
  ]);
  assert.deepEqual(inline("2 * 3 * 4"), [text("2 * 3 * 4")]);
  assert.deepEqual(inline("``a ` b``"), [{ type: "code", text: "a ` b" }]);
});

test("links only for http(s) and mailto; others keep their text and lose the link", () => {
  assert.deepEqual(inline("[docs](https://example.com/a_(b) \"t\")"), [
    { type: "link", href: "https://example.com/a_(b)", children: [text("docs")] },
  ]);
  assert.deepEqual(inline("[click](javascript:alert(1))"), [{ type: "span", children: [text("click")] }]);
  assert.deepEqual(inline("![logo](data:image/png;base64,AAAA)"), [{ type: "span", children: [text("logo")] }]);
  assert.deepEqual(inline("see https://example.com/x. Or <mailto:a@b.c>"), [
    text("see "), { type: "link", href: "https://example.com/x", children: [text("https://example.com/x")] },
    text(". Or "), { type: "link", href: "mailto:a@b.c", children: [text("mailto:a@b.c")] },
  ]);
});

test("markup in the text stays text", () => {
  const [para] = parse('<img src=x onerror="alert(1)"> <script>alert(2)</script>');
  assert.deepEqual(para.inline, [text('<img src=x onerror="alert(1)"> <script>alert(2)</script>')]);
});

test("highlighting: the pieces join back to the code; kinds by language", () => {
  const code = 'def f(n):  # twice\n    return "n" * 2 if n else None';
  const pieces = highlight(code, "py");
  assert.equal(pieces.map((p) => p.text).join(""), code);
  const kinds = Object.fromEntries(pieces.filter((p) => p.kind).map((p) => [p.text, p.kind]));
  assert.deepEqual(kinds, { def: "keyword", "# twice": "comment", return: "keyword", '"n"': "string", 2: "number", if: "keyword", else: "keyword", None: "keyword" });
  const js = highlight("const a = `x${1}`; /* c */ // d\nlet b2 = 0x1f;", "ts");
  assert.deepEqual(js.filter((p) => p.kind).map((p) => [p.kind, p.text]), [
    ["keyword", "const"], ["string", "`x${1}`"], ["comment", "/* c */"], ["comment", "// d"], ["keyword", "let"], ["number", "0x1f"],
  ]);
  assert.deepEqual(highlight("SELECT id FROM t -- all", "sql").filter((p) => p.kind).map((p) => p.kind), ["keyword", "keyword", "comment"]);
  assert.deepEqual(highlight("anything <b>", "brainfuck"), [{ kind: "", text: "anything <b>" }]);
  assert.deepEqual(highlight('echo "unclosed\nnext', "sh").map((p) => p.kind), ["keyword", "", "string", ""]);
});

// Quadratic patterns would take minutes here (past test_js_units.py's timeout), linear ones no
// time at all.
test("long hostile lines are read in one pass", () => {
  parse("```" + "a ".repeat(50_000) + "`");
  parse("# " + " ".repeat(50_000) + "x");
  inline("see https://example.com/" + ".".repeat(50_000) + "x");
  inline("*a ".repeat(20_000)); // openers without a closer
  inline("[".repeat(20_000));
  assert.deepEqual(parse("# Title ##"), [{ type: "heading", level: 1, inline: [text("Title")] }]);
  assert.deepEqual(parse("# C#"), [{ type: "heading", level: 1, inline: [text("C#")] }]);
});

test("nesting past 16 levels is text, not a stack overflow", () => {
  const quotes = parse("> ".repeat(20_000) + "x");
  assert.equal(quotes[0].type, "quote");
  const nested = inline("*a ".repeat(5_000) + "b*".repeat(5_000));
  assert.equal(nested[0].type, "em");
  let lists = parse(Array.from({ length: 40 }, (_, n) => " ".repeat(2 * n) + "- x").join("\n"));
  let levels = 0;
  while (lists[0]?.type === "list") { levels += 1; lists = lists[0].items[0].slice(1); }
  assert.equal(levels, 17); // then the rest is one paragraph of text
});
