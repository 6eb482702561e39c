// A response's trace (GET /v1/responses/{id}/trace) as a waterfall: one row per span, its bar
// placed by start and duration on the response's time line. The Agents SDK's traces
// (GET /v1/traces/{id}) are drawn the same way (sdkWaterfall).

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

// An Agents SDK span (ISO times, span_data by type) as a waterfall span, `origin` its trace's
// first start (epoch ms).
function sdkSpan(span, origin) {
  const data = span.span_data || {};
  const start = Date.parse(span.started_at || "") || origin;
  const end = Date.parse(span.ended_at || "") || start;
  const { type, name, ...attributes } = data;
  const label = name || data.response_id || data.model || "";
  return {
    name: `${type || "span"}${label ? ` ${label}` : ""}`,
    kind: type || "custom",
    start_ms: start - origin,
    duration_ms: Math.max(0, end - start),
    status: span.error ? "error" : "ok",
    error: span.error ? span.error.message : null,
    attributes,
  };
}

export function sdkWaterfall(trace) {
  const spans = trace.spans || [];
  const starts = spans.map((s) => Date.parse(s.started_at || "")).filter((t) => !Number.isNaN(t));
  const origin = starts.length ? Math.min(...starts) : 0;
  const drawn = spans.map((s) => sdkSpan(s, origin)).sort((a, b) => a.start_ms - b.start_ms);
  const total = Math.max(...drawn.map((s) => s.start_ms + s.duration_ms), 0.001);
  return h("div", { class: "waterfall sdk", "data-trace": trace.id },
    h("p", { class: "muted" }, `${trace.workflow_name || "Agents SDK trace"} · ${spans.length} spans over ${ms(total)} · trace ${trace.id}`),
    h("ol", { class: "spans" }, drawn.map((span) => row(span, total))));
}
