// Files: the project's uploads (GET /v1/files), a new upload with a progress bar, delete.

import { get, del, upload, query } from "../api.js";
import { h, clear, field, table, time, bytes } from "../dom.js";

const PURPOSES = ["assistants", "user_data", "batch", "fine-tune", "vision", "evals"];

export function uploader(ctx, onDone) {
  const file = h("input", { type: "file", name: "file", required: true });
  const purpose = h("select", { name: "purpose" }, PURPOSES.map((p) => h("option", { value: p }, p)));
  const progress = h("progress", { max: 100, value: 0, hidden: true, "aria-label": "Upload progress" });
  const note = h("span", { class: "muted", "aria-live": "polite" });
  const form = h("form", { class: "card row upload", onsubmit: async (e) => {
    e.preventDefault();
    if (!file.files.length) return;
    const data = new FormData();
    data.append("purpose", purpose.value);
    data.append("file", file.files[0]);
    progress.hidden = false;
    progress.value = 0;
    note.textContent = "Uploading…";
    try {
      const made = await upload("/v1/files", data, (sent, total) => { if (total) progress.value = Math.round((100 * sent) / total); });
      progress.value = 100;
      note.textContent = `Uploaded ${made.filename} as ${made.id}.`;
      form.reset();
      await onDone(made);
    } catch (error) {
      note.textContent = "";
      ctx.banner(error);
    }
  } }, field("File", file), field("Purpose", purpose), h("button", { type: "submit" }, "Upload"), progress, note);
  return form;
}

export async function render(root, ctx) {
  const list = h("div", {});
  async function load() {
    const page = await get(query("/v1/files", { limit: 100 }));
    clear(list, table([
      ["Created", (f) => time(f.created_at)],
      ["File", (f) => h("span", { class: "mono" }, f.id)],
      ["Name", (f) => f.filename],
      ["Purpose", (f) => f.purpose],
      ["Size", (f) => bytes(f.bytes)],
      ["", (f) => h("button", { type: "button", class: "link danger", onclick: async () => {
        try { await del(`/v1/files/${f.id}`); await load(); } catch (error) { ctx.banner(error); }
      } }, "Delete")],
    ], page.data, "No files yet."));
  }
  clear(root, h("h1", {}, "Files"), uploader(ctx, load), list);
  await load();
}
