// The models a page offers for Responses: GET /v1/models's chat models (its `kind`, an
// agentloom extension; a server without it lists chat models only), each once: a model is
// served under its id and as provider/id, and the provider/id twin is dropped.

export function chatModels(list) {
  const chat = list.filter((m) => (m.kind ?? "chat") === "chat");
  const ids = new Set(chat.map((m) => m.id));
  return chat.filter((m) => !(m.id.startsWith(`${m.owned_by}/`) && ids.has(m.id.slice(m.owned_by.length + 1))));
}
