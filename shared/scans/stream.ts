import type { FromSchema } from "../platform/schema-type.js";

export const SCAN_STREAM = "scan";

/** A scan job: published by `POST scan.php` and `POST assignments.php recheck=1` (request/reply), and by the monitor. */
export const scanJobSchema = {
  type: "object",
  required: ["job_id", "org_id", "domain", "trigger"],
  properties: {
    job_id: { type: "string", minLength: 8, maxLength: 64 },
    org_id: { type: "integer", minimum: 1 },
    domain: { type: "string", minLength: 1, maxLength: 253 },
    // Who asked: `api` (scan.php), `monitor`, `recheck`.
    trigger: { type: "string", enum: ["api", "monitor", "recheck"] },
    // With trigger `recheck`: re-run this one finding's check only.
    finding_key: { type: "string", pattern: "^[a-z0-9_-]{1,32}:[a-z0-9_.-]{1,64}$" },
  },
  additionalProperties: false,
} as const;

export type ScanJob = FromSchema<typeof scanJobSchema>;
export type ScanTrigger = ScanJob["trigger"];

/** A failed scan or re-check: the scanner's reason in `error`. */
const failedReplySchema = {
  type: "object",
  required: ["ok", "error"],
  properties: { ok: { type: "boolean", const: false }, error: { type: "string" } },
  additionalProperties: false,
} as const;

/** What the scanner answers to a waiting scan.php request: the ids of the stored web and DNS scans. */
export const scanReplySchema = {
  oneOf: [
    {
      type: "object",
      required: ["ok", "scans"],
      properties: {
        ok: { type: "boolean", const: true },
        scans: {
          type: "object",
          required: ["web", "dns"],
          properties: { web: { type: "integer", minimum: 1 }, dns: { type: "integer", minimum: 1 } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    failedReplySchema,
  ],
} as const;

export type ScanReply = FromSchema<typeof scanReplySchema>;

/** What the scanner answers to a re-check of one finding. */
export const recheckReplySchema = {
  oneOf: [
    {
      type: "object",
      required: ["ok", "finding"],
      properties: {
        ok: { type: "boolean", const: true },
        finding: {
          type: "object",
          required: ["id", "status", "summary", "detail", "evidence"],
          properties: {
            id: { type: "string" },
            status: { type: "string" },
            summary: { type: "string" },
            detail: { type: "string" },
            evidence: { type: "string" },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    failedReplySchema,
  ],
} as const;

export type RecheckReply = FromSchema<typeof recheckReplySchema>;
