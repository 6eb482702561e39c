// Usage (the organization's usage report): shown to the admin key, and to everyone when the
// server wants no keys (then every request is the default project's, and the report is open).

import { all } from "../api.js";
import { h, clear } from "../dom.js";
import { usageSection } from "../usage.js";

export async function render(root, ctx) {
  const projects = await all("/v1/organization/projects", {}, 500, { project: false }).catch(() => []);
  const names = new Map(projects.map((p) => [p.id, p.name]));
  clear(root, h("h1", {}, "Usage"),
    h("p", { class: "muted" }, ctx.keys ? "Every project's token usage (the admin key's view)." : "This server wants no keys: every request is the default project's, and its usage is here."),
    await usageSection(names));
}
