// Sign-in: an API key, kept in sessionStorage for this tab only.

import { session } from "../api.js";
import { h, clear, field } from "../dom.js";

export function render(root, { reason, done }) {
  const key = h("input", { type: "password", name: "key", autocomplete: "off", required: true, spellcheck: "false" });
  const form = h("form", { class: "card narrow", onsubmit: (e) => {
    e.preventDefault();
    session.key = key.value.trim();
    done();
  } },
  h("h1", {}, "Sign in"),
  h("p", {}, "This server runs with API keys. Enter a project key, or the admin key to manage projects and keys too."),
  reason ? h("p", { class: "error", role: "alert" }, reason) : null,
  field("API key", key, "Kept in this tab's session storage only; sent as Authorization: Bearer."),
  h("button", { type: "submit" }, "Sign in"));
  clear(root, form);
  key.focus();
}
