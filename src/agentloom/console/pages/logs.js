// Logs: the stored responses, newest first, a page at a time (GET /v1/responses).

import { get, query } from "../api.js";
import { h, clear, field, table, time, seconds, badge } from "../dom.js";

const STATUSES = ["", "completed", "in_progress", "queued", "incomplete", "failed", "cancelled"];
const PAGE = 20;

function preview(r) {
  const texts = (r.output || []).filter((i) => i.type === "message")
    .flatMap((i) => i.content || []).map((p) => p.text || p.refusal || "");
  const calls = (r.output || []).filter((i) => i.type.endsWith("_call")).map((i) => i.name || i.type);
  const shown = [texts.join(" "), calls.length ? `→ ${calls.join(", ")}` : ""].join(" ").trim();
  return shown.length > 90 ? `${shown.slice(0, 90)}…` : shown;
}

// metadata filter text "k=v, k2=v2": the responses whose metadata has all of them.
function metadataTest(text) {
  const pairs = text.split(",").map((p) => p.split("=").map((s) => s.trim())).filter(([k]) => k);
  return (r) => pairs.every(([k, v]) => r.metadata && (v === undefined ? k in r.metadata : r.metadata[k] === v));
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
  const metadata = h("input", { type: "text", name: "metadata", placeholder: "key=value, …" });
  const results = h("div", { class: "results" });
  const cursors = [];
  let after;

  async function load() {
    const page = await get(query("/v1/responses", { limit: PAGE, after, model: model.value }));
    const shown = page.data.filter((r) => !status.value || r.status === status.value).filter(metadataTest(metadata.value));
    const newer = h("button", { type: "button", class: "secondary", disabled: !cursors.length, onclick: () => { after = cursors.pop(); load().catch(ctx.banner); } }, "← Newer");
    const older = h("button", { type: "button", class: "secondary", disabled: !page.has_more, onclick: () => { cursors.push(after); after = page.last_id; load().catch(ctx.banner); } }, "Older →");
    clear(results, table(COLUMNS, shown, "No stored responses match."), h("div", { class: "row pager" }, newer, older,
      h("span", { class: "muted" }, `${shown.length} of ${page.data.length} on this page`)));
  }

  const form = h("form", { class: "filters row", onsubmit: (e) => { e.preventDefault(); cursors.length = 0; after = undefined; load().catch(ctx.banner); } },
    field("Model", model), field("Status", status), field("Metadata", metadata),
    h("button", { type: "submit" }, "Filter"));
  clear(root, h("h1", {}, "Logs"),
    h("p", { class: "muted" }, "Stored responses, newest first. The server filters by model; status and metadata filter the page shown."),
    form, results);
  await load();
}
