// A managed agent's form, to create one or edit it: name, type (and a template, when creating),
// model, instructions, tools, max_turns and an optional schedule. agent_config.js makes the body.

import { h, field, check } from "../dom.js";
import { AGENT_TYPES, TEMPLATES, BUILTIN_TOOLS, SCHEDULES } from "../agent_config.js";
import { chatModels } from "../models.js";

function options(values, blank) {
  return values.map((v) => h("option", { value: v }, v || blank));
}

// The chat models, each once, and the agent's own model whatever it is (kept on an edit).
function offered(models, current) {
  const ids = chatModels(models).map((m) => m.id);
  return current && !ids.includes(current) ? [...ids, current] : ids;
}

function controls(models, v) {
  const types = h("datalist", { id: `agent-types-${Math.random().toString(36).slice(2, 8)}` }, options(AGENT_TYPES));
  return {
    types,
    name: h("input", { type: "text", name: "name", required: true, value: v.name || "" }),
    agentType: h("input", { type: "text", name: "agent_type", list: types.id, value: v.agentType || "", placeholder: "(the server's default)" }),
    template: h("select", { name: "template_id" }, options(TEMPLATES, "(none)")),
    model: h("select", { name: "model" }, h("option", { value: "" }, "(the server's default)"),
      offered(models, v.model).map((id) => h("option", { value: id, selected: id === v.model }, id))),
    instructions: h("textarea", { name: "instructions", rows: 2, text: v.instructions || "" }),
    tools: BUILTIN_TOOLS.map((name) => h("input", { type: "checkbox", name: "tools", value: name, checked: (v.tools || []).includes(name) })),
    otherTools: h("input", { type: "text", name: "other_tools", placeholder: "mcp:docs", value: v.otherTools || "" }),
    maxTurns: h("input", { type: "number", name: "max_turns", min: "1", max: "100", step: "1", value: v.maxTurns || "10" }),
    scheduleKind: h("select", { name: "schedule" }, SCHEDULES.map((s) => h("option", { value: s, selected: s === (v.scheduleKind || "") }, s || "(none: runs when asked)"))),
    scheduleValue: h("input", { type: "text", name: "schedule_value", placeholder: "seconds, or */5 * * * *", value: v.scheduleValue || "" }),
  };
}

function valuesFrom(c) {
  return {
    name: c.name.value.trim(), agentType: c.agentType.value.trim(), template: c.template.value,
    model: c.model.value, instructions: c.instructions.value.trim(),
    tools: c.tools.filter((t) => t.checked).map((t) => t.value), otherTools: c.otherTools.value,
    maxTurns: c.maxTurns.value, scheduleKind: c.scheduleKind.value, scheduleValue: c.scheduleValue.value,
  };
}

// The form; submit(values) makes the request (its errors are the caller's to show).
export function agentForm(models, { values = {}, creating, label, submit }) {
  const c = controls(models, values);
  return h("form", { class: "card agent-form", "aria-label": label, onsubmit: (e) => { e.preventDefault(); submit(valuesFrom(c)); } },
    c.types,
    h("div", { class: "row" }, field("Name", c.name), field("Agent type", c.agentType), creating ? field("Template", c.template) : null, field("Model", c.model)),
    field("Instructions", c.instructions),
    h("fieldset", {}, h("legend", {}, "Tools"), h("div", { class: "row" }, c.tools.map((t) => check(t.value, t))),
      field("Other tools", c.otherTools, "Comma-separated: an MCP server the server declares, as mcp:<label>.")),
    h("div", { class: "row" }, field("Max turns", c.maxTurns), field("Schedule", c.scheduleKind), field("Every / cron", c.scheduleValue, "Seconds between runs, or a cron expression in UTC.")),
    h("button", { type: "submit" }, label));
}
