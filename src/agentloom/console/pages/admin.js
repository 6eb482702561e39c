// Admin (the admin key, with keys on): projects, their API keys (a new key is shown once;
// revoking takes a confirming second click) and rate limits, token usage per project and model,
// and the audit log's recent events.

import { post, del, all } from "../api.js";
import { h, clear, field, table, time, badge } from "../dom.js";
import { usageSection } from "../usage.js";
import { limitsSection } from "../limits.js";
import { auditSection } from "../audit.js";

const ORG = "/v1/organization";
const noProject = { project: false }; // the organization's routes are the admin key's, in no project

function projects(list, current, ctx) {
  const name = h("input", { type: "text", name: "project-name", required: true, placeholder: "my-project" });
  const form = h("form", { class: "row", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const made = await post(`${ORG}/projects`, { name: name.value.trim() }, noProject);
      await ctx.refresh(); // the project picker at the top lists it too
      location.hash = `#/admin/${made.id}`; // the page is drawn again for it
    } catch (error) { ctx.banner(error); }
  } }, field("New project", name), h("button", { type: "submit" }, "Create project"));
  return h("section", { "aria-labelledby": "projects-h" }, h("h2", { id: "projects-h" }, "Projects"), form, table([
    ["Project", (p) => h("a", { href: `#/admin/${p.id}`, "aria-current": p.id === current ? "true" : null }, p.name)],
    ["Id", (p) => h("span", { class: "mono" }, p.id)],
    ["Status", (p) => badge(p.status)],
    ["Created", (p) => time(p.created_at)],
  ], list, "No projects."));
}

function revokeButton(project, key, ctx, reload) {
  const button = h("button", { type: "button", class: "link danger", onclick: async () => {
    if (button.dataset.armed !== "yes") { button.dataset.armed = "yes"; button.textContent = "Confirm revoke"; return; }
    try { await del(`${ORG}/projects/${project}/api_keys/${key.id}`, noProject); await reload(); } catch (error) { ctx.banner(error); }
  } }, "Revoke");
  return button;
}

function newKeyBox(account) {
  const key = account.api_key;
  const value = h("code", { class: "secret" }, key.value);
  return h("div", { class: "card new-key", role: "status" },
    h("strong", {}, `New key of “${account.name}” (${key.id}): copy it now, it is shown only once.`), h("div", {}, value),
    h("button", { type: "button", class: "secondary", onclick: () => navigator.clipboard?.writeText(key.value) }, "Copy"));
}

async function keys(project, projectName, ctx) {
  const box = h("section", { "aria-labelledby": "keys-h" });
  const shown = h("div", {});
  const name = h("input", { type: "text", name: "key-name", required: true, placeholder: "ci" });
  async function reload() {
    const list = await all(`${ORG}/projects/${project}/api_keys`, {}, 500, noProject);
    clear(keyList, table([
      ["Name", (k) => k.name],
      ["Key", (k) => h("span", { class: "mono" }, k.redacted_value)],
      ["Id", (k) => h("span", { class: "mono" }, k.id)],
      ["Owner", (k) => k.owner?.service_account?.name || "—"],
      ["Created", (k) => time(k.created_at)],
      ["Last used", (k) => time(k.last_used_at)],
      ["", (k) => revokeButton(project, k, ctx, reload)],
    ], list, "No keys in this project."));
  }
  const keyList = h("div", {});
  const form = h("form", { class: "row", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const account = await post(`${ORG}/projects/${project}/service_accounts`, { name: name.value.trim() }, noProject);
      clear(shown, newKeyBox(account));
      form.reset();
      await reload();
    } catch (error) { ctx.banner(error); }
  } }, field("New key (a service account's)", name), h("button", { type: "submit" }, "Create key"));
  clear(box, h("h2", { id: "keys-h" }, `API keys of ${projectName}`), h("p", { class: "mono muted" }, project), form, shown, keyList);
  await reload();
  return box;
}

export async function render(root, ctx, project) {
  const list = await all(`${ORG}/projects`, {}, 500, noProject);
  const parts = [h("h1", {}, "Admin"), projects(list, project, ctx)];
  const chosen = list.find((p) => p.id === project);
  if (chosen) parts.push(await keys(project, chosen.name, ctx), await limitsSection(ORG, project, ctx, noProject));
  parts.push(await usageSection(new Map(list.map((p) => [p.id, p.name]))), await auditSection(ORG, chosen ? project : null, noProject));
  clear(root, parts);
}
