/** Human-readable output: aligned label/value lines and plain tables. */

/**
 * A whole escape sequence: CSI (colours, cursor moves; 7- and 8-bit), OSC (titles,
 * hyperlinks), DCS/SOS/PM/APC strings, and the short ESC forms.
 */
const ESCAPE_SEQUENCE = new RegExp(
  [
    "\u001b\\[[0-?]*[ -/]*[@-~]",
    "\u009b[0-?]*[ -/]*[@-~]",
    "(?:\u001b\\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\\\|\u009c)?",
    "(?:\u001b[PX^_]|[\u0090\u0098\u009e\u009f])[^\u001b\u009c]*(?:\u001b\\\\|\u009c)?",
    "\u001b[ -/]*[0-~]?",
  ].join("|"),
  "g",
);
/** Tabs and line breaks: one space each, so a value keeps to its line and its column. */
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
/** The rest of C0, DEL and C1, and the bidirectional controls that reorder the text after them. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from the server or from Redis, made safe to print to a terminal: escape sequences
 * removed whole, tabs and line breaks turned into spaces, every other control character
 * (C0, DEL, C1) and bidirectional override removed. A collector's answer stored as
 * `last_error`, a dead letter's error or an organization's name cannot then recolour the
 * terminal, rewrite its title, hide a line or reorder what the operator reads. Every string
 * the CLI prints goes through it: values through `text`, whole lines through `print`.
 */
export function terminalSafe(value: string): string {
  return value.replace(ESCAPE_SEQUENCE, "").replace(BREAKS, " ").replace(CONTROLS, "");
}

export function lines(pairs: [string, unknown][], indent = "  "): string {
  const shown = pairs.filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${indent}${label.padEnd(width)}  ${text(value)}`).join("\n");
}

export function text(value: unknown): string {
  if (value === null || value === undefined || value === "") return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map(text).join(", ");
  if (typeof value === "object") return terminalSafe(JSON.stringify(value));
  return terminalSafe(String(value));
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  return [render(headers), ...rows.map(render)].join("\n");
}

/** 850ms, 12s, 5m03s, 2h10m, 3d04h. */
export function duration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor((s % 86400) / 3600))}h`;
}

export function count(n: number | null): string {
  return n === null ? "-" : n.toLocaleString("en-US");
}
