// A stand-in for the Claude Agent SDK's query(): it yields the message shapes the real SDK
// streams (assistant text and tool_use blocks, user tool_result blocks, a result), decided by
// the prompt, and never touches the network. The result text reports what it was given.

export async function* query({ prompt, options }) {
  yield { type: "system", subtype: "init", session_id: "fake-session" };
  if (prompt.includes("throw")) throw new Error("no credentials for Claude Code");
  if (prompt.includes("hang")) await new Promise(() => setInterval(() => {}, 1000));
  const seen = {
    prompt,
    cwd: options.cwd,
    model: options.model ?? null,
    systemPrompt: options.systemPrompt ?? null,
    maxTurns: options.maxTurns,
    permissionMode: options.permissionMode,
    allowedTools: options.allowedTools ?? [],
    optionsKey: options.env?.ANTHROPIC_API_KEY ?? null,
    optionsBaseUrl: options.env?.ANTHROPIC_BASE_URL ?? null,
    processKey: process.env.ANTHROPIC_API_KEY ?? null,
    processEnv: Object.keys(process.env).sort(),
  };
  console.log("the SDK logging to stdout must not break the channel");
  const tool = { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "a.txt" } };
  yield { type: "assistant", message: { content: [{ type: "text", text: "Reading." }, tool] } };
  const output = [{ type: "text", text: "file contents" }];
  const result = { type: "tool_result", tool_use_id: "toolu_1", content: output, is_error: false };
  yield { type: "user", message: { content: [result] } };
  yield { type: "assistant", message: { content: [{ type: "text", text: JSON.stringify(seen) }] } };
  if (prompt.includes("silent")) return; // ends without a result message
  yield {
    type: "result",
    subtype: prompt.includes("too long") ? "error_max_turns" : "success",
    is_error: prompt.includes("too long"),
    result: prompt.includes("too long") ? undefined : JSON.stringify(seen),
    num_turns: 2,
    session_id: "fake-session",
    total_cost_usd: 0.0123,
    usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 100 },
  };
}
