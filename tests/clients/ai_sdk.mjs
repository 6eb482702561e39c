// The Vercel AI SDK (`ai` + `@ai-sdk/openai`) against agentloom's Responses API, or its Chat
// Completions API with "api": "chat" (`openai.chat(model)`).
//
//   node ai_sdk.mjs '{"baseURL": "http://127.0.0.1:PORT/v1", "model": "m", "scenario": "generate", "prompt": "hi"}'
//
// Prints one JSON object on stdout: what the SDK returned (text, stream deltas, tool calls the
// loop ran), or {"error": ...} with exit code 1 when the SDK threw.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";

const { baseURL, model: modelId, scenario, prompt, api } = JSON.parse(process.argv[2]);
const openai = createOpenAI({ baseURL, apiKey: "sk-agentloom-test" });
const model = api === "chat" ? openai.chat(modelId) : openai.responses(modelId);

async function generate() {
  const result = await generateText({ model, prompt });
  return { text: result.text, finishReason: result.finishReason, usage: result.usage };
}

async function stream() {
  const result = streamText({ model, prompt });
  const deltas = [];
  for await (const delta of result.textStream) {
    deltas.push(delta);
  }
  return { deltas, text: await result.text, finishReason: await result.finishReason };
}

async function tools() {
  const calls = [];
  const getWeather = tool({
    description: "The weather in a city.",
    inputSchema: jsonSchema({
      type: "object",
      properties: { city: { type: "string", description: "The city's name." } },
      required: ["city"],
      additionalProperties: false,
    }),
    execute: async ({ city }) => {
      calls.push({ city });
      return `Sunny in ${city}, 21C`;
    },
  });
  const result = await generateText({
    model,
    prompt,
    tools: { get_weather: getWeather },
    stopWhen: stepCountIs(3),
  });
  return {
    text: result.text,
    calls,
    steps: result.steps.map((step) => ({
      finishReason: step.finishReason,
      toolCalls: step.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input })),
      toolResults: step.toolResults.map((r) => ({ toolName: r.toolName, output: r.output })),
      text: step.text,
    })),
  };
}

const scenarios = { generate, stream, tools };

try {
  console.log(JSON.stringify(await scenarios[scenario]()));
} catch (error) {
  const { name, message, statusCode, responseBody } = error;
  console.log(JSON.stringify({ error: { name, message, statusCode, responseBody } }));
  process.exitCode = 1;
}
