// A project's rate limits on the admin page (/v1/organization/projects/{id}/rate_limits): one row
// a model, each limit a number field (0: no limit), saved by the row's button.

import { all, post } from "./api.js";
import { h, table } from "./dom.js";

const FIELDS = [
  ["max_requests_per_1_minute", "Requests / minute"],
  ["max_tokens_per_1_minute", "Tokens / minute"],
  ["max_requests_per_1_day", "Requests / day"],
];

function limitInput(limit, [name, label]) {
  return h("input", { type: "number", min: "0", step: "1", name, value: String(limit[name]), "aria-label": `${label} of ${limit.model}`, class: "limit" });
}

// The fields whose value differs from `limit`'s (only those are sent, and audited).
function changed(limit, inputs) {
  return Object.fromEntries(FIELDS.map(([name], i) => [name, Number(inputs[i].value)]).filter(([name, value]) => value !== limit[name]));
}

function limitRow(path, limit, ctx, options) {
  const inputs = FIELDS.map((f) => limitInput(limit, f));
  const saved = h("span", { class: "muted", role: "status" });
  let current = limit;
  const save = h("button", { type: "button", class: "secondary", onclick: async () => {
    try {
      current = await post(`${path}/${limit.id}`, changed(current, inputs), options);
      FIELDS.forEach(([name], i) => { inputs[i].value = String(current[name]); });
      saved.textContent = "Saved";
    } catch (error) { saved.textContent = ""; ctx.banner(error); }
  } }, `Save ${limit.model}`);
  return { limit, inputs, save, saved };
}

export async function limitsSection(org, project, ctx, options) {
  const path = `${org}/projects/${project}/rate_limits`;
  const rows = (await all(path, {}, 500, options)).map((limit) => limitRow(path, limit, ctx, options));
  return h("section", { "aria-labelledby": "limits-h" }, h("h2", { id: "limits-h" }, "Rate limits"),
    h("p", { class: "muted" }, "Per model, for this project's keys; 0 is no limit."),
    table([
      ["Model", (r) => h("span", { class: "mono" }, r.limit.model)],
      ...FIELDS.map(([, label], i) => [label, (r) => r.inputs[i]]),
      ["", (r) => h("span", { class: "row" }, r.save, r.saved)],
    ], rows, "No models are served."));
}
