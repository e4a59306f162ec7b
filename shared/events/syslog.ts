/**
 * RFC 5424 lines for the events feed (`format=syslog`) and the SIEM pusher's
 * `syslog_tcp` destinations. One layout, documented in docs/events.md:
 *
 *   <PRI>1 TIMESTAMP HOSTNAME access-gateway - MSGID [gateway@32473 event_id="…" domain="…"] MSG
 *
 * - PRI = facility 10 (authpriv: security messages, kept out of world-readable logs by
 *   default syslog configurations) × 8 + the type's severity (SEVERITY below);
 * - TIMESTAMP = the event's time, UTC with milliseconds;
 * - MSGID = the event type (at most 32 printable characters: every type fits);
 * - SD-ID `gateway@32473`: 32473 is the Private Enterprise Number RFC 5612 reserves for
 *   documentation; a deployment with its own PEN changes SYSLOG_PEN;
 * - MSG = the event's JSON with every non-ASCII character escaped (\uXXXX), so the line
 *   is pure ASCII (MSG-ANY, no BOM needed) and a single line.
 */
import { isEventType, type EventType } from "./db/events.js";
import type { EventView } from "./payloads.js";
import type { SiemTestEvent } from "./siem-stream.js";

export const SYSLOG_FACILITY = 10;
export const SYSLOG_PEN = 32473;
export const SYSLOG_APP_NAME = "access-gateway";
export const SYSLOG_SD_ID = `gateway@${SYSLOG_PEN}`;

/** RFC 5424 severities used here. */
export const SEVERITY_NAMES = { 4: "warning", 5: "notice", 6: "informational" } as const;
type Severity = keyof typeof SEVERITY_NAMES;

/**
 * interface.md section 6 names the warning types; the rest are our choice: notice for
 * what asks for attention soon (a risk nearing its review, a finding nearing its target,
 * an acceptance withdrawn, an installation waiting for approval), informational for the
 * record of normal work.
 */
export const SEVERITY: Readonly<Record<EventType, Severity>> = {
  "scan.regression": 4,
  "risk.expired": 4,
  "finding.reopened": 4,
  "finding.overdue": 4,
  "finding.escalated": 4,
  "risk.expiring": 5,
  "risk.unaccepted": 5,
  "finding.near_target": 5,
  "installation.pending": 5,
  "scan.completed": 6,
  "risk.accepted": 6,
  "finding.assigned": 6,
  "finding.status_changed": 6,
};

/** What a syslog line (and a SIEM push) is made of: a stored event, or the test event with a type of its own. */
export type SyslogEvent = EventView | SiemTestEvent;

export function severityOf(type: string): Severity {
  return isEventType(type) ? SEVERITY[type] : 6;
}

/** RFC 5424 6.3.3: inside PARAM-VALUE, `"`, `\` and `]` are escaped with a backslash. */
export function escapeParamValue(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** JSON with every character outside printable ASCII escaped: one ASCII line. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** HOSTNAME: printable ASCII without spaces, at most 255; `-` when there is none. */
export function syslogHostname(host: string): string {
  const clean = host.replace(/[^\x21-\x7e]/g, "").slice(0, 255);
  return clean === "" ? "-" : clean;
}

function timestamp(time: string): string {
  const ms = Date.parse(time);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "-";
}

/** One RFC 5424 line (no trailing newline). */
export function syslogLine(event: SyslogEvent, hostname: string): string {
  const pri = SYSLOG_FACILITY * 8 + severityOf(event.type);
  const msgid = event.type.replace(/[^\x21-\x7e]/g, "").slice(0, 32) || "-";
  const params: [string, string][] = [
    ["event_id", String(event.id)],
    ["domain", event.domain],
  ];
  if ("finding_key" in event && typeof event.finding_key === "string") params.push(["finding_key", event.finding_key]);
  // Domains and finding keys are ASCII already; anything else is replaced, never sent raw.
  const sd = `[${SYSLOG_SD_ID} ${params.map(([k, v]) => `${k}="${escapeParamValue(v.replace(/[^\x20-\x7e]/g, "?"))}"`).join(" ")}]`;
  return `<${pri}>1 ${timestamp(event.time)} ${syslogHostname(hostname)} ${SYSLOG_APP_NAME} - ${msgid} ${sd} ${asciiJson(event)}`;
}

/** RFC 6587 3.4.1 octet counting: `MSG-LEN SP SYSLOG-MSG`, the length in bytes. */
export function octetFrame(line: string): string {
  return `${Buffer.byteLength(line, "utf8")} ${line}`;
}
