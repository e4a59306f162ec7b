/**
 * How the dashboard writes times (docs/dashboard.md, Quality: "Times", "Calendar dates are UTC
 * days"). An instant is shown in the browser's time zone as `YYYY-MM-DD HH:MM <zone>`
 * (`2026-11-25 14:20 CET`), the zone's short name as Intl gives it; its exact UTC time
 * (`2026-11-25 13:20:05 UTC`) goes in a title. The fields come from Intl's parts, never from
 * a locale's pattern, so the layout is the same in every locale. A calendar date
 * (`YYYY-MM-DD`: a due date, a chart's day) is shown as it is: the service counts its days in
 * UTC.
 *
 * No imports and no DOM: test/dashboard/timezone.test.ts runs these in Node, and the members' sign-in
 * page (shared/embed/signin/main.ts) writes its times with them too.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export function isDateOnly(value: string): boolean {
  return DATE_ONLY.test(value);
}

/**
 * The locale the zone's name is written in: the browser's own when it is an English one
 * (en-GB writes "CET", en-IN "IST"), otherwise "en": the dashboard's words are English.
 */
function englishLocale(): string {
  const locale = new Intl.DateTimeFormat().resolvedOptions().locale;
  return /^en(-|$)/i.test(locale) ? locale : "en";
}

/** One formatter per zone asked for ("" for the browser's, as it was when first asked). */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? "";
  let format = formatters.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(englishLocale(), {
      timeZone,
      calendar: "gregory",
      numberingSystem: "latn",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    formatters.set(key, format);
  }
  return format;
}

export interface WallClock {
  /** `YYYY-MM-DD` */
  date: string;
  /** `HH:MM`, 00 to 23 */
  time: string;
  /** The zone's short name: "CET", "EST", "GMT+5:30", "UTC". */
  zone: string;
}

/** An instant (ms since the epoch) on the wall clock of `timeZone`, by default the browser's. */
export function wallClock(ms: number, timeZone?: string): WallClock {
  const part: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) part[p.type] = p.value;
  return {
    date: `${part.year.padStart(4, "0")}-${part.month}-${part.day}`,
    time: `${part.hour}:${part.minute}`,
    zone: part.timeZoneName ?? "",
  };
}

/**
 * `2026-11-25 14:20 CET` for an ISO date-time, in the browser's zone (or `timeZone`). A
 * calendar date, or text that is no time, is returned as it is.
 */
export function localTime(iso: string, timeZone?: string): string {
  if (isDateOnly(iso)) return iso;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const at = wallClock(ms, timeZone);
  return `${at.date} ${at.time} ${at.zone}`.trimEnd();
}

/** The day of an instant on the browser's calendar (or `timeZone`'s), `YYYY-MM-DD`. */
export function localDate(ms: number, timeZone?: string): string {
  return wallClock(ms, timeZone).date;
}

/** `2026-11-25 13:20:05 UTC`: the exact time, as logs write it; null for a calendar date or text that is no time. */
export function utcTime(iso: string): string | null {
  if (isDateOnly(iso)) return null;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The service's day now, `YYYY-MM-DD` in UTC: what a date field's earliest day is measured against. */
export function utcToday(nowMs: number = Date.now()): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}
