// A list endpoint's pages in a box, newest first: "Older" follows the page's last_id, "Newer"
// walks back the cursors taken. fetchPage(after) gets a page, draw(page) its content.

import { h, clear } from "./dom.js";

export function pager(box, fetchPage, draw, failed) {
  const cursors = [];
  let after;
  const go = (cursor) => { after = cursor; load().catch(failed); };
  async function load() {
    const page = await fetchPage(after);
    const newer = h("button", { type: "button", class: "secondary", disabled: !cursors.length, onclick: () => go(cursors.pop()) }, "← Newer");
    const older = h("button", { type: "button", class: "secondary", disabled: !page.has_more, onclick: () => { cursors.push(after); go(page.last_id); } }, "Older →");
    clear(box, draw(page), h("div", { class: "row pager" }, newer, older, h("span", { class: "muted" }, `${page.data.length} on this page`)));
  }
  // From the first page again (new filters, or new items).
  const reset = () => { cursors.length = 0; after = undefined; return load(); };
  return { reset };
}
