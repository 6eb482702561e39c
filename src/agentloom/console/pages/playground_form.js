// The playground's controls: the settings form beside the conversation, the composer under it,
// and their values read as the plain settings object that request.js turns into a request body.

import { h, field, check } from "../dom.js";
import { TOOL_CHOICES, functionNames, namedChoice } from "../request.js";
import { mcpServers, mcpSettings } from "./playground_mcp.js";
import { chatModels } from "../models.js";

const EFFORTS = ["", "none", "minimal", "low", "medium", "high"];
const EXAMPLE_TOOLS = `[
  {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
      "type": "object",
      "properties": {"city": {"type": "string"}},
      "required": ["city"]
    }
  }
]`;
const EXAMPLE_SCHEMA = `{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": false}`;

function options(values, blank) {
  return values.map((v) => h("option", { value: v }, v || blank));
}

export function controls(models, stores) {
  return {
    model: h("select", { name: "model" }, chatModels(models).map((m) => h("option", { value: m.id }, m.id))),
    instructions: h("textarea", { name: "instructions", rows: 2, placeholder: "You are a helpful assistant." }),
    input: h("textarea", { name: "input", rows: 3, placeholder: "Ask something… (Ctrl+Enter sends)", "aria-label": "Input" }),
    fileSearch: h("input", { type: "checkbox", name: "file_search" }),
    stores: h("select", { name: "vector_stores", multiple: true, size: Math.min(4, Math.max(2, stores.length)) },
      stores.map((s) => h("option", { value: s.id }, `${s.name || "(unnamed)"} · ${s.id}`))),
    webSearch: h("input", { type: "checkbox", name: "web_search" }),
    codeInterpreter: h("input", { type: "checkbox", name: "code_interpreter" }),
    mcp: mcpServers(),
    functions: h("textarea", { name: "functions", rows: 6, class: "mono", placeholder: EXAMPLE_TOOLS }),
    toolChoice: h("select", { name: "tool_choice" }, options(TOOL_CHOICES, "(default)")),
    temperature: h("input", { type: "number", name: "temperature", min: "0", max: "2", step: "0.1", placeholder: "default" }),
    outputSchema: h("textarea", { name: "output_schema", rows: 3, class: "mono", placeholder: EXAMPLE_SCHEMA }),
    effort: h("select", { name: "effort" }, options(EFFORTS, "(model default)")),
    store: h("input", { type: "checkbox", name: "store", checked: true }),
    background: h("input", { type: "checkbox", name: "background" }),
    conversation: h("input", { type: "text", name: "conversation", placeholder: "conv_… (optional)" }),
  };
}

// The form's values as request.js wants them.
export function settingsOf(c) {
  return {
    model: c.model.value,
    instructions: c.instructions.value.trim(),
    fileSearch: c.fileSearch.checked,
    vectorStores: [...c.stores.selectedOptions].map((o) => o.value),
    webSearch: c.webSearch.checked,
    codeInterpreter: c.codeInterpreter.checked,
    mcps: mcpSettings(c.mcp.list),
    functions: c.functions.value,
    toolChoice: c.toolChoice.value,
    temperature: c.temperature.value,
    outputSchema: c.outputSchema.value,
    effort: c.effort.value,
    store: c.store.checked,
    background: c.background.checked,
    conversation: c.conversation.value.trim(),
  };
}

// tool_choice's options: the modes, then each function tool of the JSON box by name.
function followFunctions(c) {
  const update = () => {
    const kept = c.toolChoice.value;
    c.toolChoice.replaceChildren(...options(TOOL_CHOICES, "(default)"),
      ...functionNames(c.functions.value).map((name) => h("option", { value: namedChoice(name) }, `function ${name}`)));
    c.toolChoice.value = [...c.toolChoice.options].some((o) => o.value === kept) ? kept : "";
  };
  c.functions.addEventListener("input", update);
}

function serverTools(c, stores) {
  return h("fieldset", {}, h("legend", {}, "Server tools"),
    check("file_search", c.fileSearch), stores.length ? field("Vector stores", c.stores) : h("p", { class: "muted" }, "No vector stores yet."),
    check("web_search", c.webSearch), check("code_interpreter", c.codeInterpreter),
    c.mcp.el);
}

// The settings beside the conversation: everything a turn is sent with but its input.
export function settingsForm(c, stores) {
  followFunctions(c);
  return h("form", { class: "settings", "aria-label": "Settings", onsubmit: (e) => e.preventDefault() },
    field("Model", c.model),
    field("Instructions", c.instructions),
    serverTools(c, stores),
    field("Function tools (JSON)", c.functions, "An array of tools (type defaults to function). Function calls are answered by hand below the answer."),
    h("div", { class: "row" }, field("Tool choice", c.toolChoice), field("Temperature", c.temperature), field("Reasoning effort", c.effort)),
    field("Output schema (JSON)", c.outputSchema, "Structured output: a JSON schema (or {name, schema, strict}), sent as text.format json_schema."),
    h("div", { class: "row" }, check("store", c.store), check("background", c.background)),
    field("Conversation", c.conversation, "Empty: each turn chains to the one before with previous_response_id."));
}

// The composer under the conversation: the input, Send (or Ctrl/Cmd+Enter) and New chat.
export function composer(c, { send, reset }) {
  const form = h("form", { class: "composer", "aria-label": "Composer", onsubmit: (e) => {
    e.preventDefault();
    const input = c.input.value.trim();
    if (!input) { c.input.focus(); return; }
    c.input.value = "";
    send(input);
  } },
  c.input,
  h("div", { class: "row" }, h("button", { type: "submit" }, "Send"),
    h("button", { type: "button", class: "secondary", onclick: reset }, "New chat")));
  c.input.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit(); });
  return form;
}
