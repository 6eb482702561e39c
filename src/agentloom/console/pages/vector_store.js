// One vector store: its files and their ingestion (polled while any is in progress), adding a
// file (an existing one, or a new upload), and a search tester that shows each hit's score and
// which side of the hybrid search (vector, keyword) found it.

import { get, post, all, query } from "../api.js";
import { h, clear, field, table, time, bytes, badge, every } from "../dom.js";
import { uploader } from "./files.js";

const POLL_MS = 500;

function fileRows(files, names) {
  return table([
    ["File", (f) => h("span", { class: "mono" }, f.id)],
    ["Name", (f) => names.get(f.id) || "—"],
    ["Status", (f) => badge(f.status)],
    ["Progress", (f) => progress(f.progress)],
    ["Size", (f) => bytes(f.usage_bytes)],
    ["Added", (f) => time(f.created_at)],
    ["Error", (f) => (f.last_error ? `${f.last_error.code}: ${f.last_error.message}` : "")],
  ], files, "No files in this store yet.");
}

// How far ingestion has got (agentloom's `progress`): chunks embedded of the chunks cut.
function progress(p) {
  if (!p) return "";
  if (!p.chunks_total) return "reading the text";
  const share = Math.floor((100 * p.chunks_embedded) / p.chunks_total);
  return h("span", { class: "progress", title: `${p.chunks_embedded} of ${p.chunks_total} chunks embedded` },
    h("progress", { max: p.chunks_total, value: p.chunks_embedded }), ` ${share}%`);
}

// A hit's identity across the three searches: its file and the start of its text.
function key(hit) {
  return `${hit.file_id}\u0000${(hit.content || []).map((c) => c.text).join("").slice(0, 200)}`;
}

async function search(id, body) {
  const modes = ["hybrid", "vector", "keyword"];
  const pages = await Promise.all(modes.map((mode) => post(`/v1/vector_stores/${id}/search`, { ...body, search_mode: mode })));
  const found = Object.fromEntries(modes.slice(1).map((mode, i) => [mode, new Map(pages[i + 1].data.map((hit) => [key(hit), hit]))]));
  return pages[0].data.map((hit) => ({ hit, vector: found.vector.get(key(hit)), keyword: found.keyword.get(key(hit)) }));
}

function side(match) {
  return match ? h("span", { class: "side yes" }, `✓ ${match.score.toFixed(3)}`) : h("span", { class: "side no" }, "—");
}

function hits(results) {
  return table([
    ["#", (r) => String(results.indexOf(r) + 1)],
    ["Score", (r) => h("strong", {}, r.hit.score.toFixed(4))],
    ["Vector", (r) => side(r.vector)],
    ["Keyword", (r) => side(r.keyword)],
    ["File", (r) => r.hit.filename || r.hit.file_id],
    ["Text", (r) => h("div", { class: "snippet" }, (r.hit.content || []).map((c) => c.text).join(" ").slice(0, 400))],
  ], results, "No hits.");
}

function searchTester(id, ctx) {
  const q = h("input", { type: "search", name: "query", required: true, placeholder: "What to look for" });
  const most = h("input", { type: "number", name: "max_num_results", min: 1, max: 50, value: 10 });
  const out = h("div", { class: "search-results" });
  const form = h("form", { class: "row", onsubmit: async (e) => {
    e.preventDefault();
    try {
      clear(out, hits(await search(id, { query: q.value, max_num_results: Number(most.value) })));
    } catch (error) { ctx.banner(error); }
  } }, field("Query", q), field("Results", most), h("button", { type: "submit" }, "Search"));
  return h("section", { "aria-labelledby": "search-h" }, h("h2", { id: "search-h" }, "Search tester"),
    h("p", { class: "muted" }, "The hybrid search's hits with their scores; the vector and keyword columns show whether (and with what score) a vector-only or keyword-only search finds the same passage."),
    form, out);
}

export async function render(root, ctx, id) {
  const filesBox = h("div", {});
  const summary = h("p", { "aria-live": "polite" });
  const pick = h("select", { name: "file_id" });
  const names = new Map();

  async function refresh() {
    const [store, files] = await Promise.all([get(`/v1/vector_stores/${id}`), all(`/v1/vector_stores/${id}/files`)]);
    const c = store.file_counts;
    const p = store.progress;
    const embedding = p && p.chunks_total ? `; ${p.chunks_embedded} of ${p.chunks_total} chunks embedded` : "";
    clear(summary, badge(store.status), ` ${c.completed} ready, ${c.in_progress} in progress, ${c.failed} failed of ${c.total}${embedding}`);
    clear(filesBox, fileRows(files, names));
    return files.some((f) => f.status === "in_progress");
  }
  let stop = () => {};
  const watch = () => { stop(); stop = every(POLL_MS, refresh, ctx.banner); ctx.onLeave(() => stop()); };

  async function add(fileId) {
    await post(`/v1/vector_stores/${id}/files`, { file_id: fileId });
    watch();
  }

  async function loadFiles() {
    const files = (await get(query("/v1/files", { limit: 100 }))).data;
    for (const f of files) names.set(f.id, f.filename);
    clear(pick, files.map((f) => h("option", { value: f.id }, `${f.filename} · ${f.id}`)));
  }

  const store = await get(`/v1/vector_stores/${id}`);
  await loadFiles();
  const addForm = h("form", { class: "card row", onsubmit: async (e) => {
    e.preventDefault();
    if (pick.value) add(pick.value).catch(ctx.banner);
  } }, field("Existing file", pick), h("button", { type: "submit" }, "Add to store"));
  clear(root,
    h("p", {}, h("a", { href: "#/vector-stores" }, "← Vector stores")),
    h("h1", {}, store.name || store.id), h("p", { class: "mono muted" }, store.id), summary,
    h("section", { "aria-labelledby": "files-h" }, h("h2", { id: "files-h" }, "Files"),
      addForm,
      h("details", {}, h("summary", {}, "Upload a new file and add it"), uploader(ctx, async (made) => { await loadFiles(); await add(made.id); })),
      filesBox),
    searchTester(id, ctx));
  watch();
}
