// agentloom's Claude Code runner: one task through the Claude Agent SDK, as JSON lines.
//
// stdin: one JSON object, the request: {prompt, sdk_prefix, cwd, model, system_prompt,
//   max_turns, allowed_tools, permission_mode, api_key, base_url}. The SDK is imported from
//   sdk_prefix/node_modules (where `npm install --prefix <sdk_prefix>` put it). The API key and
//   base URL go to Claude Code's environment only, from the request: never from this
//   process's own environment, which the caller keeps minimal.
// stdout: one JSON object a line: {type: "turn"}, {type: "text", text},
//   {type: "tool_use", id, name, input}, {type: "tool_result", id, content, is_error},
//   {type: "result", subtype, text, is_error, num_turns, session_id, cost_usd, usage}, or
//   {type: "error", message}. Anything the SDK logs goes to stderr.

import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const out = process.stdout;
console.log = console.info = console.debug = console.error; // the channel is ours alone

function emit(message) {
  out.write(JSON.stringify(message) + "\n");
}

async function readRequest() {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return JSON.parse(line);
  }
  throw new Error("no request on stdin");
}

async function loadSdk(prefix) {
  const require = createRequire(join(prefix, "package.json"));
  const entry = require.resolve("@anthropic-ai/claude-agent-sdk");
  return import(pathToFileURL(entry).href);
}

function sdkOptions(request) {
  const env = { ...process.env };
  if (request.api_key) env.ANTHROPIC_API_KEY = request.api_key;
  if (request.base_url) env.ANTHROPIC_BASE_URL = request.base_url;
  const options = {
    cwd: request.cwd,
    env,
    maxTurns: request.max_turns,
    permissionMode: request.permission_mode,
  };
  if (request.model) options.model = request.model;
  if (request.system_prompt) {
    options.systemPrompt = { type: "preset", preset: "claude_code", append: request.system_prompt };
  }
  if (request.allowed_tools?.length) options.allowedTools = request.allowed_tools;
  return options;
}

function asText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block) => (block?.type === "text" ? block.text : JSON.stringify(block))).join("");
  }
  return content == null ? "" : JSON.stringify(content);
}

function relayAssistant(message) {
  emit({ type: "turn" });
  for (const block of message.message?.content ?? []) {
    if (block.type === "text") emit({ type: "text", text: block.text });
    if (block.type === "tool_use") {
      emit({ type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} });
    }
  }
}

function relayUser(message) {
  const content = message.message?.content;
  for (const block of Array.isArray(content) ? content : []) {
    if (block.type === "tool_result") {
      const result = { id: block.tool_use_id, content: asText(block.content) };
      emit({ type: "tool_result", ...result, is_error: Boolean(block.is_error) });
    }
  }
}

function relayResult(message) {
  emit({
    type: "result",
    subtype: message.subtype ?? "success",
    text: typeof message.result === "string" ? message.result : "",
    is_error: Boolean(message.is_error),
    num_turns: message.num_turns ?? 0,
    session_id: message.session_id ?? null,
    cost_usd: message.total_cost_usd ?? null,
    usage: message.usage ?? {},
  });
}

const RELAYS = { assistant: relayAssistant, user: relayUser, result: relayResult };

async function main() {
  try {
    const request = await readRequest();
    const sdk = await loadSdk(request.sdk_prefix);
    const messages = sdk.query({ prompt: request.prompt, options: sdkOptions(request) });
    for await (const message of messages) RELAYS[message.type]?.(message);
  } catch (error) {
    emit({ type: "error", message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
  }
}

await main();
