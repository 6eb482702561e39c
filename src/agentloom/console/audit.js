// The organization's audit log (/v1/organization/audit_logs) on the admin page: its newest
// entries, the project's when one is picked.

import { get, query } from "./api.js";
import { h, table, time } from "./dom.js";

const SHOWN = 20;

// The key (or session) that acted, and the user it is of when the entry names one.
function actor(entry) {
  const a = entry.actor || {};
  const acted = a[a.type] || {};
  const user = acted.user?.email || acted.user?.id;
  const key = acted.id || a.type || "—";
  return user && user !== key ? `${key} (${user})` : key;
}

// What the entry says of its subject: the object named by its type, the id first.
function details(entry) {
  const { id, ...rest } = entry[entry.type] || {};
  const said = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
  return h("span", { class: "mono" }, `${id || ""}${said}`);
}

export async function auditSection(org, project, options) {
  const page = await get(query(`${org}/audit_logs`, { limit: SHOWN, project_ids: project || undefined }), options);
  return h("section", { "aria-labelledby": "audit-h" }, h("h2", { id: "audit-h" }, project ? "Recent events in this project" : "Recent events"),
    table([
      ["When", (e) => time(e.effective_at)],
      ["Event", (e) => e.type],
      ["Project", (e) => e.project?.name || "—"],
      ["Actor", (e) => h("span", { class: "mono" }, actor(e))],
      ["Details", details],
    ], page.data, "No events yet."));
}
