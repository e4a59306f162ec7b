import type { StoredFinding } from "../../../shared/db/scans.js";

const RANK: Record<string, number> = { pass: 0, info: 0, warn: 1, fail: 2 };

/**
 * What got worse and what got better between two scans of one kind. A finding is a
 * new issue when its status is worse than before (pass → warn, warn → fail, or a
 * warn/fail finding that did not exist); resolved when it was warn/fail and is now
 * pass/info or gone.
 */
export function compareFindings(
  previous: readonly StoredFinding[],
  current: readonly StoredFinding[],
): { new_issues: string[]; resolved: string[] } {
  const before = new Map(previous.map((f) => [f.id, RANK[f.status] ?? 0]));
  const after = new Map(current.map((f) => [f.id, RANK[f.status] ?? 0]));
  const newIssues = current.filter((f) => (RANK[f.status] ?? 0) > (before.get(f.id) ?? 0)).map((f) => f.id);
  const resolved = previous.filter((f) => (RANK[f.status] ?? 0) > 0 && (after.get(f.id) ?? 0) === 0).map((f) => f.id);
  return { new_issues: newIssues, resolved };
}
