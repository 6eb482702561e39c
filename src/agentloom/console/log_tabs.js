// The two views of the logs, linked to each other: every request of the traffic (the request
// log) and the stored responses (their input, output and trace).

import { h } from "./dom.js";

const TABS = [["requests", "Every request"], ["logs", "Stored responses"]];

export function logTabs(current) {
  return h("nav", { class: "tabs", "aria-label": "Logs" }, h("ul", {}, TABS.map(([name, title]) =>
    h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === current ? "page" : null }, title)))));
}

// A logged request's HTTP status as a badge: ok under 400 without an error code, else failed.
export function statusBadge(row) {
  const failed = row.status >= 400 || row.error_code;
  return h("span", { class: `badge ${failed ? "failed" : "ok"}`, title: row.error_code || "" }, String(row.status));
}
