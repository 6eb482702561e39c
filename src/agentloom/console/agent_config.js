// A managed agent's create/update body from the form's values (a plain object, read by
// pages/agent_form.js). No DOM here: the node tests run it as it is.

// The API lists neither the strategy table nor the templates: these are the documented names
// (docs/managed-agents.md); the server accepts others it has registered, and refuses an unknown
// one with a 400 naming it.
export const AGENT_TYPES = ["monitor_operative", "orchestrator", "simple", "structured", "react", "codeact", "rlm", "operative"];
export const TEMPLATES = ["", "assistant", "researcher", "monitor"];
export const BUILTIN_TOOLS = ["calculator", "think", "file_read", "memory_store", "memory_search", "web_search", "code_interpreter"];
export const SCHEDULES = ["", "interval", "cron"];
// The configuration keys the form writes: the others of an agent's configuration are kept.
const SCHEDULE_KEYS = ["schedule", "schedule_type", "schedule_value"];

function schedule(kind, value) {
  if (!kind) return null;
  const text = String(value ?? "").trim();
  if (kind === "cron") {
    if (text.split(/\s+/).length !== 5) throw new Error("A cron schedule has five fields (UTC), e.g. */5 * * * *.");
    return { type: "cron", cron: text };
  }
  const every = Number(text);
  if (!text || !Number.isFinite(every) || every < 1) throw new Error("An interval schedule is a number of seconds, at least 1.");
  return { type: "interval", every };
}

function maxTurns(text) {
  const turns = Number(text || 10);
  if (!Number.isInteger(turns) || turns < 1 || turns > 100) throw new Error("max_turns is a whole number from 1 to 100.");
  return turns;
}

function toolList(v) {
  const others = (v.otherTools || "").split(",").map((name) => name.trim()).filter(Boolean);
  return [...new Set([...(v.tools || []), ...others])];
}

// The agent's configuration: `base` (the agent's as it is, when editing) with the form's keys
// replaced, since an update's config replaces the whole configuration.
export function agentConfig(v, base = {}) {
  const config = Object.fromEntries(Object.entries(base).filter(([key, value]) => !SCHEDULE_KEYS.includes(key) && value !== null));
  delete config.system_prompt; // the form's instructions replace it
  if (v.model) config.model = v.model; else delete config.model;
  config.tools = toolList(v);
  if (v.instructions) config.instructions = v.instructions; else delete config.instructions;
  config.max_turns = maxTurns(v.maxTurns);
  const when = schedule(v.scheduleKind, v.scheduleValue);
  if (when) config.schedule = when;
  return config;
}

// POST /v1/managed-agents's body (with a template when one is picked; a type only when one is).
export function createBody(v) {
  if (!v.name) throw new Error("An agent needs a name.");
  const body = { name: v.name, config: agentConfig(v) };
  if (v.agentType) body.agent_type = v.agentType; // none: the server's default type (one place says it)
  if (v.template) body.template_id = v.template;
  return body;
}

// PATCH /v1/managed-agents/{id}'s body: name, type and the whole configuration.
export function updateBody(v, agent) {
  if (!v.name) throw new Error("An agent needs a name.");
  return { name: v.name, agent_type: v.agentType || agent.agent_type, config: agentConfig(v, agent.config) };
}

// The form's values of an agent (to edit it).
export function valuesOf(agent) {
  const c = agent.config || {};
  // OpenJarvis's schedule_type / schedule_value read as the schedule they mean (saved so).
  const jarvis = ["interval", "cron"].includes(c.schedule_type) ? { type: c.schedule_type, value: c.schedule_value } : null;
  const when = c.schedule ? { type: c.schedule.type, value: c.schedule.cron ?? c.schedule.every } : jarvis;
  return {
    name: agent.name, agentType: agent.agent_type, model: c.model || "",
    tools: (c.tools || []).filter((t) => BUILTIN_TOOLS.includes(t)),
    otherTools: (c.tools || []).filter((t) => !BUILTIN_TOOLS.includes(t)).join(", "),
    instructions: c.instructions ?? c.system_prompt ?? "", maxTurns: String(c.max_turns ?? 10),
    scheduleKind: when?.type || "", scheduleValue: when ? String(when.value ?? "") : "",
  };
}
