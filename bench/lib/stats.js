'use strict';
/** Small statistics and formatting helpers shared by the bench sections. */

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** `{median, min, max, n}` of a list of numbers. */
function summary(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}

/** Formats a summary as `median (min–max)` with `digits` decimals. */
function fmt(s, digits = 2, unit = '') {
  if (!s) return 'n/a';
  const f = (x) => x.toFixed(digits);
  return `${f(s.median)}${unit} (${f(s.min)}–${f(s.max)})`;
}

/**
 * Runs `fns` (an object of name → async function returning a number) `reps` times each, alternating
 * A B A B (the order rotates every round so neither side always goes first). Returns name → values.
 */
async function alternate(fns, reps) {
  const names = Object.keys(fns);
  const out = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < reps; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const name of order) out[name].push(await fns[name](r));
  }
  return out;
}

/** Per-round ratios a[i] / b[i] (paired: the two were measured next to each other). */
function ratios(a, b) {
  return a.map((x, i) => x / b[i]);
}

/** The `q` quantile (0–1) of `values`, nearest rank. */
function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = Float64Array.from(values).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

module.exports = { median, summary, fmt, alternate, ratios, quantile, nowMs };
