import type { Queryable } from "../../platform/db/pool.js";

/** Stores one single-finding re-check; a redelivered job (same job id) stores nothing twice. */
export async function insertRecheck(
  db: Queryable,
  recheck: {
    orgId: number;
    domain: string;
    findingKey: string;
    status: string;
    summary: string;
    detail: string;
    evidence: string;
    jobId: string;
    atMs: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO finding_rechecks (org_id, domain, finding_key, status, summary, detail, evidence, job_id, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0)) ON CONFLICT (job_id) DO NOTHING`,
    [
      recheck.orgId,
      recheck.domain,
      recheck.findingKey,
      recheck.status,
      recheck.summary,
      recheck.detail,
      recheck.evidence,
      recheck.jobId,
      recheck.atMs,
    ],
  );
}
