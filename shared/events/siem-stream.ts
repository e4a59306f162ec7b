import type { FromSchema } from "../platform/schema-type.js";
import { eventMessageSchema, type EventMessage } from "./stream.js";

/**
 * The SIEM pusher's streams. The fan-out reads `events` in group `siem` and copies each event
 * to the stream of every destination of its organization, `events:siem:<destination id>`;
 * each destination's delivery loop reads its own stream, also in group `siem`. Entries of
 * both carry the same message (EventMessage), so dead letters show the event as it is.
 */
export const SIEM_GROUP = "siem";

export function destinationStreamName(destinationId: number): string {
  return `events:siem:${destinationId}`;
}

export const destinationMessageSchema = eventMessageSchema;
export type DestinationMessage = EventMessage;

/** The synthetic event "send test event" delivers: id 0, a type of its own, never stored. */
export interface SiemTestEvent {
  id: 0;
  type: "siem.test";
  time: string;
  domain: "";
  org_id: number;
  message: string;
}

/** "Send test event" (admin API): request/reply to whichever pusher takes it. */
export const SIEM_TEST_STREAM = "siem-test";

export const siemTestSchema = {
  type: "object",
  required: ["destination_id"],
  properties: { destination_id: { type: "integer", minimum: 1 } },
  additionalProperties: false,
} as const;

export type SiemTestRequest = FromSchema<typeof siemTestSchema>;

/** What the pusher answers: the test event's id once the destination took it, or why not. */
export const siemTestReplySchema = {
  oneOf: [
    {
      type: "object",
      required: ["ok", "event_id"],
      properties: { ok: { type: "boolean", const: true }, event_id: { type: "integer" } },
      additionalProperties: false,
    },
    {
      type: "object",
      required: ["ok", "error"],
      properties: { ok: { type: "boolean", const: false }, error: { type: "string" } },
      additionalProperties: false,
    },
  ],
} as const;

export type SiemTestReply = FromSchema<typeof siemTestReplySchema>;
