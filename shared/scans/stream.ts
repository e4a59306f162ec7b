/** A scan job: published by `POST scan.php` (request/reply) and, later, by the monitor. */
export interface ScanJob {
  job_id: string;
  org_id: number;
  domain: string;
  /** Who asked: `api` (scan.php), `monitor`, `recheck`. */
  trigger: string;
  /** With trigger `recheck`: re-run this one finding's check only (POST assignments.php recheck=1). */
  finding_key?: string;
}

export const SCAN_STREAM = "scan";

export const scanJobSchema = {
  type: "object",
  required: ["job_id", "org_id", "domain", "trigger"],
  properties: {
    job_id: { type: "string", minLength: 8, maxLength: 64 },
    org_id: { type: "integer", minimum: 1 },
    domain: { type: "string", minLength: 1, maxLength: 253 },
    trigger: { type: "string", enum: ["api", "monitor", "recheck"] },
    finding_key: { type: "string", pattern: "^[a-z0-9_-]{1,32}:[a-z0-9_.-]{1,64}$" },
  },
  additionalProperties: false,
} as const;

/** What the scanner answers to a waiting scan.php request. */
export type ScanReply = { ok: true; scans: { web: number; dns: number } } | { ok: false; error: string };

/** What the scanner answers to a re-check of one finding. */
export type RecheckReply =
  | { ok: true; finding: { id: string; status: string; summary: string; detail: string; evidence: string } }
  | { ok: false; error: string };
