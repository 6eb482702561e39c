// Output and input items as the page shows them: messages (a model's text as Markdown),
// reasoning, every tool call with its arguments and output, citations. One function per item
// type, picked from a table.

import { h, pretty, code } from "./dom.js";
import { markdown } from "./markdown.js";

function text(value) {
  return h("div", { class: "text" }, value);
}

// A link only for http(s) URLs: a model's output must not make a javascript: link.
function link(url, label) {
  return /^https?:\/\//i.test(url || "") ? h("a", { href: url, rel: "noreferrer noopener", target: "_blank" }, label || url) : label || url;
}

function citations(annotations) {
  if (!annotations?.length) return null;
  return h("ol", { class: "citations", "aria-label": "Citations" }, annotations.map((a) => h("li", {},
    a.type === "url_citation" ? link(a.url, a.title)
      : a.type === "file_citation" ? `${a.filename || a.file_id} (${a.file_id})`
        : pretty(a))));
}

const PARTS = {
  input_text: (p) => text(p.text),
  output_text: (p) => [markdown(p.text), citations(p.annotations)],
  text: (p) => text(p.text),
  refusal: (p) => h("div", { class: "text refusal" }, p.refusal),
  reasoning_text: (p) => text(p.text),
  summary_text: (p) => text(p.text),
  input_image: (p) => h("div", { class: "muted" }, `[image ${p.file_id || (p.image_url || "").slice(0, 60)}]`),
  input_file: (p) => h("div", { class: "muted" }, `[file ${p.file_id || p.filename || ""}]`),
};

function part(p) {
  return (PARTS[p?.type] || ((x) => code(pretty(x))))(p);
}

function content(item) {
  if (typeof item.content === "string") return text(item.content);
  return (item.content || []).map(part);
}

function card(item, title, ...body) {
  return h("article", { class: `item ${item.type}`, "data-type": item.type },
    h("header", {}, h("strong", {}, title), item.status ? h("span", { class: `badge ${item.status}` }, item.status) : null),
    ...body);
}

function callCard(item, title, input, output) {
  return card(item, title,
    input ? h("div", { class: "io" }, h("span", { class: "label" }, "arguments"), code(pretty(input), "arguments")) : null,
    output ? h("div", { class: "io" }, h("span", { class: "label" }, "output"), code(pretty(output), "output")) : null);
}

function fileSearch(item) {
  const results = item.results || [];
  return card(item, "file_search",
    h("div", { class: "muted" }, `queries: ${(item.queries || []).join(" · ") || "…"}`),
    results.length ? h("ul", { class: "hits" }, results.map((r) => h("li", {},
      h("strong", {}, r.filename || r.file_id), ` score ${Number(r.score).toFixed(3)}`,
      h("div", { class: "snippet" }, (r.text || "").slice(0, 300))))) : null);
}

function webSearch(item) {
  const action = item.action || {};
  const sources = action.sources || [];
  return card(item, "web_search",
    h("div", { class: "muted" }, `${action.type || "search"}: ${action.query || action.url || "…"}`),
    sources.length ? h("ul", {}, sources.map((s) => h("li", {}, link(s.url)))) : null);
}

function codeInterpreter(item) {
  const outputs = (item.outputs || []).map((o) => o.type === "logs" ? o.logs : pretty(o)).join("\n");
  return card(item, "code_interpreter",
    item.code ? code(item.code, "code") : null,
    outputs ? h("div", { class: "io" }, h("span", { class: "label" }, "output"), code(outputs, "output")) : null);
}

function reasoning(item) {
  const parts = [...(item.summary || []), ...(item.content || [])];
  return h("details", { class: "item reasoning", open: true, "data-type": "reasoning" },
    h("summary", {}, "reasoning"), parts.length ? parts.map(part) : h("div", { class: "muted" }, "(sealed)"));
}

// A compaction item: where earlier turns were replaced by a sealed summary (never shown).
function compaction(item) {
  return h("div", { class: "item compaction", "data-type": "compaction", role: "note" },
    h("span", {}, "earlier turns compacted"), item.id ? h("span", { class: "mono muted" }, ` · ${item.id}`) : null);
}

const ITEMS = {
  message: (item) => card(item, item.role || "message", content(item)),
  reasoning,
  function_call: (item) => callCard(item, `function_call ${item.name} · ${item.call_id}`, item.arguments),
  function_call_output: (item) => callCard(item, `function_call_output · ${item.call_id}`, null, item.output),
  custom_tool_call: (item) => callCard(item, `custom_tool_call ${item.name} · ${item.call_id}`, item.input),
  custom_tool_call_output: (item) => callCard(item, `custom_tool_call_output · ${item.call_id}`, null, item.output),
  mcp_call: (item) => callCard(item, `mcp_call ${item.server_label}.${item.name}`, item.arguments, item.output || item.error),
  mcp_list_tools: (item) => card(item, `mcp_list_tools ${item.server_label}`,
    h("div", { class: "muted" }, (item.tools || []).map((t) => t.name).join(", ") || item.error || "no tools")),
  mcp_approval_request: (item) => callCard(item, `mcp_approval_request ${item.server_label}.${item.name}`, item.arguments),
  mcp_approval_response: (item) => card(item, `mcp_approval_response · ${item.approval_request_id}`,
    h("div", {}, item.approve ? "approved" : `denied${item.reason ? `: ${item.reason}` : ""}`)),
  file_search_call: fileSearch,
  web_search_call: webSearch,
  code_interpreter_call: codeInterpreter,
  compaction,
};

export function item(value) {
  if (!value) return null;
  const render = ITEMS[value.type];
  if (render) return render(value);
  return card(value, value.type || "item", h("details", {}, h("summary", {}, "JSON"), code(pretty(value))));
}

export function items(list) {
  return h("div", { class: "items" }, list.map(item));
}

export function usage(u) {
  if (!u) return h("span", { class: "muted" }, "—");
  const cached = u.input_tokens_details?.cached_tokens;
  const reasoningTokens = u.output_tokens_details?.reasoning_tokens;
  return h("dl", { class: "inline" },
    h("dt", {}, "input"), h("dd", {}, `${u.input_tokens}${cached ? ` (${cached} cached)` : ""}`),
    h("dt", {}, "output"), h("dd", {}, `${u.output_tokens}${reasoningTokens ? ` (${reasoningTokens} reasoning)` : ""}`),
    h("dt", {}, "total"), h("dd", {}, String(u.total_tokens)));
}
