import {
  type EventOf,
  type EventView,
  type FindingEventType,
  type FindingEventView,
  isFindingEvent,
  type Owner,
} from "../../shared/events/index.js";
import type { Mail } from "../../shared/platform/mail.js";

// The notifier's stream message is the events stream's EventMessage (shared/events/stream.ts).

interface Person {
  name: string;
  email: string;
}

/** An owner with an address to write to; nobody otherwise. */
function person(owner: Owner | null): Person | null {
  return owner !== null && owner.email !== "" ? { name: owner.name, email: owner.email } : null;
}

/**
 * Who is told by e-mail: on `finding.assigned` the new owner and the previous one; on
 * any other finding event the current owner. Risk and scan events go to webhooks only.
 * `installation.pending` goes to the organization's owners and admins (handler.ts asks
 * PostgreSQL: the event does not carry them).
 */
export function recipientsOf(event: EventView): Person[] {
  if (!isFindingEvent(event)) return [];
  const out = [person(event.owner)];
  if (event.type === "finding.assigned") out.push(person(event.previous_owner));
  const seen = new Set<string>();
  return out.filter((p): p is Person => p !== null && !seen.has(p.email.toLowerCase()) && seen.add(p.email.toLowerCase()) !== undefined);
}

const SUBJECT: { [K in FindingEventType]: (e: EventOf<K>) => string } = {
  "finding.assigned": (e) => `assigned to ${person(e.owner)?.name || "nobody"}`,
  "finding.status_changed": (e) => `status ${e.from} → ${e.status}`,
  "finding.reopened": () => "reopened: a scan found it failing again",
  "finding.overdue": (e) => `overdue (due ${String(e.due_at)})`,
  "finding.near_target": (e) => `near its fix-time target (${e.target_date})`,
  "finding.escalated": (e) => `escalated: ${e.days_overdue} days overdue`,
};

/** The e-mail telling an owner or admin that an installation of a key waits for approval. */
export function pendingInstallationMail(event: EventOf<"installation.pending">, to: Person): Mail {
  const key = `"${event.key_name}" (id ${event.key_id}, prefix ${event.key_prefix})`;
  // The installation's name is whatever the caller sent (a public key's caller may be anyone): quoted, control characters escaped.
  const install = JSON.stringify(event.install);
  const lines = [
    `Hello ${to.name || to.email},`,
    "",
    `Key ${key}${event.domain ? ` of ${event.domain}` : ""} was called from a new installation, ${install}.`,
    "Its calls are refused with installation_pending until you approve or block it on the key's page",
    `(or POST /admin/v1/keys/${event.key_id}/installations/<install>/approve or /block).`,
    "If you do not know this installation, block it: a client key is public, and anyone can call with it.",
    "",
    `Event ${event.id} at ${event.time}. You are told once per installation.`,
  ];
  return {
    to: to.email,
    subject: `${event.domain ? `[${event.domain}] ` : ""}New installation ${install} waits for approval`,
    text: lines.join("\n"),
  };
}

function subjectOf<K extends FindingEventType>(event: EventOf<K>): string {
  return SUBJECT[event.type](event);
}

/** The e-mail of one finding event to one recipient. */
export function mailOf(event: FindingEventView, to: Person): Mail {
  const what = subjectOf(event);
  const owner = person(event.owner);
  const lines = [
    `Hello ${to.name || to.email},`,
    "",
    `${event.finding} (${event.finding_key}) on ${event.domain}: ${what}.`,
    "",
    `Status: ${event.status}`,
    `Owner: ${owner ? `${owner.name} <${owner.email}>` : "nobody"}`,
    `Due: ${event.due_at ?? "no due date"}`,
    ...("by" in event && event.by
      ? [
          `By: ${event.by}${"automatic" in event && event.automatic === true ? " (automatic: the organization's default owner for new findings)" : ""}`,
        ]
      : []),
    "",
    `Event ${event.id} at ${event.time}.`,
  ];
  return { to: to.email, subject: `[${event.domain}] ${event.finding_key}: ${what}`, text: lines.join("\n") };
}
