// The API client: every call goes to this server's public /v1 API, with the signed-in key
// (or the session cookie of a sign-in with the OIDC issuer).

import { jsonEvents, sseEvents } from "./sse.js";

const KEY = "agentloom.console.key";
const PROJECT = "agentloom.console.project";

// The key lives in sessionStorage only (gone when the tab closes), never in a URL.
export const session = {
  get key() { return sessionStorage.getItem(KEY) || ""; },
  set key(value) { store(KEY, value); },
  get project() { return sessionStorage.getItem(PROJECT) || ""; },
  set project(value) { store(PROJECT, value); },
  forget() { sessionStorage.removeItem(KEY); sessionStorage.removeItem(PROJECT); },
};

function store(name, value) {
  if (value) sessionStorage.setItem(name, value);
  else sessionStorage.removeItem(name);
}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = error?.code || null;
    this.type = error?.type || null;
  }
}

// Called with the error when the server refuses the key (401): the app shows the sign-in.
let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

// Signed in with the OIDC issuer instead, the session is an HttpOnly cookie the browser sends
// itself; what changes anything carries the session's CSRF token, read from its own cookie.
export function csrfToken() {
  const found = document.cookie.split("; ").find((c) => c.startsWith("agentloom_csrf="));
  return found ? decodeURIComponent(found.slice("agentloom_csrf=".length)) : "";
}

// `project`: false for the organization's routes (in no project), or a project's id to work in
// that one (a row of another project, for the admin key); else the session's project.
export function headers(extra = {}, { project = true } = {}) {
  const sent = { ...extra };
  if (session.key) sent.Authorization = `Bearer ${session.key}`;
  else if (csrfToken()) sent["X-CSRF-Token"] = csrfToken();
  const named = typeof project === "string" ? project : project && session.project;
  if (named) sent["OpenAI-Project"] = named;
  return sent;
}

async function failure(reply) {
  let body = null;
  try { body = await reply.json(); } catch { /* not JSON */ }
  const error = new ApiError(reply.status, body?.error);
  if (reply.status === 401) onUnauthorized(error);
  return error;
}

function request(method, path, body, options = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }, options), signal: options.signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  return fetch(path, init);
}

export async function call(method, path, body, options) {
  const reply = await request(method, path, body, options);
  if (!reply.ok) throw await failure(reply);
  return reply.status === 204 ? null : reply.json();
}

export const get = (path, options) => call("GET", path, undefined, options);
export const post = (path, body, options) => call("POST", path, body ?? {}, options);
export const del = (path, options) => call("DELETE", path, undefined, options);

export function query(path, params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && one !== "") search.append(name, one);
    }
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

async function opened(method, path, body, signal) {
  const reply = await request(method, path, body, { signal });
  if (!reply.ok) throw await failure(reply);
  return reply.body;
}

// The events of a streamed call (POST /v1/responses with stream: true, or a resumed GET).
export async function* events(method, path, body, { signal } = {}) {
  yield* jsonEvents(await opened(method, path, body, signal));
}

// The named events of a stream that has them (a managed agent's): {event, data} with data parsed.
export async function* namedEvents(method, path, body, { signal } = {}) {
  for await (const { event, data } of sseEvents(await opened(method, path, body, signal))) {
    yield { event, data: JSON.parse(data) };
  }
}

// A multipart upload with progress (fetch reports none for uploads): onProgress(sent, total).
export function upload(path, form, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    for (const [name, value] of Object.entries(headers())) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0));
    xhr.addEventListener("load", () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) { resolve(body); return; }
      const error = new ApiError(xhr.status, body?.error);
      if (xhr.status === 401) onUnauthorized(error);
      reject(error);
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, { message: "The upload failed (network error)." })));
    xhr.send(form);
  });
}

// Every page of a list endpoint, up to `most` objects.
export async function all(path, params = {}, most = 500, options = {}) {
  const found = [];
  let after;
  for (;;) {
    const page = await get(query(path, { ...params, limit: 100, after }), options);
    found.push(...page.data);
    if (!page.has_more || found.length >= most || !page.data.length) return found;
    after = page.last_id || page.data[page.data.length - 1].id;
  }
}
