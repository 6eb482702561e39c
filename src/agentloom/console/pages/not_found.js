// An address of no page: says so, and links to the pages there are.

import { h, clear } from "../dom.js";

export async function render(root, ctx, hash) {
  const pages = [...document.querySelectorAll("#nav a")].map((a) => h("li", {}, h("a", { href: a.getAttribute("href") }, a.textContent)));
  clear(root, h("section", { class: "not-found", "aria-labelledby": "not-found-h" },
    h("h1", { id: "not-found-h" }, "Page not found"),
    h("p", {}, "The console has no page at ", h("code", {}, hash || "this address"), "."),
    pages.length ? [h("p", {}, "Its pages:"), h("ul", {}, pages)] : null));
}
