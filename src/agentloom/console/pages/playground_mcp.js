// The playground's MCP servers: rows added and removed, each with its label, URL, allowed tools,
// approval and optional headers (name and value pairs, e.g. Authorization), read as request.js
// wants them.

import { h, field } from "../dom.js";
import { APPROVALS } from "../request.js";

const value = (row, name) => row.querySelector(`[name=${name}]`).value;

function headerRow() {
  const row = h("div", { class: "row header" },
    field("Header", h("input", { type: "text", name: "header_name", placeholder: "Authorization" })),
    field("Value", h("input", { type: "password", name: "header_value", autocomplete: "off", placeholder: "Bearer …" })));
  row.append(h("button", { type: "button", class: "link", onclick: () => row.remove() }, "Remove header"));
  return row;
}

function serverRow() {
  const headers = h("div", { class: "headers" });
  const row = h("fieldset", { class: "mcp-server" }, h("legend", {}, "MCP server"),
    field("Server label", h("input", { type: "text", name: "server_label", placeholder: "docs" })),
    field("Server URL", h("input", { type: "url", name: "server_url", placeholder: "https://…/mcp" })),
    field("Allowed tools", h("input", { type: "text", name: "allowed_tools", placeholder: "all (or: search, fetch)" }), "Comma-separated; empty: all the server's tools."),
    field("Require approval", h("select", { name: "require_approval" }, APPROVALS.map((a) => h("option", { value: a }, a)))),
    headers,
    h("div", { class: "row" },
      h("button", { type: "button", class: "link", onclick: () => headers.append(headerRow()) }, "+ header"),
      h("button", { type: "button", class: "link danger", onclick: () => row.remove() }, "Remove server")));
  return row;
}

// The list of rows and its "+ MCP server" button.
export function mcpServers() {
  const list = h("div", { class: "mcp-servers" });
  const el = h("fieldset", { class: "mcp" }, h("legend", {}, "MCP servers"), list,
    h("button", { type: "button", class: "link", onclick: () => list.append(serverRow()) }, "+ MCP server"));
  return { el, list };
}

// Each row's values: {label, url, allowed, approval, headers: [[name, value]]}.
export function mcpSettings(list) {
  return [...list.querySelectorAll(".mcp-server")].map((row) => ({
    label: value(row, "server_label").trim(), url: value(row, "server_url").trim(),
    allowed: value(row, "allowed_tools"), approval: value(row, "require_approval"),
    headers: [...row.querySelectorAll(".header")].map((pair) => [value(pair, "header_name"), value(pair, "header_value")]),
  }));
}
