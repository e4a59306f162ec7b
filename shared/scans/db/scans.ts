import type { Queryable } from "../../platform/db/pool.js";

export type ScanKind = "web" | "dns";

export interface StoredFinding {
  id: string;
  group: string;
  label: string;
  status: string;
  summary: string;
  detail: string;
  evidence: string;
  /** The check result the score was keyed on; null for findings stored before it was recorded. */
  result: string | null;
}

export interface ScanRow {
  id: number;
  org_id: number;
  domain: string;
  kind: ScanKind | "active";
  grade: string;
  score: number;
  fail_count: number;
  warn_count: number;
  algorithm: string;
  trigger: string;
  job_id: string | null;
  started_at: Date;
  completed_at: Date;
}

export interface SectionInput {
  grade: string;
  score: number;
  fail_count: number;
  warn_count: number;
  findings: readonly StoredFinding[];
}

/**
 * Stores one section of a scan with its findings. A (job_id, kind) pair is unique, so a
 * redelivered scan job stores nothing twice: it returns the scan stored the first time.
 */
export async function insertScan(
  db: Queryable,
  scan: {
    orgId: number;
    domain: string;
    kind: ScanKind;
    section: SectionInput;
    algorithm: string;
    trigger: string;
    jobId: string;
    startedMs: number;
    completedMs: number;
  },
): Promise<{ scan: ScanRow; created: boolean }> {
  const { rows } = await db.query<ScanRow>(
    `INSERT INTO scans (org_id, domain, kind, grade, score, fail_count, warn_count, algorithm, trigger, job_id, started_at, completed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, to_timestamp($11 / 1000.0), to_timestamp($12 / 1000.0))
     ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING RETURNING *`,
    [
      scan.orgId,
      scan.domain,
      scan.kind,
      scan.section.grade,
      scan.section.score,
      scan.section.fail_count,
      scan.section.warn_count,
      scan.algorithm,
      scan.trigger,
      scan.jobId,
      scan.startedMs,
      scan.completedMs,
    ],
  );
  if (!rows[0]) {
    const existing = await db.query<ScanRow>("SELECT * FROM scans WHERE job_id = $1 AND kind = $2", [scan.jobId, scan.kind]);
    return { scan: normalize(existing.rows[0]), created: false };
  }
  const findings = scan.section.findings;
  if (findings.length > 0) {
    await db.query(
      `INSERT INTO findings (scan_id, finding_key, grp, label, status, summary, detail, evidence, result, position)
       SELECT $1, f.id, f.grp, f.label, f.status, f.summary, f.detail, f.evidence, f.result, f.position
       FROM jsonb_to_recordset($2::jsonb) AS f(id text, grp text, label text, status text, summary text, detail text, evidence text, result text, position int)
       ON CONFLICT DO NOTHING`,
      [rows[0].id, JSON.stringify(findings.map((f, i) => ({ ...f, grp: f.group, position: i })))],
    );
  }
  return { scan: normalize(rows[0]), created: true };
}

function normalize(row: ScanRow): ScanRow {
  return { ...row, score: Number(row.score) };
}

export async function findingsOf(db: Queryable, scanId: number): Promise<StoredFinding[]> {
  const { rows } = await db.query<StoredFinding & { grp: string }>(
    `SELECT finding_key AS id, grp, label, status, summary, detail, evidence, result FROM findings WHERE scan_id = $1 ORDER BY position`,
    [scanId],
  );
  return rows.map(({ grp, ...f }) => ({ ...f, group: grp }));
}

/** The newest stored scan of each kind for one domain (null when never scanned). */
export async function latestScans(db: Queryable, orgId: number, domain: string): Promise<Record<ScanKind, ScanRow | null>> {
  const { rows } = await db.query<ScanRow>(
    `SELECT DISTINCT ON (kind) * FROM scans WHERE org_id = $1 AND domain = $2 AND kind IN ('web', 'dns')
     ORDER BY kind, completed_at DESC, id DESC`,
    [orgId, domain],
  );
  const byKind: Record<ScanKind, ScanRow | null> = { web: null, dns: null };
  for (const row of rows) byKind[row.kind as ScanKind] = normalize(row);
  return byKind;
}

/** The scan of a kind stored just before `scanId` (for regression detection). */
export async function previousScan(db: Queryable, orgId: number, domain: string, kind: ScanKind, scanId: number): Promise<ScanRow | null> {
  const { rows } = await db.query<ScanRow>(
    `SELECT * FROM scans WHERE org_id = $1 AND domain = $2 AND kind = $3 AND id < $4 ORDER BY id DESC LIMIT 1`,
    [orgId, domain, kind, scanId],
  );
  return rows[0] ? normalize(rows[0]) : null;
}

/** Latest grade per kind for many domains, in one query. */
export async function latestGrades(
  db: Queryable,
  orgId: number,
  domains: string[],
): Promise<Map<string, Partial<Record<string, { grade: string; score: number; at: Date }>>>> {
  const { rows } = await db.query<{ domain: string; kind: string; grade: string; score: number; completed_at: Date }>(
    `SELECT DISTINCT ON (domain, kind) domain, kind, grade, score, completed_at FROM scans
     WHERE org_id = $1 AND domain = ANY($2) ORDER BY domain, kind, completed_at DESC, id DESC`,
    [orgId, domains],
  );
  const out = new Map<string, Partial<Record<string, { grade: string; score: number; at: Date }>>>();
  for (const row of rows) {
    const entry = out.get(row.domain) ?? {};
    entry[row.kind] = { grade: row.grade, score: Number(row.score), at: row.completed_at };
    out.set(row.domain, entry);
  }
  return out;
}

export async function scanHistory(db: Queryable, orgId: number, domain: string, limit = 500): Promise<ScanRow[]> {
  const { rows } = await db.query<ScanRow>(
    `SELECT * FROM (SELECT * FROM scans WHERE org_id = $1 AND domain = $2 ORDER BY completed_at DESC, id DESC LIMIT $3) s
     ORDER BY completed_at, id`,
    [orgId, domain, limit],
  );
  return rows.map(normalize);
}

export interface AckRow {
  id: number;
  org_id: number;
  domain: string;
  finding_key: string;
  note: string;
  acked_by: string | null;
  acked_at: Date;
  expires_at: Date | null;
  released_at: Date | null;
}

/** The current (unreleased) risk acceptances of one domain, expired ones included. */
export async function acknowledgementsOf(db: Queryable, orgId: number, domain: string): Promise<Map<string, AckRow>> {
  const { rows } = await db.query<AckRow>("SELECT * FROM acknowledgements WHERE org_id = $1 AND domain = $2 AND released_at IS NULL", [
    orgId,
    domain,
  ]);
  return new Map(rows.map((r) => [r.finding_key, r]));
}

export async function scanById(db: Queryable, id: number): Promise<ScanRow | null> {
  const { rows } = await db.query<ScanRow>("SELECT * FROM scans WHERE id = $1", [id]);
  return rows[0] ? normalize(rows[0]) : null;
}

/** Whether a scan job's sections are already stored (a redelivered job). */
export async function jobStored(db: Queryable, jobId: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM scans WHERE job_id = $1 LIMIT 1", [jobId]);
  return rows.length > 0;
}
