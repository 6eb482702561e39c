// Conversations: the project's conversations, newest first, a page at a time (GET
// /v1/conversations, an agentloom extension), or one opened by id; a conversation's page shows
// its metadata and items (compaction markers included) in order.

import { get, all, query } from "../api.js";
import { h, clear, field, time, code, pretty, table } from "../dom.js";
import { items as drawItems } from "../render.js";
import { pager } from "../pager.js";

const PAGE = 20;

function opener(current) {
  const id = h("input", { type: "text", name: "conversation", required: true, placeholder: "conv_…", value: current || "" });
  return h("form", { class: "row filters", onsubmit: (e) => { e.preventDefault(); location.hash = `#/conversations/${encodeURIComponent(id.value.trim())}`; } },
    field("Conversation id", id), h("button", { type: "submit" }, "Open"));
}

function metadata(value) {
  const pairs = Object.entries(value || {});
  return pairs.length ? pairs.map(([k, v]) => `${k}: ${v}`).join(" · ") : "—";
}

const COLUMNS = [
  ["Created", (c) => time(c.created_at)],
  ["Conversation", (c) => h("a", { href: `#/conversations/${c.id}`, class: "mono" }, c.id)],
  ["Metadata", (c) => metadata(c.metadata)],
];

async function list(root, ctx) {
  const results = h("div", { class: "results" });
  clear(root, h("h1", {}, "Conversations"),
    h("p", { class: "muted" }, "The project's conversations, newest first; open one for its items."),
    opener(), results);
  const pages = pager(results, (after) => get(query("/v1/conversations", { limit: PAGE, after })),
    (page) => table(COLUMNS, page.data, "No conversations yet."), ctx.banner);
  await pages.reset();
}

async function one(root, id) {
  const [conversation, items] = await Promise.all([get(`/v1/conversations/${id}`), all(`/v1/conversations/${id}/items`, { order: "asc" })]);
  const compactions = items.filter((i) => i.type === "compaction").length;
  clear(root, h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")),
    h("h1", { class: "mono" }, conversation.id),
    h("dl", { class: "facts" }, h("dt", {}, "Created"), h("dd", {}, time(conversation.created_at)),
      h("dt", {}, "Items"), h("dd", {}, `${items.length}${compactions ? ` (${compactions} compaction marker${compactions === 1 ? "" : "s"})` : ""}`),
      h("dt", {}, "Metadata"), h("dd", {}, Object.keys(conversation.metadata || {}).length ? code(pretty(conversation.metadata)) : "—")),
    drawItems(items));
}

export async function render(root, ctx, id) {
  await (id ? one(root, id) : list(root, ctx));
}
