// A chart's numbers, without the DOM: the time ranges offered, "nice" value ticks for a y axis,
// which buckets get an x tick and its label (UTC), and values written short (1.2k, $0.031).

// A range offered, as the span it covers and the width of its buckets (the summary's).
export const RANGES = {
  "1h": { seconds: 3600, width: "1m" },
  "24h": { seconds: 86400, width: "1h" },
  "7d": { seconds: 7 * 86400, width: "1d" },
  "30d": { seconds: 30 * 86400, width: "1d" },
};

export const WIDTH_SECONDS = { "1m": 60, "1h": 3600, "1d": 86400 };

// The summary's span for a range ending at `now` (unix seconds): its start and bucket width.
export function span(range, now) {
  const { seconds, width } = RANGES[range] || RANGES["24h"];
  const step = WIDTH_SECONDS[width];
  const end = Math.ceil(now / step) * step;
  return { start_time: end - seconds, bucket_width: width };
}

// A round step (1, 2, 2.5 or 5 times a power of ten) giving about `count` ticks up to `most`.
export function niceStep(most, count = 4) {
  if (!(most > 0)) return 1;
  const rough = most / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const fraction = rough / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return nice * power;
}

// The y ticks from 0 to the first multiple of the step at or above `most` (0 and 1 for none).
export function niceTicks(most, count = 4) {
  const step = niceStep(most, count);
  const top = Math.max(step, Math.ceil(most / step - 1e-9) * step);
  const ticks = [];
  for (let i = 0; i * step <= top + step * 1e-9; i += 1) ticks.push(round(i * step));
  return ticks;
}

function round(value) {
  return Number(value.toPrecision(12)); // 0.30000000000000004 -> 0.3
}

// A number short: 950, 1.2k, 3.4M (`digits` significant after the unit's point).
export function short(value, digits = 1) {
  const size = Math.abs(value);
  if (size >= 1e9) return `${trim((value / 1e9).toFixed(digits))}G`;
  if (size >= 1e6) return `${trim((value / 1e6).toFixed(digits))}M`;
  if (size >= 1e3) return `${trim((value / 1e3).toFixed(digits))}k`;
  if (Number.isInteger(value)) return String(value);
  return String(round(Number(value.toPrecision(3))));
}

function trim(text) {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

// Dollars: cents and up with 2 decimals, less with 3 significant digits ($0.000123).
export function dollars(value) {
  if (value === 0) return "$0";
  if (Math.abs(value) >= 0.01) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(3))}`;
}

// Milliseconds: "850 ms", "1.2 s".
export function millis(value) {
  if (value === null || value === undefined) return "—";
  return value >= 1000 ? `${trim((value / 1000).toFixed(1))} s` : `${Math.round(value)} ms`;
}

// A bucket's start as its axis label (UTC): "14:05" for minutes and hours, "12-01" for days.
export function timeLabel(unix, width) {
  const iso = new Date(unix * 1000).toISOString();
  return width === "1d" ? iso.slice(5, 10) : iso.slice(11, 16);
}

// A bucket's start in full (its tooltip): "2026-12-01 14:05 UTC", or the day alone.
export function timeTitle(unix, width) {
  const iso = new Date(unix * 1000).toISOString();
  return width === "1d" ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

// The indexes of the buckets that get an x tick: at most `most`, evenly spaced, from the first.
export function timeTicks(count, most = 6) {
  if (count <= 0) return [];
  const every = Math.max(1, Math.ceil(count / most));
  const picked = [];
  for (let i = 0; i < count; i += every) picked.push(i);
  return picked;
}
