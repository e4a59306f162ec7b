/**
 * `last_error` of SIEM destinations and webhook deliveries holds a peer's words (a
 * collector's answer body, a receiver's status line): it is stored bounded, at most
 * LAST_ERROR_MAX_CHARS characters (code points; a longer text keeps its first 499 and ends
 * with `…`), with NUL, which PostgreSQL text cannot hold, replaced by U+FFFD. Other control
 * characters are kept as received: the admin API answers JSON, and the CLI neutralizes them
 * when it prints (ops/cli/format.ts, `terminalSafe`).
 */
export const LAST_ERROR_MAX_CHARS = 500;

export function boundedError(text: string): string {
  const clean = text.replace(/\u0000/g, "\uFFFD");
  if (clean.length <= LAST_ERROR_MAX_CHARS) return clean;
  const points = Array.from(clean);
  return points.length <= LAST_ERROR_MAX_CHARS ? clean : `${points.slice(0, LAST_ERROR_MAX_CHARS - 1).join("")}…`;
}
