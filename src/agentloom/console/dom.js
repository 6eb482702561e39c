// Building the page: elements made with h(), never from HTML strings (data is text, not markup).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name === "text") el.textContent = value;
    else if (name in el && typeof value !== "string") el[name] = value;
    else el.setAttribute(name, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function time(unix) {
  if (!unix) return "—";
  const d = new Date(unix * 1000);
  return h("time", { datetime: d.toISOString(), title: d.toISOString() }, d.toLocaleString());
}

export function seconds(start, end) {
  if (!start || !end) return "—";
  return end - start < 1 ? "under 1 s" : `${end - start} s`;
}

export function bytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "kB", "MB", "GB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export function pretty(value) {
  if (typeof value === "string") {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value, null, 2);
}

export function code(text, label) {
  return h("pre", { class: "code", "aria-label": label }, h("code", {}, text));
}

// A table of rows; columns are [heading, row => cell content].
export function table(columns, rows, empty = "Nothing here yet.") {
  if (!rows.length) return h("p", { class: "muted empty" }, empty);
  return h("table", {},
    h("thead", {}, h("tr", {}, columns.map(([heading]) => h("th", { scope: "col" }, heading)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))));
}

export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control,
    hint ? h("small", { class: "muted" }, hint) : null);
}

export function check(label, input) {
  return h("label", { class: "check" }, input, " ", label);
}

export function badge(status) {
  return h("span", { class: `badge ${status || ""}` }, status || "—");
}

// Runs `tick` every `ms` until it returns false, throws (handed to `failed`) or stop() is called.
export function every(ms, tick, failed) {
  let stopped = false;
  let timer = null;
  const run = async () => {
    if (stopped) return;
    let again;
    try { again = await tick(); } catch (error) { stopped = true; failed(error); return; }
    if (!stopped && again !== false) timer = setTimeout(run, ms);
  };
  timer = setTimeout(run, 0);
  return () => { stopped = true; clearTimeout(timer); };
}
