// Logs: the stored responses, newest first, a page at a time (GET /v1/responses).

import { get, query } from "../api.js";
import { h, clear, field, table, time, seconds, badge } from "../dom.js";
import { pager } from "../pager.js";
import { logTabs } from "../log_tabs.js";

const STATUSES = ["", "completed", "in_progress", "queued", "incomplete", "failed", "cancelled"];
const PAGE = 20;

function preview(r) {
  const texts = (r.output || []).filter((i) => i.type === "message")
    .flatMap((i) => i.content || []).map((p) => p.text || p.refusal || "");
  const calls = (r.output || []).filter((i) => i.type.endsWith("_call")).map((i) => i.name || i.type);
  const shown = [texts.join(" "), calls.length ? `→ ${calls.join(", ")}` : ""].join(" ").trim();
  return shown.length > 90 ? `${shown.slice(0, 90)}…` : shown;
}

// A datetime-local value (the browser's time zone) as unix seconds, or undefined when empty.
function unixSeconds(value) {
  return value ? Math.floor(new Date(value).getTime() / 1000) : undefined;
}

// metadata[key]=value for each pair filled in (the server wants every one to match).
function metadataParams(rows) {
  const params = {};
  for (const row of rows.querySelectorAll(".pair")) {
    const [key, value] = [...row.querySelectorAll("input")].map((i) => i.value.trim());
    if (key) params[`metadata[${key}]`] = value;
  }
  return params;
}

function pairRow() {
  return h("div", { class: "row pair" },
    field("Metadata key", h("input", { type: "text", name: "metadata-key", placeholder: "key" })),
    field("Metadata value", h("input", { type: "text", name: "metadata-value", placeholder: "value" })));
}

const COLUMNS = [
  ["Created", (r) => time(r.created_at)],
  ["Response", (r) => h("a", { href: `#/logs/${r.id}`, class: "mono" }, r.id)],
  ["Model", (r) => r.model],
  ["Status", (r) => badge(r.status)],
  ["Tokens", (r) => (r.usage ? String(r.usage.total_tokens) : "—")],
  ["Duration", (r) => seconds(r.created_at, r.completed_at)],
  ["Output", preview],
];

export async function render(root, ctx) {
  const models = await get("/v1/models").catch(() => ({ data: [] }));
  const model = h("select", { name: "model" }, h("option", { value: "" }, "(any)"), models.data.map((m) => h("option", { value: m.id }, m.id)));
  const status = h("select", { name: "status" }, STATUSES.map((s) => h("option", { value: s }, s || "(any)")));
  const from = h("input", { type: "datetime-local", name: "created-after" });
  const to = h("input", { type: "datetime-local", name: "created-before" });
  const pairs = h("div", { class: "pairs" }, pairRow());
  const results = h("div", { class: "results" });

  function filters() {
    return { model: model.value, status: status.value, created_after: unixSeconds(from.value), created_before: unixSeconds(to.value), ...metadataParams(pairs) };
  }

  const pages = pager(results, (after) => get(query("/v1/responses", { limit: PAGE, after, ...filters() })),
    (page) => table(COLUMNS, page.data, "No stored responses match."), ctx.banner);
  const more = h("button", { type: "button", class: "link", onclick: () => pairs.append(pairRow()) }, "+ metadata pair");
  const form = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); pages.reset().catch(ctx.banner); } },
    h("div", { class: "row" }, field("Model", model), field("Status", status), field("Created from", from), field("Created before", to)),
    pairs, h("div", { class: "row" }, more, h("button", { type: "submit" }, "Filter")));
  clear(root, logTabs("logs"), h("h1", {}, "Logs"),
    h("p", { class: "muted" }, "Stored responses, newest first, filtered by the server: every filter filled in must match (times in this browser's time zone)."),
    form, results);
  await pages.reset();
}
