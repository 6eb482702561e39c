// A chat completion kept with `store: true`, as a logged request's detail shows it: the
// messages asked with, the answer, and the whole object as JSON. Read in the row's project.

import { get } from "./api.js";
import { h, code, pretty } from "./dom.js";

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => part.text || `[${part.type}]`).join(" ");
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

function message(role, content) {
  return h("div", { class: "card message" }, h("span", { class: "kind" }, role), " ", text(content));
}

export async function storedCompletion(id, projectId) {
  const path = `/v1/chat/completions/${encodeURIComponent(id)}`;
  const options = { project: projectId };
  const [completion, messages] = await Promise.all([get(path, options), get(`${path}/messages?limit=100`, options)]);
  const answers = (completion.choices || []).map((c) => message(c.message?.role || "assistant", c.message?.content));
  return h("section", { class: "stored-completion", "aria-labelledby": "stored-h" },
    h("h2", { id: "stored-h" }, "Stored chat completion"),
    messages.data.map((m) => message(m.role, m.content)), answers,
    h("details", {}, h("summary", {}, "As JSON"), code(pretty(completion), "The stored chat completion")));
}
