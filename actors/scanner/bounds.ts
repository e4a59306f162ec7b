/**
 * Bounds on what a finding carries into PostgreSQL and into every answer that shows it.
 * A check reports what it saw, and what it saw is chosen by the scanned site: a page of
 * 50,000 script tags, a megabyte of `<meta>` policies. Lists name their first items and
 * say how many more there were; text is cut with a marker saying how much was left out.
 * `evaluate` (finding.ts) applies the text bounds to every finding, so no check can forget.
 */

/** Items a list in a finding names before `… and N more`. */
export const LIST_MAX_ITEMS = 10;
/** Characters of a finding's `detail`, marker included. */
export const DETAIL_MAX_CHARS = 2_048;
/** Lines of a finding's `evidence` (a record or header line each) before `… and N more lines`. */
export const EVIDENCE_MAX_LINES = 50;
/** Characters of one evidence line, marker included: room for a long CSP header. */
export const EVIDENCE_LINE_MAX_CHARS = 4_096;
/** Characters of a finding's `evidence`, markers included. */
export const EVIDENCE_MAX_CHARS = 8_192;

/** Longest marker `clip` adds: `… (N more characters)` with N up to 16 digits. */
const CLIP_MARKER_ROOM = 40;

/** `a, b, c`; past `max` items `a, b … and 12 more`. */
export function boundedList(items: readonly string[], max = LIST_MAX_ITEMS, separator = ", "): string {
  if (items.length <= max) return items.join(separator);
  return `${items.slice(0, max).join(separator)} … and ${items.length - max} more`;
}

/** One item per line; past `max` items a last line `… and N more`. */
export function boundedLines(items: readonly string[], max = LIST_MAX_ITEMS): string {
  if (items.length <= max) return items.join("\n");
  return `${items.slice(0, max).join("\n")}\n… and ${items.length - max} more`;
}

/**
 * PostgreSQL refuses NUL in text, so a page with one in an attribute would fail the
 * scan's transaction: NUL is shown as U+FFFD, as a browser shows it.
 */
function withoutNul(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/** `text` cut to at most `max` characters, the cut marked with how much was left out. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let keep = Math.max(0, max - CLIP_MARKER_ROOM);
  // Never leave half of a surrogate pair at the cut.
  const last = text.charCodeAt(keep - 1);
  if (keep > 0 && last >= 0xd800 && last <= 0xdbff) keep--;
  return `${text.slice(0, keep)}… (${text.length - keep} more characters)`;
}

export function boundDetail(detail: string): string {
  return clip(withoutNul(detail), DETAIL_MAX_CHARS);
}

/** Whole lines while they fit `EVIDENCE_MAX_LINES` and `EVIDENCE_MAX_CHARS`, each clipped; then `… and N more lines`. */
export function boundEvidence(evidence: string): string {
  const lines = withoutNul(evidence).split("\n");
  const kept: string[] = [];
  // Room for the closing marker, so the whole stays within EVIDENCE_MAX_CHARS.
  let room = EVIDENCE_MAX_CHARS - CLIP_MARKER_ROOM;
  for (const line of lines) {
    const clipped = clip(line, EVIDENCE_LINE_MAX_CHARS);
    if (kept.length === EVIDENCE_MAX_LINES || clipped.length + 1 > room) break;
    kept.push(clipped);
    room -= clipped.length + 1;
  }
  const left = lines.length - kept.length;
  return left === 0 ? kept.join("\n") : `${kept.join("\n")}\n… and ${left} more lines`;
}
