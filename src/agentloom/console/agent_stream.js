// A managed agent's streamed reply (POST /v1/managed-agents/{id}/messages with stream: true),
// accumulated: Chat Completions chunks as `message` events (text, reasoning, the last one's
// usage), `tool_calls` and `tool_result` events, an {error} frame. No DOM: node-tested.

export function newAgentState() {
  return { text: "", reasoning: "", calls: [], usage: null, error: null, done: false };
}

const NAMED = {
  tool_calls: (state, data) => {
    for (const call of data.tool_calls || []) {
      state.calls.push({ id: call.id, name: call.function?.name, arguments: call.function?.arguments, result: null, success: null });
    }
  },
  tool_result: (state, data) => {
    const call = state.calls.find((c) => c.id === data.tool_call_id);
    if (call) Object.assign(call, { result: data.result, success: data.success, latency: data.latency });
  },
};

function chunk(state, data) {
  if (data.error) { state.error = data.error; state.done = true; return; }
  const choice = data.choices?.[0];
  state.text += choice?.delta?.content || "";
  state.reasoning += choice?.delta?.reasoning_content || "";
  if (choice?.finish_reason) { state.usage = data.usage || null; state.done = true; }
}

export function applyAgent(state, { event, data }) {
  (NAMED[event] || chunk)(state, data);
  return state;
}
