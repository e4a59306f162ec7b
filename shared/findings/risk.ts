import { findAssignment, latestFinding } from "./db/assignments.js";
import type { Queryable } from "../platform/db/pool.js";
import { findingFields, type FindingFields } from "./workflow.js";

/**
 * The finding fields of a risk event. An assignment gives them all; a finding nobody
 * tracks yet has its label from the latest scans, no owner, no due date, status `open`.
 */
export async function riskFindingFields(
  db: Queryable,
  orgId: number,
  domain: string,
  findingKey: string,
): Promise<{ fields: FindingFields; assignmentId: number | null }> {
  const row = await findAssignment(db, orgId, domain, findingKey);
  if (row) return { fields: findingFields(row), assignmentId: row.id };
  const latest = await latestFinding(db, orgId, domain, findingKey);
  return {
    fields: { finding_key: findingKey, finding: latest?.label ?? findingKey, owner: null, status: "open", due_at: null },
    assignmentId: null,
  };
}
