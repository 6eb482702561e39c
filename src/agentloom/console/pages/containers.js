// Containers (code_interpreter's sandboxes): the list, and one container's files.

import { get, all, headers } from "../api.js";
import { h, clear, table, time, bytes, badge } from "../dom.js";

async function download(container, file) {
  const reply = await fetch(`/v1/containers/${container}/files/${file.id}/content`, { headers: headers() });
  const url = URL.createObjectURL(await reply.blob());
  const a = h("a", { href: url, download: file.path.split("/").pop() });
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export async function render(root, ctx, id) {
  if (!id) {
    clear(root, h("h1", {}, "Containers"), table([
      ["Created", (c) => time(c.created_at)],
      ["Container", (c) => h("a", { href: `#/containers/${c.id}`, class: "mono" }, c.id)],
      ["Name", (c) => c.name],
      ["Status", (c) => badge(c.status)],
      ["Last active", (c) => time(c.last_active_at)],
    ], await all("/v1/containers"), "No containers yet (code_interpreter makes them)."));
    return;
  }
  const [container, files] = await Promise.all([get(`/v1/containers/${id}`), all(`/v1/containers/${id}/files`)]);
  clear(root, h("p", {}, h("a", { href: "#/containers" }, "← Containers")),
    h("h1", {}, container.name || container.id), h("p", {}, badge(container.status), " ", h("span", { class: "mono muted" }, container.id)),
    h("h2", {}, "Files"), table([
      ["Path", (f) => h("span", { class: "mono" }, f.path)],
      ["Source", (f) => f.source],
      ["Size", (f) => bytes(f.bytes)],
      ["Created", (f) => time(f.created_at)],
      ["", (f) => h("button", { type: "button", class: "link", onclick: () => download(id, f).catch(ctx.banner) }, "Download")],
    ], files, "No files."));
}
