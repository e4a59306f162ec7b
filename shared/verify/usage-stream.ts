import type { FromSchema, SameType } from "../platform/schema-type.js";

/**
 * The usage stream's message: one per run of the verify counting script
 * (shared/platform/redis/lua/verify-batch-n.lua), carrying the events of every call of that run.
 * `at` (clock ms) and `day` (UTC date of `at`) are shared by the events; identical calls
 * of one run are one event with their number `n`. An event never carries an address.
 */
export interface UsageEvent {
  org: number;
  key: number;
  /** The caller's `endpoint` label (default `verify`). */
  endpoint: string;
  /** `ok` or the refusal reason. */
  reason: string;
  /** 1 when the call counted against the organization's allowance. */
  counted: 0 | 1;
  /** Start of the allowance cycle the call counted in (clock ms). */
  cycle: number;
  /** Number of calls this event stands for (same key, endpoint, reason and counted flag). */
  n: number;
  /**
   * Present when the call recorded a new installation of the key, or was an installation's
   * first call of the minute (a sighting: the usage actor moves its last_seen_at).
   * install_status is the installation's status then; it never changes a stored status.
   */
  install?: string;
  install_status?: "approved" | "pending" | "blocked";
  /**
   * 1 when this call recorded the installation (its first call on the key), absent on a
   * sighting: an installation first recorded `pending` is announced to the owner once
   * (actors/usage/pending.ts).
   */
  install_new?: 1;
  /**
   * 1: a refund (shared/platform/redis/lua/usage-refund-3.lua). These n calls were counted `ok`
   * earlier; the service then failed to answer them (reason), so they move to that reason,
   * uncounted, and leave the cycle's count.
   */
  refund?: 1;
}

export interface UsageBatch {
  at: number;
  day: string;
  events: UsageEvent[];
}

export const usageBatchSchema = {
  type: "object",
  required: ["at", "day", "events"],
  properties: {
    at: { type: "integer", minimum: 0 },
    day: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    events: {
      type: "array",
      minItems: 1,
      maxItems: 10_000,
      items: {
        type: "object",
        required: ["org", "key", "endpoint", "reason", "counted", "cycle", "n"],
        properties: {
          org: { type: "integer", minimum: 1 },
          key: { type: "integer", minimum: 1 },
          endpoint: { type: "string", minLength: 1, maxLength: 64 },
          reason: { type: "string", pattern: "^[a-z_]{1,64}$" },
          counted: { type: "integer", enum: [0, 1] },
          cycle: { type: "integer", minimum: 0 },
          n: { type: "integer", minimum: 1 },
          install: { type: "string", minLength: 1, maxLength: 200 },
          install_status: { type: "string", enum: ["approved", "pending", "blocked"] },
          install_new: { type: "integer", enum: [1] },
          refund: { type: "integer", enum: [1] },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

// UsageBatch keeps its field comments; the compiler holds it to the schema ajv checks.
true satisfies SameType<UsageBatch, FromSchema<typeof usageBatchSchema>>;
