import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAssignmentTimer } from "../../../actors/assignment-timer/index.js";
import { runTimers } from "../../../actors/assignment-timer/handler.js";
import type { RunningActor } from "../../../actors/index.js";
import { loadConfig } from "../../../shared/platform/config.js";
import { openContext, type Context } from "../../../shared/platform/context.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addMember, assignments, eventsOf, scanNow, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { advance, makeKey, makeOrg, verifyDomain } from "../../ingress/routes/verify-fixtures.js";

let gw: TestGateway;
let second: Context;
let scanner: FakeScanner;
let orgId: number;
let key: string;
const timers: RunningActor[] = [];

const DAY = 86_400;
const dayOffset = (days: number) => new Date(gw.ctx.clock.now() + days * DAY * 1000).toISOString().slice(0, 10);
const count = async (type: string) => (await eventsOf(gw, orgId, type)).length;

beforeAll(async () => {
  gw = await startTestGateway("timers");
  // A second process's connections: its own pool and Redis, the same shared test clock.
  second = await openContext(loadConfig(gw.env), "timer-2", { logger: silentLogger() });
  scanner = await startFakeScanner(gw);
  orgId = await makeOrg(gw, { plan: "professional", fix_target_days: 10 });
  await verifyDomain(gw, orgId, "a.test");
  await addMember(gw, orgId, "Alice", "alice@example.com");
  key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
  await scanNow(gw, key, "a.test");
});

afterAll(async () => {
  for (const timer of timers) await timer.stop();
  await scanner?.stop();
  await second?.close();
  await gw?.stop();
});

describe("assignment-timer", () => {
  it("two runs side by side emit a crossing once", async () => {
    const due = dayOffset(0);
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:dmarc", owner: "alice@example.com", due });
    expect(res.status).toBe(200);
    await advance(gw, DAY);
    const now = gw.ctx.clock.now();
    const runs = await Promise.all([
      runTimers({ db: gw.ctx.db, nowMs: now }),
      runTimers({ db: second.db, nowMs: now }),
      runTimers({ db: gw.ctx.db, nowMs: now }),
      runTimers({ db: second.db, nowMs: now }),
    ]);
    expect(runs.reduce((sum, r) => sum + r.overdue, 0)).toBe(1);
    expect(await count("finding.overdue")).toBe(1);
    // Done findings are never overdue again; close this one so it stays out of the rest.
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:dmarc", status: "done" });
  });

  it("overdue, risk.expiring, near_target, escalated and risk.expired, each once, with two timer processes", async () => {
    timers.push(await startAssignmentTimer(gw.ctx), await startAssignmentTimer(second));
    const due = dayOffset(1);
    const set = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "alice@example.com", due });
    expect(set.status).toBe(200);
    const foundAt = Date.parse(set.body.assignment.found_at);
    const expires = new Date(gw.ctx.clock.now() + 10 * DAY * 1000).toISOString();
    const accepted = await gw.admin("POST", `/orgs/${orgId}/risks`, {
      domain: "a.test",
      finding_key: "headers:hsts",
      note: "CDN limits",
      expires_at: expires,
    });
    expect(accepted.status).toBe(201);
    const [riskAccepted] = await eventsOf(gw, orgId, "risk.accepted");
    expect(riskAccepted.payload).toMatchObject({
      finding_key: "headers:hsts",
      finding: "Strict-Transport-Security",
      owner: null,
      status: "open",
      note: "CDN limits",
      expires_at: expires.replace(/\.\d{3}Z$/, "Z"),
    });

    await advance(gw, 2 * DAY); // day 2: the due date (day 1) has passed
    await waitFor(async () => (await count("finding.overdue")) === 2);
    expect(await count("risk.expiring")).toBe(0);

    await advance(gw, 2 * DAY); // day 4: within 7 days of the acceptance's expiry (day 10)
    await waitFor(async () => (await count("risk.expiring")) === 1);
    expect(await count("finding.near_target")).toBe(0);

    await advance(gw, 4 * DAY); // day 8: 3 days before the target (found + 10 days); 7 days overdue
    await waitFor(async () => (await count("finding.near_target")) === 1 && (await count("finding.escalated")) === 1);

    await advance(gw, 3 * DAY); // day 11: the acceptance expired
    await waitFor(async () => (await count("risk.expired")) === 1);

    for (const timer of timers.splice(0)) await timer.stop();
    expect(await count("finding.overdue")).toBe(2);
    expect(await count("finding.escalated")).toBe(1);
    expect(await count("finding.near_target")).toBe(1);
    expect(await count("risk.expiring")).toBe(1);
    expect(await count("risk.expired")).toBe(1);

    const near = (await eventsOf(gw, orgId, "finding.near_target"))[0];
    expect(near.payload).toMatchObject({
      finding_key: "email:spf",
      owner: { email: "alice@example.com" },
      due_at: due,
      target_date: new Date(foundAt + 10 * DAY * 1000).toISOString().slice(0, 10),
    });
    const escalated = (await eventsOf(gw, orgId, "finding.escalated"))[0];
    expect(escalated.payload).toMatchObject({ finding_key: "email:spf", days_overdue: 7, status: "open" });
    const expired = (await eventsOf(gw, orgId, "risk.expired"))[0];
    expect(expired.payload).toMatchObject({ finding_key: "headers:hsts", note: "CDN limits" });

    const story = await assignments(gw, "GET", { key, history: "1", for_domain: "a.test", finding_key: "email:spf" });
    const automatic = story.body.history.filter((h: { automatic: boolean }) => h.automatic).map((h: { what: string }) => h.what);
    // Near target and escalated cross on the same day and may be claimed by the two timer
    // processes, each stamping its own clock reading: their order in the story is not fixed.
    expect(automatic[0]).toBe(`overdue: due ${due}`);
    expect(automatic.slice(1).sort()).toEqual(["escalated: 7 days overdue", `near its fix-time target (${near.payload.target_date})`]);
    const activity = await gw.call("/api/v1/activity.php", { query: { key, group: "risks" } });
    expect(activity.body.activity.map((a: { action_code: string }) => a.action_code)).toEqual([
      "risk.expired",
      "risk.expiring",
      "risk.accepted",
    ]);
  });

  it("a new due date is a new crossing", async () => {
    const due = dayOffset(0);
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", due });
    expect(res.status).toBe(200);
    await advance(gw, DAY);
    const now = gw.ctx.clock.now();
    await Promise.all([runTimers({ db: gw.ctx.db, nowMs: now }), runTimers({ db: second.db, nowMs: now })]);
    expect(await count("finding.overdue")).toBe(3);
  });
});
