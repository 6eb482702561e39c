// The request log's filters, shared by Usage and the request log: project (the organization's
// view only), API key, model, endpoint, status and time range; and where the log is read from
// (the organization's routes for the admin key and a server without keys, else the project's).

import { all, get } from "./api.js";
import { h, field } from "./dom.js";
import { RANGES } from "./ticks.js";

export const ENDPOINTS = ["responses", "chat.completions", "completions", "embeddings", "moderations", "messages", "managed_agents.messages"];
const STATUSES = [["", "(any)"], ["ok", "ok (under 400)"], ["errors", "errors (400 and up)"],
  ...["400", "401", "403", "404", "429", "500", "502"].map((code) => [code, code])];

// Where the log is: every project's rows (the admin key, or no keys) or the key's project's.
export function logSource(ctx) {
  const organization = ctx.admin || !ctx.keys;
  return {
    organization,
    base: organization ? "/v1/organization/requests" : "/v1/requests",
    options: organization ? { project: false } : {},
  };
}

function select(name, choices) {
  return h("select", { name }, choices.map(([value, label]) => h("option", { value }, label)));
}

async function projectList(source) {
  if (!source.organization) return null;
  return all("/v1/organization/projects", {}, 500, { project: false }).catch(() => []);
}

async function modelList() {
  const models = await get("/v1/models").catch(() => ({ data: [] }));
  const id = `models-${Math.random().toString(36).slice(2, 8)}`;
  return { id, list: h("datalist", { id }, models.data.map((m) => h("option", { value: m.id }))) };
}

// The status filter as the log's parameters: errors=true|false, or one HTTP status.
export function statusParams(value) {
  if (value === "ok") return { errors: "false" };
  if (value === "errors") return { errors: "true" };
  return value ? { status: value } : {};
}

// The form (its `ranges`: the time ranges offered, "" meaning any time), params() of what is
// filled in, and the projects' names by id (the organization's view). onApply() runs when the
// form is sent.
export async function requestFilters(ctx, { ranges, range, onApply }) {
  const source = logSource(ctx);
  const projects = await projectList(source);
  const models = await modelList();
  const controls = {
    project: projects ? select("project", [["", "(all projects)"], ...projects.map((p) => [p.id, `${p.name} (${p.id})`])]) : null,
    key: h("input", { type: "text", name: "api-key", placeholder: "key id", size: 16 }),
    model: h("input", { type: "text", name: "model", list: models.id, placeholder: "(any)", size: 16 }),
    endpoint: select("endpoint", [["", "(any)"], ...ENDPOINTS.map((e) => [e, e])]),
    status: select("status", STATUSES),
    range: select("range", ranges.map((r) => [r, r ? `last ${r}` : "(any time)"])),
  };
  controls.range.value = range;
  const form = h("form", { class: "filters request-filters", onsubmit: (e) => { e.preventDefault(); onApply(); } },
    h("div", { class: "row" },
      controls.project ? field("Project", controls.project) : null,
      field("API key", controls.key), field("Model", controls.model), models.list,
      field("Endpoint", controls.endpoint), field("Status", controls.status), field("Time range", controls.range),
      h("button", { type: "submit" }, "Filter")));
  const params = () => ({
    project_ids: controls.project?.value,
    api_key_ids: controls.key.value.trim(),
    models: controls.model.value.trim(),
    endpoints: controls.endpoint.value,
    ...statusParams(controls.status.value),
  });
  const names = new Map((projects || []).map((p) => [p.id, p.name]));
  return { form, source, names, params, range: () => controls.range.value };
}

// The unix seconds a range ("24h" ...) starts at, before `now`; undefined for any time.
export function rangeStart(range, now) {
  return RANGES[range] ? Math.floor(now - RANGES[range].seconds) : undefined;
}
