/**
 * The fields each event type carries besides `id`, `type`, `time` and `domain`
 * (interface.md section 6, and ours where the contract says "not shown"). One map keyed by
 * type, so whoever writes an event (insertEvent) and whoever reads one (the feed, the syslog
 * lines, the SIEM transports, the notifier) is held to the same shape by the compiler.
 */
import type { EventType } from "./db/events.js";

export interface Owner {
  name: string;
  email: string;
}

/** The finding fields every finding and risk event carries (section 6). */
export interface FindingFields {
  finding_key: string;
  finding: string;
  owner: Owner | null;
  status: string;
  due_at: string | null;
}

/** A risk acceptance's own fields, after the finding's. */
export interface RiskFields extends FindingFields {
  note: string;
  acked_at: string | null;
  expires_at: string | null;
}

/** One finding that got worse between two scans: its status and check result before and now. */
export interface RegressionChange {
  id: string;
  status: string;
  result: string | null;
  previous_status: string | null;
  previous_result: string | null;
}

export interface EventPayloads {
  "scan.completed": { kind: "web" | "dns"; grade: string; score: number; fail_count: number; warn_count?: number; scan_id?: number };
  "scan.regression": {
    kind: "web" | "dns";
    new_issues: string[];
    resolved: string[];
    changes: RegressionChange[];
    previous_grade: string;
    grade: string;
  };
  /** `by`: who accepted it. */
  "risk.accepted": RiskFields & { by: string };
  /** `by`: who released it. */
  "risk.unaccepted": RiskFields & { by: string };
  "risk.expiring": RiskFields;
  "risk.expired": RiskFields;
  "finding.assigned": FindingFields & { by: string; automatic: boolean; previous_owner: Owner | null };
  "finding.reopened": FindingFields;
  "finding.overdue": FindingFields & { days_overdue: number };
  "finding.near_target": FindingFields & { target_date: string };
  "finding.escalated": FindingFields & { days_overdue: number };
  /** `recheck`: the status changed because a re-check passed. */
  "finding.status_changed": FindingFields & { from: string; by: string; recheck?: boolean };
  /** A key was called from an installation that waits for the owner's approval (docs/events.md). */
  "installation.pending": { install: string; key_id: number; key_name: string; key_prefix: string };
}

/** The finding events: those whose payload starts with the finding fields. */
export type FindingEventType = Extract<EventType, `finding.${string}`>;

/** One event of type K as the feed, the events stream and the SIEM pusher carry it. */
export type EventOf<K extends EventType> = { id: number; type: K; time: string; domain: string } & EventPayloads[K];

/**
 * An event read back from the table: its type is one of EventType and its fields one of the
 * payloads. The table does not tie the two together; `isFindingEvent` (or a check of
 * `type`) narrows it to one kind.
 */
export type EventView = EventOf<EventType>;

/** A finding event, told apart by `type`. */
export type FindingEventView = { [K in FindingEventType]: EventOf<K> }[FindingEventType];

/** The fields an event of type K adds to the finding fields. */
export type FindingExtra<K extends FindingEventType> = Omit<EventPayloads[K], keyof FindingFields>;

/** An event of one type, told apart by `type`. */
export function isEventOf<K extends EventType>(event: { type: EventType }, type: K): event is EventOf<K> {
  return event.type === type;
}

export function isFindingEvent(event: EventView): event is FindingEventView {
  return event.type.startsWith("finding.");
}
