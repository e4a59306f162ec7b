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
 * `installation.pending` goes to the organization's owners and admins (handler.ts asks
 * PostgreSQL: the event does not carry them).
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

/** The e-mail telling an owner or admin that an installation of a key waits for approval. */
function pendingInstallationMail(event: EventView, to: Person): Mail {
  const key = `"${String(event.key_name)}" (id ${String(event.key_id)}, prefix ${String(event.key_prefix)})`;
  // The installation's name is whatever the caller sent (a public key's caller may be anyone): quoted, control characters escaped.
  const install = JSON.stringify(String(event.install));
  const lines = [
    `Hello ${to.name || to.email},`,
    "",
    `Key ${key}${event.domain ? ` of ${event.domain}` : ""} was called from a new installation, ${install}.`,
    "Its calls are refused with installation_pending until you approve or block it on the key's page",
    `(or POST /admin/v1/keys/${String(event.key_id)}/installations/<install>/approve or /block).`,
    "If you do not know this installation, block it: a client key is public, and anyone can call with it.",
    "",
    `Event ${event.id} at ${event.time}. You are told once per installation.`,
  ];
  return { to: to.email, subject: `${event.domain ? `[${event.domain}] ` : ""}New installation ${install} waits for approval`, text: lines.join("\n") };
}

/** The e-mail of one event to one recipient: a finding event, or a pending installation. */
export function mailOf(event: EventView, to: Person): Mail {
  if (event.type === "installation.pending") return pendingInstallationMail(event, to);
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
