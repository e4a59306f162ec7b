import { EVENT_TYPES, type EventView } from "./db/events.js";

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
