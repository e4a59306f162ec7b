import { EVENT_TYPES } from "./db/events.js";
import type { EventView } from "./payloads.js";
import type { FromSchema, SameType } from "../platform/schema-type.js";

/**
 * The `events` stream: every committed event, published by the outbox relay
 * (actors/outbox). Consumers (SIEM pusher, notifier) each read it in their own consumer
 * group. Delivery is at least once and a relay crash between XADD and its COMMIT can
 * publish an event twice under two entry ids, so consumers de-duplicate by `event.id`,
 * never by the stream entry id.
 */
export const EVENTS_STREAM = "events";

/** Entries kept on the stream (approximate MAXLEN): far above any consumer's expected lag. */
export const EVENTS_STREAM_MAX_LEN = 1_000_000;

export interface EventMessage {
  org_id: number;
  event: EventView;
}

export const eventMessageSchema = {
  type: "object",
  required: ["org_id", "event"],
  properties: {
    org_id: { type: "integer", minimum: 1 },
    event: {
      type: "object",
      required: ["id", "type", "time", "domain"],
      properties: {
        id: { type: "integer", minimum: 1 },
        type: { type: "string", enum: [...EVENT_TYPES] },
        time: { type: "string" },
        domain: { type: "string" },
      },
    },
  },
  additionalProperties: false,
} as const;

// The schema checks an event's envelope (id, type, time, domain); the fields of its type are
// held by EventPayloads where the event is written. What the schema describes is what it checks:
true satisfies SameType<
  FromSchema<typeof eventMessageSchema>,
  { org_id: number; event: Pick<EventView, "id" | "type" | "time" | "domain"> }
>;
