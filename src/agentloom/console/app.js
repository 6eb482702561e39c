// The console's shell: finds out whether the server wants keys, signs in, and routes #/page/id
// to a page module (loaded when first shown, so the first paint needs only this and two modules).

import { session, get, post, whenUnauthorized, ApiError } from "./api.js";
import { h, clear } from "./dom.js";

const ROUTES = {
  playground: { title: "Playground", page: () => import("./pages/playground.js") },
  logs: { title: "Logs", page: () => import("./pages/logs.js"), detail: () => import("./pages/response.js") },
  // The request log: the organization's rows for the admin key (no project needed), else the
  // key's project's.
  requests: { title: "Request log", page: () => import("./pages/requests.js"), detail: () => import("./pages/request.js"), organization: true },
  files: { title: "Files", page: () => import("./pages/files.js") },
  "vector-stores": { title: "Vector stores", page: () => import("./pages/vector_stores.js"), detail: () => import("./pages/vector_store.js") },
  conversations: { title: "Conversations", page: () => import("./pages/conversations.js") },
  containers: { title: "Containers", page: () => import("./pages/containers.js") },
  agents: { title: "Managed agents", page: () => import("./pages/agents.js"), detail: () => import("./pages/agent.js") },
  // The organization's pages, in no project: usage (every project's for the admin key and
  // without keys, when every caller is the default project's; else the key's project's).
  usage: { title: "Usage", page: () => import("./pages/usage.js"), organization: true },
  admin: { title: "Admin", page: () => import("./pages/admin.js"), organization: true, shown: (a) => a.admin },
};
const NOT_FOUND = { title: "Not found", page: () => import("./pages/not_found.js"), organization: true };

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const sessionBox = document.getElementById("session");
const bannerBox = document.getElementById("banner");

// What the server and the key allow: keys on?, the admin key?, signed in? With [auth.oidc]:
// the issuer offered (oidc) and the person signed in with it (person), by the session cookie.
const access = { keys: false, admin: false, signedIn: false, oidc: null, person: null };
let leaving = [];

export function banner(error) {
  if (!error) { bannerBox.hidden = true; bannerBox.replaceChildren(); return; }
  const message = error instanceof ApiError ? `${error.message}${error.code ? ` (${error.code})` : ""}` : String(error.message || error);
  clear(bannerBox, h("span", {}, message), h("button", { type: "button", class: "link", onclick: () => banner(null) }, "Dismiss"));
  bannerBox.hidden = false;
}

async function detect() {
  const reply = await fetch("/v1/models", { credentials: "omit" });
  access.keys = reply.status === 401;
  access.signedIn = !access.keys;
  access.admin = false;
  access.oidc = null;
  access.person = null;
  if (!access.keys) return;
  const known = await (await fetch("/auth/session")).json();
  access.oidc = known.oidc;
  if (!session.key) {
    access.person = known.session;
    access.signedIn = Boolean(known.session);
    return;
  }
  try {
    await get("/v1/organization/projects?limit=1", { project: false });
    access.admin = true;
  } catch (error) {
    if (error.status === 401) { session.key = ""; throw error; }
    if (error.status !== 403) throw error;
  }
  access.signedIn = true;
}

function visible() {
  return Object.entries(ROUTES).filter(([, route]) => !route.shown || route.shown(access));
}

function drawNav(current) {
  clear(nav, h("ul", {}, visible().map(([name, route]) => h("li", {},
    h("a", { href: `#/${name}`, "aria-current": name === current ? "page" : null }, route.title)))));
}

async function drawSession() {
  if (!access.keys || !access.signedIn) { sessionBox.replaceChildren(); return; }
  const signOut = h("button", { type: "button", class: "link", onclick: () => { session.forget(); start(); } }, "Sign out");
  if (access.person) {
    const leave = async () => { await post("/auth/logout"); start(); };
    clear(sessionBox, h("span", { class: "muted" }, `${access.person.name} · ${access.person.project_id}`),
      h("button", { type: "button", class: "link", onclick: leave }, "Sign out"));
    return;
  }
  if (!access.admin) { clear(sessionBox, h("span", { class: "muted" }, "project key"), signOut); return; }
  const projects = (await get("/v1/organization/projects?limit=100", { project: false })).data;
  const picker = h("select", { "aria-label": "Project", onchange: (e) => { session.project = e.target.value; route(); } },
    h("option", { value: "" }, "— pick a project —"),
    projects.map((p) => h("option", { value: p.id, selected: p.id === session.project }, `${p.name} (${p.id})`)));
  clear(sessionBox, h("span", { class: "muted" }, "admin key · working in"), picker, signOut);
}

function signIn(reason) {
  for (const leave of leaving) leave();
  leaving = [];
  clear(main);
  nav.replaceChildren();
  sessionBox.replaceChildren();
  import("./pages/signin.js").then(({ render }) => render(main, { reason, done: start, oidc: access.oidc }));
}

// The page of #/name/id: a name of no page is the not-found page; no name, or a page this key
// may not see (Admin, after signing in again with a project key), is the playground.
function parse() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const id = rest.length ? decodeURIComponent(rest.join("/")) : null;
  if (name && !Object.hasOwn(ROUTES, name)) return { name: null, spec: NOT_FOUND, id: location.hash };
  const spec = ROUTES[name];
  if (!spec || (spec.shown && !spec.shown(access))) return { name: "playground", spec: ROUTES.playground, id: null };
  return { name, spec, id };
}

async function route() {
  for (const leave of leaving) leave();
  leaving = [];
  banner(null);
  if (!access.signedIn) { signIn(); return; }
  const { name, spec, id } = parse();
  drawNav(name);
  document.title = `${spec.title} · agentloom`;
  const controller = new AbortController();
  leaving.push(() => controller.abort());
  const ctx = { ...access, signal: controller.signal, banner, onLeave: (fn) => leaving.push(fn), refresh: drawSession };
  // Each visit draws into a view of its own: a slow page left behind draws into a detached one.
  const view = h("div", { class: "view" }, h("p", { class: "muted" }, "Loading…"));
  clear(main, view);
  if (access.admin && !session.project && !spec.organization) {
    clear(view, h("h1", {}, spec.title), h("p", { class: "notice" }, "The admin key works in a project only when one is named: pick one above (or sign in with a project key)."));
    return;
  }
  try {
    const module = await (id && spec.detail ? spec.detail : spec.page)();
    await module.render(view, ctx, id);
  } catch (error) {
    if (!controller.signal.aborted) banner(error);
  }
}

async function start(reason) {
  try {
    await detect();
  } catch (error) {
    signIn(error.message);
    return;
  }
  if (!access.signedIn) { signIn(reason); return; }
  await drawSession();
  await route();
}

whenUnauthorized((error) => {
  session.key = "";
  access.signedIn = false;
  signIn(`The server refused the key: ${error.message}`);
});
window.addEventListener("hashchange", () => route());
start();
