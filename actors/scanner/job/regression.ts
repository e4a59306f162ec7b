import type { StoredFinding } from "../../../shared/scans/index.js";

const RANK: Record<string, number> = { pass: 0, info: 0, warn: 1, fail: 2 };

/** One finding that got worse: its status and check result before and now (null: absent / not recorded). */
export interface FindingChange {
  readonly id: string;
  readonly status: string;
  readonly result: string | null;
  readonly previous_status: string | null;
  readonly previous_result: string | null;
}

type Comparable = Pick<StoredFinding, "id" | "status" | "result">;

/**
 * What got worse and what got better between two scans of one kind. A finding is a
 * new issue when its status is worse than before (pass → warn, warn → fail, or a
 * warn/fail finding that did not exist); resolved when it was warn/fail and is now
 * pass/info or gone. `changes` carries the check results of each new issue, so a
 * consumer tells "missing" from "weak" without parsing the summary.
 */
export function compareFindings(
  previous: readonly Comparable[],
  current: readonly Comparable[],
): { new_issues: string[]; resolved: string[]; changes: FindingChange[] } {
  const before = new Map(previous.map((f) => [f.id, f]));
  const after = new Map(current.map((f) => [f.id, RANK[f.status] ?? 0]));
  const rank = (f: Comparable | undefined) => (f ? (RANK[f.status] ?? 0) : 0);
  const worse = current.filter((f) => rank(f) > rank(before.get(f.id)));
  const resolved = previous.filter((f) => rank(f) > 0 && (after.get(f.id) ?? 0) === 0).map((f) => f.id);
  const changes = worse.map((f) => {
    const old = before.get(f.id);
    return { id: f.id, status: f.status, result: f.result, previous_status: old?.status ?? null, previous_result: old?.result ?? null };
  });
  return { new_issues: worse.map((f) => f.id), resolved, changes };
}
