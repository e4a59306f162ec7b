import type { ComponentStatus, Indicator } from "../rules.js";
import { escapeXml } from "./escape.js";

/** What the human page and the report share: colours, words, time format, one stylesheet (no external assets). */

export const INDICATOR_COLOURS: Readonly<Record<Indicator, string>> = {
  ok: "#1a7f37",
  degraded: "#9a6700",
  down: "#cf222e",
  maintenance: "#0969da",
};

export const COMPONENT_WORDS: Readonly<Record<ComponentStatus, { text: string; colour: string }>> = {
  operational: { text: "Operational", colour: "#1a7f37" },
  degraded: { text: "Degraded", colour: "#9a6700" },
  outage: { text: "Outage", colour: "#cf222e" },
  not_configured: { text: "Not monitored", colour: "#57606a" },
};

/** A day's bar: full uptime green, minor loss amber, real loss red, no checks grey. */
export function barClass(pct: number | null): string {
  if (pct === null) return "b-none";
  if (pct >= 99.9) return "b-ok";
  if (pct >= 98) return "b-warn";
  return "b-bad";
}

/** `2026-03-01T14:05:00Z` → `2026-03-01 14:05 UTC` (the page has no script to localize times). */
export function when(isoTime: string | null): string {
  if (!isoTime) return "";
  return `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC`;
}

export function pct(value: number | null): string {
  return value === null ? "no data" : `${value.toFixed(value === 100 ? 0 : 2)}%`;
}

export function affectsText(affects: readonly string[], names: Readonly<Record<string, string>>): string {
  return affects.length === 0 ? "All services" : affects.map((a) => names[a] ?? a).join(", ");
}

export function paragraphs(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeXml(p).replace(/\n/g, "<br>")}</p>`)
    .join("");
}

export const BASE_CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:880px;margin:0 auto;padding:24px 16px 48px}
h1{font-size:1.6rem;margin:0 0 16px}
h2{font-size:1.15rem;margin:32px 0 12px}
h3{font-size:1rem;margin:0 0 4px}
a{color:#0969da}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px;margin-bottom:12px}
.muted{color:#57606a;font-size:.875rem}
.pill{display:inline-block;font-size:.8rem;font-weight:600;padding:1px 8px;border-radius:999px;color:#fff;white-space:nowrap}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #d0d7de;vertical-align:top}
th{font-size:.85rem;color:#57606a;font-weight:600}
tbody th{font-size:1rem;color:#1f2328}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
`;
