// A Responses stream, accumulated: apply(state, event) folds each event into the response as it
// is so far (its output items, their text, arguments and tool-call progress). No DOM here: the
// node tests run it as it is (tests/console/stream.test.mjs).

export function newState() {
  return { response: null, items: [], status: "", error: null, lastSequence: -1, done: false };
}

const FINAL = new Set(["response.completed", "response.failed", "response.incomplete", "response.cancelled"]);
const LIFECYCLE = new Set(["response.created", "response.queued", "response.in_progress"]);
// Server-tool progress: response.<tool>_call.<status> sets the item's status.
const TOOL_PROGRESS = /^response\.(file_search|web_search|code_interpreter|mcp|image_generation)_call\.(\w+)$/;

export function apply(state, event) {
  if (typeof event.sequence_number === "number") state.lastSequence = event.sequence_number;
  const handler = HANDLERS[event.type];
  if (handler) handler(state, event);
  else if (LIFECYCLE.has(event.type)) lifecycle(state, event);
  else if (FINAL.has(event.type)) finish(state, event);
  else toolProgress(state, event);
  return state;
}

function lifecycle(state, event) {
  state.response = event.response;
  state.status = event.response.status;
}

function finish(state, event) {
  lifecycle(state, event);
  if (event.response.output?.length) state.items = structuredClone(event.response.output);
  if (event.response.error) state.error = event.response.error;
  state.done = true;
}

function toolProgress(state, event) {
  const match = TOOL_PROGRESS.exec(event.type);
  const item = match ? itemOf(state, event) : null;
  if (item) item.status = match[2];
}

function itemOf(state, event) {
  if (typeof event.output_index === "number" && state.items[event.output_index]) {
    return state.items[event.output_index];
  }
  return state.items.find((item) => item && item.id === event.item_id) || null;
}

function partOf(state, event, list = "content", blank = { type: "output_text", text: "" }) {
  const item = itemOf(state, event);
  if (!item) return null;
  item[list] ??= [];
  const index = event[list === "summary" ? "summary_index" : "content_index"] ?? 0;
  item[list][index] ??= structuredClone(blank);
  return item[list][index];
}

function appendTo(field, list, blank) {
  return (state, event) => {
    const part = list ? partOf(state, event, list, blank) : itemOf(state, event);
    if (part) part[field] = (part[field] ?? "") + event.delta;
  };
}

function setTo(field, from, list, blank) {
  return (state, event) => {
    const part = list ? partOf(state, event, list, blank) : itemOf(state, event);
    if (part && event[from] !== undefined) part[field] = event[from];
  };
}

const REASONING = { type: "reasoning_text", text: "" };
const SUMMARY = { type: "summary_text", text: "" };
const REFUSAL = { type: "refusal", refusal: "" };

const HANDLERS = {
  "response.output_item.added": (state, event) => { state.items[event.output_index] = structuredClone(event.item); },
  "response.output_item.done": (state, event) => { state.items[event.output_index] = structuredClone(event.item); },
  "response.content_part.added": (state, event) => {
    const item = itemOf(state, event);
    if (item) (item.content ??= [])[event.content_index] = structuredClone(event.part);
  },
  "response.content_part.done": (state, event) => {
    const item = itemOf(state, event);
    if (item) (item.content ??= [])[event.content_index] = structuredClone(event.part);
  },
  "response.output_text.delta": appendTo("text", "content"),
  "response.output_text.done": setTo("text", "text", "content"),
  "response.output_text.annotation.added": (state, event) => {
    const part = partOf(state, event);
    if (part) (part.annotations ??= [])[event.annotation_index ?? part.annotations.length] = event.annotation;
  },
  "response.refusal.delta": appendTo("refusal", "content", REFUSAL),
  "response.refusal.done": setTo("refusal", "refusal", "content", REFUSAL),
  "response.reasoning_text.delta": appendTo("text", "content", REASONING),
  "response.reasoning_text.done": setTo("text", "text", "content", REASONING),
  "response.reasoning_summary_part.added": (state, event) => {
    const item = itemOf(state, event);
    if (item) (item.summary ??= [])[event.summary_index] = structuredClone(event.part);
  },
  "response.reasoning_summary_text.delta": appendTo("text", "summary", SUMMARY),
  "response.reasoning_summary_text.done": setTo("text", "text", "summary", SUMMARY),
  "response.function_call_arguments.delta": appendTo("arguments"),
  "response.function_call_arguments.done": setTo("arguments", "arguments"),
  "response.custom_tool_call_input.delta": appendTo("input"),
  "response.custom_tool_call_input.done": setTo("input", "input"),
  "response.mcp_call_arguments.delta": appendTo("arguments"),
  "response.mcp_call_arguments.done": setTo("arguments", "arguments"),
  "response.code_interpreter_call_code.delta": appendTo("code"),
  "response.code_interpreter_call_code.done": setTo("code", "code"),
  error: (state, event) => {
    state.error = { message: event.message ?? event.error?.message, code: event.code ?? event.error?.code };
    state.status = "failed";
    state.done = true;
  },
};

// The function calls of a finished response that the client must answer (by call_id).
export function pendingCalls(state) {
  if (!state.done || state.status !== "completed") return [];
  return state.items.filter((item) => item && item.type === "function_call");
}

// The MCP tool calls of a finished response that wait for the client's approval.
export function pendingApprovals(state) {
  if (!state.done || state.status !== "completed") return [];
  return state.items.filter((item) => item && item.type === "mcp_approval_request");
}

// The output text of the messages so far, joined.
export function outputText(state) {
  return state.items
    .filter((item) => item && item.type === "message")
    .flatMap((item) => item.content || [])
    .filter((part) => part && part.type === "output_text")
    .map((part) => part.text)
    .join("");
}
