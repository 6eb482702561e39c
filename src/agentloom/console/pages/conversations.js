// Conversations: the API lists none, so one is opened by id; its metadata and items (compaction
// markers included) in order.

import { get, all } from "../api.js";
import { h, clear, field, time, code, pretty } from "../dom.js";
import { items as drawItems } from "../render.js";

function opener(current) {
  const id = h("input", { type: "text", name: "conversation", required: true, placeholder: "conv_…", value: current || "" });
  return h("form", { class: "card row", onsubmit: (e) => { e.preventDefault(); location.hash = `#/conversations/${encodeURIComponent(id.value.trim())}`; } },
    field("Conversation id", id), h("button", { type: "submit" }, "Open"));
}

export async function render(root, ctx, id) {
  clear(root, h("h1", {}, "Conversations"),
    h("p", { class: "muted" }, "The API has no list of conversations: open one by its id (a response's page links to its conversation)."),
    opener(id));
  if (!id) return;
  const [conversation, items] = await Promise.all([get(`/v1/conversations/${id}`), all(`/v1/conversations/${id}/items`, { order: "asc" })]);
  const compactions = items.filter((i) => i.type === "compaction").length;
  root.append(
    h("h2", { class: "mono" }, conversation.id),
    h("dl", { class: "facts" }, h("dt", {}, "Created"), h("dd", {}, time(conversation.created_at)),
      h("dt", {}, "Items"), h("dd", {}, `${items.length}${compactions ? ` (${compactions} compaction marker${compactions === 1 ? "" : "s"})` : ""}`),
      h("dt", {}, "Metadata"), h("dd", {}, Object.keys(conversation.metadata || {}).length ? code(pretty(conversation.metadata)) : "—")),
    drawItems(items));
}
