// The playground's request body (src/agentloom/console/request.js) under node's test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { requestBody, textFormat, toolsOf, approvalResponse, functionNames, namedChoice } from "../../../src/agentloom/console/request.js";
import { masked, python, curl, HIDDEN } from "../../../src/agentloom/console/snippet.js";

const blank = {
  model: "m", instructions: "", fileSearch: false, vectorStores: [], webSearch: false, codeInterpreter: false,
  mcps: [], functions: "", toolChoice: "",
  temperature: "", outputSchema: "", effort: "", store: true, background: false, conversation: "",
};

test("a plain turn sends the model, the input and stream only, chained to the turn before", () => {
  assert.deepEqual(requestBody(blank, "Hi", null), { model: "m", input: "Hi", stream: true });
  assert.equal(requestBody(blank, "Hi", "resp_1").previous_response_id, "resp_1");
  assert.equal(requestBody({ ...blank, conversation: "conv_1" }, "Hi", "resp_1").previous_response_id, undefined);
});

test("an MCP server becomes an mcp tool, its allowed tools a list", () => {
  const mcp = { label: "calc", url: "http://x/mcp", allowed: " add, ,distance ", approval: "never", headers: [] };
  assert.deepEqual(toolsOf({ ...blank, mcps: [mcp] }), [
    { type: "mcp", server_label: "calc", server_url: "http://x/mcp", require_approval: "never", allowed_tools: ["add", "distance"] },
  ]);
  assert.equal(toolsOf({ ...blank, mcps: [{ ...mcp, allowed: "" }] })[0].allowed_tools, undefined);
  assert.throws(() => toolsOf({ ...blank, mcps: [{ ...mcp, url: "" }] }), /label and a URL/);
});

const WEATHER = '[{"name": "get_weather", "parameters": {"type": "object"}}, {"type": "function", "name": "get_time"}]';

test("several MCP servers, each with its headers (blank names left out)", () => {
  const mcps = [
    { label: "a", url: "http://a/mcp", allowed: "", approval: "always", headers: [["Authorization", "Bearer k"], [" ", "x"], [" X-Team ", "blue"]] },
    { label: "b", url: "http://b/mcp", allowed: "", approval: "never", headers: [] },
  ];
  const tools = toolsOf({ ...blank, mcps });
  assert.deepEqual(tools.map((t) => t.server_label), ["a", "b"]);
  assert.deepEqual(tools[0].headers, { Authorization: "Bearer k", "X-Team": "blue" });
  assert.equal(tools[1].headers, undefined);
});

test("the snippets never show an MCP server's header values", () => {
  const sent = requestBody({ ...blank, mcps: [{ label: "a", url: "http://a/mcp", allowed: "", approval: "always", headers: [["Authorization", "Bearer s3cret"]] }] }, "Hi");
  assert.equal(sent.tools[0].headers.Authorization, "Bearer s3cret"); // sent as it is
  assert.deepEqual(masked(sent).tools[0].headers, { Authorization: HIDDEN });
  assert.equal(sent.tools[0].headers.Authorization, "Bearer s3cret"); // masked() copies
  for (const shown of [python(sent, "http://x/v1"), curl(sent, "http://x/v1")]) {
    assert.doesNotMatch(shown, /s3cret/);
    assert.match(shown, /Authorization/);
  }
});

test("tool_choice can name a function tool declared in the JSON box", () => {
  assert.deepEqual(functionNames(WEATHER), ["get_weather", "get_time"]);
  assert.deepEqual(functionNames("[nope"), []);
  const sent = requestBody({ ...blank, functions: WEATHER, toolChoice: namedChoice("get_time") }, "Hi");
  assert.deepEqual(sent.tool_choice, { type: "function", name: "get_time" });
  assert.throws(() => requestBody({ ...blank, functions: WEATHER, toolChoice: namedChoice("gone") }, "Hi"), /not among the function tools/);
});

test("tool_choice, temperature and structured output", () => {
  const sent = requestBody({ ...blank, toolChoice: "required", temperature: "0.3", outputSchema: '{"type": "object"}' }, "Hi");
  assert.equal(sent.tool_choice, "required");
  assert.equal(sent.temperature, 0.3);
  assert.deepEqual(sent.text, { format: { type: "json_schema", name: "output", schema: { type: "object" }, strict: true } });
  assert.equal(requestBody({ ...blank, temperature: "0" }, "Hi").temperature, 0);
  assert.throws(() => requestBody({ ...blank, temperature: "3" }, "Hi"), /0 to 2/);
});

test("a named schema keeps its name and strictness; bad JSON says which box", () => {
  assert.deepEqual(textFormat('{"name": "city", "schema": {"type": "object"}, "strict": false}'),
    { type: "json_schema", name: "city", schema: { type: "object" }, strict: false });
  assert.equal(textFormat("  "), null);
  assert.throws(() => textFormat("{nope"), /output schema is not JSON/);
  assert.throws(() => textFormat("[1]"), /must be a JSON object/);
  assert.throws(() => toolsOf({ ...blank, functions: "[" }), /Function tools is not JSON/);
});

test("an approval answers its request by id", () => {
  assert.deepEqual(approvalResponse({ id: "mcpr_1" }, false), { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: false });
});

test("the results of file_search and the outputs of code_interpreter are included", () => {
  const sent = requestBody({ ...blank, fileSearch: true, vectorStores: ["vs_1"], codeInterpreter: true }, "Hi");
  assert.deepEqual(sent.include, ["file_search_call.results", "code_interpreter_call.outputs"]);
  assert.throws(() => requestBody({ ...blank, fileSearch: true }, "Hi"), /at least one vector store/);
});
