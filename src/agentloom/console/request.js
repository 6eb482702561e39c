// The body of a playground turn, from the settings form's values (a plain object, read by
// pages/playground_form.js). No DOM here: the node tests run it as it is.

export const TOOL_CHOICES = ["", "auto", "none", "required"];
const NAMED = "function:"; // a tool_choice value naming a function tool: "function:NAME"
export const APPROVALS = ["always", "never"];

function parsed(text, what) {
  try { return JSON.parse(text); } catch (error) { throw new Error(`${what} is not JSON: ${error.message}`); }
}

// Header pairs ([name, value], blank names left out) as the tool's headers object.
function headersOf(pairs) {
  const named = (pairs || []).map(([name, value]) => [name.trim(), value]).filter(([name]) => name);
  return named.length ? Object.fromEntries(named) : null;
}

function mcpTool(mcp) {
  if (!mcp.label || !mcp.url) throw new Error("An MCP server needs a label and a URL.");
  const tool = { type: "mcp", server_label: mcp.label, server_url: mcp.url, require_approval: mcp.approval || "always" };
  const allowed = mcp.allowed.split(",").map((name) => name.trim()).filter(Boolean);
  if (allowed.length) tool.allowed_tools = allowed;
  const headers = headersOf(mcp.headers);
  if (headers) tool.headers = headers;
  return tool;
}

function functionTools(text) {
  if (!(text || "").trim()) return [];
  const given = parsed(text, "Function tools");
  return (Array.isArray(given) ? given : [given]).map((tool) => ({ type: "function", ...tool }));
}

// The names of the function tools declared in the JSON box (none while it is not JSON).
export function functionNames(text) {
  try { return functionTools(text).filter((t) => t.type === "function" && t.name).map((t) => t.name); } catch { return []; }
}

export const namedChoice = (name) => `${NAMED}${name}`;

// tool_choice: a mode, or {"type": "function", name} for a function tool declared here.
function toolChoice(value, tools) {
  if (!value.startsWith(NAMED)) return value;
  const name = value.slice(NAMED.length);
  if (!tools.some((t) => t.type === "function" && t.name === name)) throw new Error(`tool_choice names ${name}, which is not among the function tools.`);
  return { type: "function", name };
}

export function toolsOf(s) {
  const chosen = [];
  if (s.fileSearch) {
    if (!s.vectorStores.length) throw new Error("file_search needs at least one vector store.");
    chosen.push({ type: "file_search", vector_store_ids: s.vectorStores });
  }
  if (s.webSearch) chosen.push({ type: "web_search" });
  if (s.codeInterpreter) chosen.push({ type: "code_interpreter", container: { type: "auto" } });
  for (const mcp of s.mcps || []) chosen.push(mcpTool(mcp));
  chosen.push(...functionTools(s.functions));
  return chosen;
}

// Structured output: a JSON schema, or {name, schema, strict?}, as text.format json_schema.
export function textFormat(schemaText) {
  const text = (schemaText || "").trim();
  if (!text) return null;
  const given = parsed(text, "The output schema");
  if (typeof given !== "object" || given === null || Array.isArray(given)) throw new Error("The output schema must be a JSON object.");
  const named = "schema" in given && typeof given.schema === "object";
  return {
    type: "json_schema",
    name: (named && given.name) || "output",
    schema: named ? given.schema : given,
    strict: named && "strict" in given ? Boolean(given.strict) : true,
  };
}

function temperature(text) {
  if (text === "" || text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 2) throw new Error("The temperature is a number from 0 to 2.");
  return value;
}

// What the server tools found is shown, so it is asked for (the server leaves it out otherwise).
const INCLUDES = { file_search: "file_search_call.results", code_interpreter: "code_interpreter_call.outputs" };

function includesOf(tools) {
  return [...new Set(tools.map((tool) => INCLUDES[tool.type]).filter(Boolean))];
}

// The body of a turn: the settings, the input, and the chain to the turn before.
export function requestBody(s, input, previous) {
  const sent = { model: s.model, input };
  if (s.instructions) sent.instructions = s.instructions;
  const tools = toolsOf(s);
  if (tools.length) sent.tools = tools;
  const include = includesOf(tools);
  if (include.length) sent.include = include;
  if (s.toolChoice) sent.tool_choice = toolChoice(s.toolChoice, tools);
  const t = temperature(s.temperature);
  if (t !== undefined) sent.temperature = t;
  const format = textFormat(s.outputSchema);
  if (format) sent.text = { format };
  if (s.effort) sent.reasoning = { effort: s.effort };
  if (!s.store) sent.store = false;
  if (s.background) sent.background = true;
  if (s.conversation) sent.conversation = s.conversation;
  else if (previous) sent.previous_response_id = previous;
  sent.stream = true;
  return sent;
}

// The input item that answers an mcp_approval_request.
export function approvalResponse(request, approve) {
  return { type: "mcp_approval_response", approval_request_id: request.id, approve };
}
