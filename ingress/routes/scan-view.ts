import type { AckRow, ScanRow, StoredFinding } from "../../shared/scans/index.js";

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function findingView(finding: StoredFinding, ack: AckRow | undefined, nowMs: number) {
  const view: Record<string, unknown> = {
    id: finding.id,
    group: finding.group,
    label: finding.label,
    status: finding.status,
    summary: finding.summary,
    detail: finding.detail,
    evidence: finding.evidence,
    result: finding.result,
    acknowledged: false,
  };
  if (ack) {
    const expired = ack.expires_at !== null && ack.expires_at.getTime() <= nowMs;
    view.acknowledged = !expired;
    view.acknowledgement = {
      note: ack.note,
      acked_at: iso(ack.acked_at),
      expires_at: ack.expires_at ? iso(ack.expires_at) : null,
      expired,
    };
  }
  return view;
}

export function sectionView(scan: ScanRow, findings: StoredFinding[], acks: Map<string, AckRow>, nowMs: number) {
  return {
    grade: scan.grade,
    score: scan.score,
    fail_count: scan.fail_count,
    warn_count: scan.warn_count,
    scanned_at: iso(scan.completed_at),
    algorithm: scan.algorithm,
    findings: findings.map((f) => findingView(f, acks.get(f.id), nowMs)),
  };
}

export function historyPoint(scan: ScanRow) {
  return { score: scan.score, grade: scan.grade, fail_count: scan.fail_count, at: iso(scan.completed_at) };
}
