// A response's trace (GET /v1/responses/{id}/trace) as a waterfall: one row per span, its bar
// placed by start and duration on the response's time line.

import { h, code, pretty } from "./dom.js";

export function ms(value) {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function bar(span, total) {
  const el = h("div", { class: `bar ${span.kind} ${span.status}` });
  el.style.marginLeft = `${(100 * span.start_ms) / total}%`;
  el.style.width = `${Math.max(0.5, (100 * span.duration_ms) / total)}%`;
  return el;
}

function row(span, total) {
  const attributes = Object.keys(span.attributes || {}).length ? h("details", {}, h("summary", {}, "attributes"), code(pretty(span.attributes))) : null;
  return h("li", { class: "span", "data-kind": span.kind },
    h("div", { class: "span-name" }, h("span", { class: `kind ${span.kind}` }, span.kind), " ", span.name,
      span.status === "error" ? h("span", { class: "error" }, ` error${span.error ? `: ${span.error}` : ""}`) : null,
      attributes),
    h("div", { class: "track", title: `${span.name}: starts at ${ms(span.start_ms)}, lasts ${ms(span.duration_ms)}` }, bar(span, total)),
    h("div", { class: "duration" }, ms(span.duration_ms)));
}

export function waterfall(trace) {
  const spans = trace.spans || [];
  const total = Math.max(trace.duration_ms || 0, ...spans.map((s) => s.start_ms + s.duration_ms), 0.001);
  return h("div", { class: "waterfall" },
    h("p", { class: "muted" }, `${spans.length} spans over ${ms(total)}, started ${new Date(trace.started_at * 1000).toLocaleString()}`,
      trace.trace_id ? ` · trace ${trace.trace_id}` : "", trace.truncated ? " · truncated: later spans were not kept" : ""),
    h("ol", { class: "spans" }, spans.map((span) => row(span, total))));
}
