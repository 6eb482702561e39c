// The equivalent code of a request the console sent: openai-Python and curl. Pure functions.

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const HIDDEN = "<hidden>";

// The body as shown: an MCP tool's header values and authorization (keys, often) hidden.
export function masked(body) {
  if (!Array.isArray(body.tools)) return body;
  const tools = body.tools.map((tool) => {
    if (tool.type !== "mcp" || !(tool.headers || tool.authorization)) return tool;
    const shown = { ...tool };
    if (tool.headers) shown.headers = Object.fromEntries(Object.keys(tool.headers).map((name) => [name, HIDDEN]));
    if (tool.authorization) shown.authorization = HIDDEN;
    return shown;
  });
  return { ...body, tools };
}

// A JSON value as a Python literal, indented like black would.
export function pythonValue(value, indent = 0) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  const pad = " ".repeat(indent + 4);
  const end = " ".repeat(indent);
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return `[\n${value.map((v) => `${pad}${pythonValue(v, indent + 4)},`).join("\n")}\n${end}]`;
  }
  const entries = Object.entries(value);
  if (!entries.length) return "{}";
  return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${pythonValue(v, indent + 4)},`).join("\n")}\n${end}}`;
}

export function python(body, baseUrl) {
  const args = Object.entries(masked(body))
    .filter(([name]) => IDENT.test(name))
    .map(([name, value]) => `    ${name}=${pythonValue(value, 4)},`);
  const lines = [
    "from openai import OpenAI",
    "",
    `client = OpenAI(base_url=${JSON.stringify(baseUrl)}, api_key=os.environ["AGENTLOOM_API_KEY"])`,
    "",
    `${body.stream ? "stream" : "response"} = client.responses.create(`,
    ...args,
    ")",
  ];
  lines.unshift("import os", "");
  if (body.stream) lines.push("for event in stream:", "    print(event.type)");
  else lines.push("print(response.output_text)");
  return lines.join("\n");
}

function shellQuote(text) {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

export function curl(body, baseUrl, project) {
  const lines = [
    `curl ${shellQuote(`${baseUrl}/responses`)}${body.stream ? " -N" : ""}`,
    `  -H "Authorization: Bearer $AGENTLOOM_API_KEY"`,
    `  -H "Content-Type: application/json"`,
  ];
  if (project) lines.push(`  -H ${shellQuote(`OpenAI-Project: ${project}`)}`);
  lines.push(`  -d ${shellQuote(JSON.stringify(masked(body), null, 2))}`);
  return lines.join(" \\\n");
}
