/**
 * Every finding carries `result` from the check through the database to the answer and
 * into regression events (docs/scan.md), on the real PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanHandler, type ScanSections } from "../../../../actors/scanner/job/handler.js";
import type { ScanJob } from "../../../../shared/scans/stream.js";
import { defaultScanOptions } from "../../../../shared/platform/net/outbound/options.js";
import { evaluateDns, evaluateWeb } from "../../../../actors/scanner/scan.js";
import { ALGORITHM_VERSION } from "../../../../actors/scanner/grading.js";
import type { Helpers } from "../../../../actors/runtime/index.js";
import { manualClock } from "../../../../shared/platform/clock.js";
import type { Pool } from "../../../../shared/platform/db/pool.js";
import { insertOrg } from "../../../../shared/accounts/db/orgs.js";
import { findingsOf, latestScans } from "../../../../shared/scans/db/scans.js";
import { silentLogger } from "../../../../shared/platform/log.js";
import { sectionView } from "../../../../ingress/routes/scan-view.js";
import { createTestDatabase } from "../../../helpers/database.js";
import { dnsWith, NOW, webWithPage } from "../builders.js";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orgId: number;
const clock = manualClock(NOW);

beforeAll(async () => {
  db = await createTestDatabase("scanstore");
  orgId = Number((await insertOrg(db.pool, { name: "o", plan: "professional", fixTargetDays: 30, subscription: "active", nowMs: NOW })).id);
});
afterAll(async () => db?.drop());

function helpers(): Helpers<Pool> {
  return { db: db.pool, clock, logger: silentLogger(), reply: async () => {} } as unknown as Helpers<Pool>;
}

async function runJob(jobId: string, headers: readonly (readonly [string, string])[]) {
  const result: ScanSections = { algorithm: ALGORITHM_VERSION, dns: evaluateDns(dnsWith({})), web: evaluateWeb(webWithPage(headers)) };
  const job: ScanJob = { job_id: jobId, org_id: orgId, domain: "example.test", trigger: "api" };
  await scanHandler(async () => result, defaultScanOptions({}))(job, helpers());
  clock.advance(1000);
  return result;
}

describe("finding result", () => {
  it("is stored with every finding and returned in the answer", async () => {
    const result = await runJob("j1", [["x-content-type-options", "nosniff"]]);
    const latest = await latestScans(db.pool, orgId, "example.test");
    const stored = await findingsOf(db.pool, latest.web!.id);
    expect(stored.map((f) => [f.id, f.result])).toEqual(result.web.findings.map((f) => [f.id, (f as { result: string }).result]));
    const view = sectionView(latest.web!, stored, new Map(), NOW);
    const csp = view.findings.find((f) => f.id === "headers:csp");
    expect(csp).toMatchObject({ status: "fail", result: "csp-missing" });
    expect(view.findings.find((f) => f.id === "headers:content-type-options")).toMatchObject({ status: "pass", result: "nosniff-ok" });
  });

  it("regression events name the results before and after", async () => {
    await runJob("j2", [["x-content-type-options", "nosniffx"]]);
    const { rows } = await db.pool.query("SELECT payload FROM events WHERE org_id = $1 AND type = 'scan.regression'", [orgId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].payload.new_issues).toEqual(["headers:content-type-options"]);
    expect(rows[0].payload.changes).toEqual([
      {
        id: "headers:content-type-options",
        status: "fail",
        result: "nosniff-invalid",
        previous_status: "pass",
        previous_result: "nosniff-ok",
      },
    ]);
  });
});
