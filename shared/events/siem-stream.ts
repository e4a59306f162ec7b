import type { Redis } from "../platform/redis/client.js";
import type { Keys } from "../platform/redis/keys.js";
import { loadScript, runScript } from "../platform/redis/scripts.js";
import type { FromSchema } from "../platform/schema-type.js";
import type { DeadLetter } from "../platform/streams/dead-letters.js";
import { EVENTS_STREAM_MAX_LEN, eventMessageSchema, type EventMessage } from "./stream.js";

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

const appendScript = loadScript("siem-append-2.lua");

/**
 * One entry per destination, each with the highest event id its stream was ever given
 * (`hi`, siem-append-2.lua), and a late event's id kept aside: what a replay after a trim
 * needs to know (actors/siem/replay.ts).
 */
export async function appendToDestinations(
  redis: Redis,
  keys: Keys,
  ids: readonly number[],
  eventId: number,
  data: string,
  maxLen: number,
): Promise<void> {
  // Commands side by side rather than one pipeline: on a Redis Cluster the destinations'
  // streams and the registry sit on different nodes. Still one round trip.
  await Promise.all(
    ids.flatMap((id) => {
      const stream = keys.stream(destinationStreamName(id));
      // Publishers register the streams they make (shared/platform/streams/registry.ts).
      return [
        runScript(redis, appendScript, [stream, keys.streamSide(stream, "late")], [maxLen, data, eventId]),
        redis.sadd(keys.streamRegistry(), stream),
      ];
    }),
  );
}

/** The destination id of a destination's stream key, or null for any other stream. */
export function destinationOfStream(keys: Keys, stream: string): number | null {
  const prefix = keys.stream(destinationStreamName(0)).slice(0, -1);
  if (!stream.startsWith(prefix)) return null;
  const id = Number(stream.slice(prefix.length));
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/**
 * A SIEM dead letter retried (admin API, CLI): appended with the fan-out's own script, so it
 * carries `hi` and `eid` and, being below the ids already on the stream, lands in the `late`
 * set: trimmed before its loop reads it, a replay still finds it (actors/siem/replay.ts).
 * The cap is the default stream cap. A letter whose event id cannot be read goes back as
 * it is (`undefined`: the caller's plain XADD).
 */
export function siemPutBack(redis: Redis, keys: Keys): (letter: DeadLetter) => Promise<string | undefined> {
  return async (letter) => {
    let eventId: unknown;
    try {
      eventId = (JSON.parse(letter.data) as { event?: { id?: unknown } }).event?.id;
    } catch {
      return undefined;
    }
    if (typeof eventId !== "number" || !Number.isSafeInteger(eventId) || eventId < 1) return undefined;
    const late = keys.streamSide(letter.stream, "late");
    return String(await runScript(redis, appendScript, [letter.stream, late], [EVENTS_STREAM_MAX_LEN, letter.data, eventId]));
  };
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

/**
 * `org_id` is the destination's organization, the pusher's key for taking turns between
 * organizations (actors/siem/index.ts). Optional: a request published by an ingress from
 * before it was added, still in the stream while the processes are upgraded, is answered too.
 */
export const siemTestSchema = {
  type: "object",
  required: ["destination_id"],
  properties: { destination_id: { type: "integer", minimum: 1 }, org_id: { type: "integer", minimum: 1 } },
  additionalProperties: false,
} as const;

export type SiemTestRequest = FromSchema<typeof siemTestSchema>;

const admitTestScript = loadScript("siem-test-admit-1.lua");
const testDoneScript = loadScript("siem-test-done-1.lua");

/**
 * Test requests one organization may have outstanding (published, not yet handled by a
 * pusher) across the deployment; the admin route refuses more (429 `test_rate_limited`). A
 * request outlives its caller's 504: a pusher still sends it, one of the organization's at a
 * time. Without the cap, an organization testing a stalled collector faster than one per
 * time-out would fill the pushers' backlog, and every organization's test would wait behind
 * its requests again (docs/events.md, "Send test event").
 */
export const SIEM_TESTS_OUTSTANDING = 3;

/**
 * The count's safety net (siem-test-admit-1.lua): it runs out this long after the
 * organization's last admitted request. Its requests take a pusher at most a few minutes
 * (3 of them one after another, 20 s each at most, and the turns of other organizations).
 */
export const SIEM_TESTS_OUTSTANDING_TTL_MS = 5 * 60_000;

/** One more outstanding test request of the organization (the admin route, before it publishes); false at the cap. */
export async function admitSiemTest(redis: Redis, keys: Keys, orgId: number): Promise<boolean> {
  const count = await runScript(
    redis,
    admitTestScript,
    [keys.siemTestsOutstanding(orgId)],
    [SIEM_TESTS_OUTSTANDING, SIEM_TESTS_OUTSTANDING_TTL_MS],
  );
  return Number(count) > 0;
}

/** The pusher handled one of the organization's test requests (answered, or failed to): one fewer outstanding. */
export async function siemTestDone(redis: Redis, keys: Keys, orgId: number): Promise<void> {
  await runScript(redis, testDoneScript, [keys.siemTestsOutstanding(orgId)], []);
}

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
