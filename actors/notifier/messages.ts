import type { EventView } from "../../shared/events/index.js";
import type { Mail } from "./mail.js";

// The notifier's stream message is the events stream's EventMessage (shared/events/stream.ts).

interface Person {
  name: string;
  email: string;
}

function person(value: unknown): Person | null {
  if (value === null || typeof value !== "object") return null;
  const { name, email } = value as Record<string, unknown>;
  return typeof email === "string" && email !== "" ? { name: typeof name === "string" ? name : "", email } : null;
}

/**
 * Who is told by e-mail: on `finding.assigned` the new owner and the previous one; on
 * any other finding event the current owner. Risk and scan events go to webhooks only.
 */
export function recipientsOf(event: EventView): Person[] {
  if (!event.type.startsWith("finding.")) return [];
  const out = [person(event.owner)];
  if (event.type === "finding.assigned") out.push(person(event.previous_owner));
  const seen = new Set<string>();
  return out.filter((p): p is Person => p !== null && !seen.has(p.email.toLowerCase()) && seen.add(p.email.toLowerCase()) !== undefined);
}

const SUBJECT: Record<string, (e: EventView) => string> = {
  "finding.assigned": (e) => `assigned to ${person(e.owner)?.name || "nobody"}`,
  "finding.status_changed": (e) => `status ${String(e.from)} → ${String(e.status)}`,
  "finding.reopened": () => "reopened: a scan found it failing again",
  "finding.overdue": (e) => `overdue (due ${String(e.due_at)})`,
  "finding.near_target": (e) => `near its fix-time target (${String(e.target_date)})`,
  "finding.escalated": (e) => `escalated: ${String(e.days_overdue)} days overdue`,
};

/** The e-mail of one finding event to one recipient. */
export function mailOf(event: EventView, to: Person): Mail {
  const what = SUBJECT[event.type]?.(event) ?? event.type;
  const owner = person(event.owner);
  const lines = [
    `Hello ${to.name || to.email},`,
    "",
    `${String(event.finding)} (${String(event.finding_key)}) on ${event.domain}: ${what}.`,
    "",
    `Status: ${String(event.status)}`,
    `Owner: ${owner ? `${owner.name} <${owner.email}>` : "nobody"}`,
    `Due: ${event.due_at ? String(event.due_at) : "no due date"}`,
    ...(event.by ? [`By: ${String(event.by)}${event.automatic === true ? " (automatic: the organization's default owner for new findings)" : ""}`] : []),
    "",
    `Event ${event.id} at ${event.time}.`,
  ];
  return { to: to.email, subject: `[${event.domain}] ${String(event.finding_key)}: ${what}`, text: lines.join("\n") };
}
