// Sign-in: with the OIDC issuer where the server offers one, or an API key, kept in
// sessionStorage for this tab only.

import { session } from "../api.js";
import { h, clear, field } from "../dom.js";

// With an OIDC issuer configured, "Sign in with <issuer>" first: a link to /auth/login, which
// comes back to this page (its #/route kept) signed in by a session cookie.
function issuerLink(oidc) {
  const next = encodeURIComponent(`/console/${location.hash}`);
  return h("p", {}, h("a", { class: "button", href: `/auth/login?next=${next}`, id: "oidc-sign-in" }, `Sign in with ${oidc.name}`));
}

export function render(root, { reason, done, oidc }) {
  const key = h("input", { type: "password", name: "key", autocomplete: "off", required: true, spellcheck: "false" });
  const form = h("form", { class: "card narrow", onsubmit: (e) => {
    e.preventDefault();
    session.key = key.value.trim();
    done();
  } },
  h("h1", {}, "Sign in"),
  h("p", {}, "This server runs with API keys. Enter a project key, or the admin key to manage projects and keys too."),
  reason ? h("p", { class: "error", role: "alert" }, reason) : null,
  oidc ? issuerLink(oidc) : null,
  oidc ? h("p", { class: "muted" }, "Or paste a key:") : null,
  field("API key", key, "Kept in this tab's session storage only; sent as Authorization: Bearer."),
  h("button", { type: "submit" }, "Sign in"));
  clear(root, form);
  key.focus();
}
