// Vector stores: the list (with file counts) and a form that creates one.

import { post, all } from "../api.js";
import { h, clear, field, table, time, bytes, badge } from "../dom.js";

function counts(s) {
  const c = s.file_counts;
  return `${c.completed}/${c.total} ready${c.in_progress ? `, ${c.in_progress} in progress` : ""}${c.failed ? `, ${c.failed} failed` : ""}`;
}

export async function render(root, ctx) {
  const stores = await all("/v1/vector_stores");
  const name = h("input", { type: "text", name: "name", required: true, placeholder: "docs" });
  const form = h("form", { class: "card row", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const made = await post("/v1/vector_stores", { name: name.value.trim() });
      location.hash = `#/vector-stores/${made.id}`;
    } catch (error) { ctx.banner(error); }
  } }, field("Name", name), h("button", { type: "submit" }, "Create vector store"));
  clear(root, h("h1", {}, "Vector stores"), form, table([
    ["Created", (s) => time(s.created_at)],
    ["Store", (s) => h("a", { href: `#/vector-stores/${s.id}`, class: "mono" }, s.id)],
    ["Name", (s) => s.name],
    ["Status", (s) => badge(s.status)],
    ["Files", counts],
    ["Size", (s) => bytes(s.usage_bytes)],
  ], stores, "No vector stores yet."));
}
