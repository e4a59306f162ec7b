import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../../actors/index.js";
import { monitorJob } from "../../../actors/monitor/handler.js";
import { startNotifier } from "../../../actors/notifier/index.js";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import { automaticDue } from "../../../shared/findings/auto-assign.js";
import { dateOf } from "../../../shared/findings/workflow.js";
import { publish } from "../../../shared/platform/streams/envelope.js";
import { SCAN_STREAM } from "../../../shared/scans/stream.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addMember, assignments, eventsOf, scanNow, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { startSmtpSink, type SmtpSink } from "../../helpers/smtp-sink.js";
import { advance, makeKey, makeOrg, verifyDomain } from "../../ingress/routes/verify-fixtures.js";

/**
 * Automatic assignment (docs/findings.md): the organization's default owner gets the
 * failing findings nobody tracks when the scanner stores a scan, in the scan's transaction,
 * with `finding.assigned` `automatic: true` in the feed and an e-mail from the notifier.
 */

const DAY_MS = 86_400_000;
const ALICE = { name: "Alice", email: "alice@example.com" };

let gw: TestGateway;
let smtp: SmtpSink;
let scanner: FakeScanner;
let relay: RunningActor;
let notifier: RunningActor;
let orgId: number;
let otherOrg: number;
let key: string;
let firstScanMs: number;

beforeAll(async () => {
  smtp = await startSmtpSink();
  gw = await startTestGateway("autoassign", { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  scanner = await startFakeScanner(gw);
  relay = await startOutboxRelay(gw.ctx);
  notifier = await startNotifier(gw.ctx);
  orgId = await makeOrg(gw, { plan: "professional", fix_target_days: 30 });
  otherOrg = await makeOrg(gw, { plan: "professional" });
  for (const domain of ["a.test", "b.test", "c.test", "d.test"]) await verifyDomain(gw, orgId, domain);
  await addMember(gw, orgId, ALICE.name, ALICE.email);
  await addMember(gw, orgId, "Bob", "bob@example.com");
  await addMember(gw, otherOrg, "Eve", "eve@example.com");
  // Adding a member e-mails its invitation (sent before the call answers): not this file's subject.
  smtp.mails.splice(0);
  key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined, rate_per_minute: 10_000 })).key;
});

afterAll(async () => {
  await notifier?.stop();
  await relay?.stop();
  await scanner?.stop();
  await gw?.stop();
  await smtp?.stop();
});

const setDefaultOwner = (value: unknown) => gw.admin("PATCH", `/orgs/${orgId}`, { default_owner: value });
const feedOf = async (type: string) =>
  ((await gw.call("/api/v1/events.php", { query: { key, type, since: "0", limit: "1000" } })).body as string)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const listOf = async (domain: string) =>
  (await assignments(gw, "GET", { key, for_domain: domain, status: "all" })).body.assignments as Record<string, unknown>[];
const count = async (sql: string, params: unknown[]) => (await gw.ctx.db.query<{ n: number }>(sql, params)).rows[0].n;

describe("the default_owner setting (PATCH /admin/v1/orgs/:org)", () => {
  it("is a member's e-mail, shown on the organization, recorded in the activity record", async () => {
    const set = await setDefaultOwner("ALICE@example.com");
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.org.default_owner).toEqual(ALICE);
    expect((await gw.admin("GET", `/orgs/${orgId}`)).body.org.default_owner).toEqual(ALICE);
    expect((await setDefaultOwner(null)).body.org.default_owner).toBeNull();
    const { rows } = await gw.ctx.db.query(
      "SELECT grp, who, via, detail FROM activity WHERE org_id = $1 AND action_code = 'org.default_owner_set' ORDER BY id",
      [orgId],
    );
    expect(rows).toEqual([
      { grp: "settings", who: "operator", via: "admin", detail: { default_owner: ALICE.email, previous_default_owner: null } },
      { grp: "settings", who: "operator", via: "admin", detail: { default_owner: null, previous_default_owner: ALICE.email } },
    ]);
    // "" also means nobody; setting what is already set records nothing new.
    expect((await setDefaultOwner("")).body.org.default_owner).toBeNull();
    expect(
      await count("SELECT count(*)::int AS n FROM activity WHERE org_id = $1 AND action_code = 'org.default_owner_set'", [orgId]),
    ).toBe(2);
    expect((await gw.admin("POST", "/orgs", { name: "x", default_owner: ALICE.email })).body.reason).toBe("bad_default_owner");
  });

  it.each([
    ["nobody@example.com", "not a member"],
    ["eve@example.com", "a member of another organization"],
    [42, "not a string"],
    ["x".repeat(321), "too long"],
  ])("refuses %j (%s) with 400 bad_default_owner and changes nothing", async (value, _why) => {
    const res = await setDefaultOwner(value);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ ok: false, reason: "bad_default_owner" });
    expect((await gw.admin("GET", `/orgs/${orgId}`)).body.org.default_owner).toBeNull();
  });

  it("404 for an unknown organization", async () => {
    expect((await gw.admin("PATCH", "/orgs/999999", { default_owner: ALICE.email })).status).toBe(404);
  });
});

describe("automatic assignment when a scan is stored", () => {
  it("assigns nothing while the setting is unset", async () => {
    firstScanMs = gw.ctx.clock.now();
    await scanNow(gw, key, "a.test");
    expect(await listOf("a.test")).toEqual([]);
    expect(await eventsOf(gw, orgId, "finding.assigned")).toEqual([]);
  });

  it("assigns every failing finding nobody tracks to the default owner, automatic, due at the fix-time target", async () => {
    await advance(gw, 2 * 86_400);
    expect((await setDefaultOwner(ALICE.email)).status).toBe(200);
    // An accepted risk is never assigned automatically.
    const expires = new Date(gw.ctx.clock.now() + 90 * DAY_MS).toISOString();
    expect(
      (
        await gw.admin("POST", `/orgs/${orgId}/risks`, {
          domain: "a.test",
          finding_key: "email:dmarc",
          note: "vendor",
          expires_at: expires,
        })
      ).status,
    ).toBe(201);
    await scanNow(gw, key, "a.test");

    // Failing: email:spf (fail), headers:hsts (fail); email:dmarc (warn) is accepted; headers:csp passes.
    const list = await listOf("a.test");
    expect(list.map((a) => a.finding_key)).toEqual(["email:spf", "headers:hsts"]);
    // a.test was first found failing two days ago (the unset scan): the target counts from then.
    const due = dateOf(firstScanMs + 30 * DAY_MS);
    for (const a of list) expect(a).toMatchObject({ owner: ALICE, status: "open", due_at: due, past_target: false, overdue: false });

    const story = await assignments(gw, "GET", { key, for_domain: "a.test", finding_key: "email:spf", history: "1" });
    expect(story.status).toBe(200);
    expect(story.body.history.map((h: { who: string; automatic: boolean; code: string }) => [h.who, h.code, h.automatic])).toEqual([
      ["system", "finding.assigned", true],
      ["system", "finding.due_set", true],
    ]);
    expect(story.body.history[0].what).toContain("assigned to Alice <alice@example.com>");

    const feed = (await feedOf("finding.assigned")).filter((e) => e.domain === "a.test");
    expect(feed.map((e) => e.finding_key)).toEqual(["email:spf", "headers:hsts"]);
    for (const e of feed) {
      expect(e).toMatchObject({
        type: "finding.assigned",
        automatic: true,
        by: "system",
        owner: ALICE,
        status: "open",
        due_at: due,
        previous_owner: null,
      });
    }
    // Written in the scan's own transaction: after the first scan's events, before this scan's scan.completed.
    const completed = (await eventsOf(gw, orgId, "scan.completed")).filter((e) => e.domain === "a.test").map((e) => Number(e.id));
    expect(completed).toHaveLength(4);
    for (const e of feed) {
      expect(Number(e.id)).toBeGreaterThan(completed[1]);
      expect(Number(e.id)).toBeLessThan(completed[2]);
    }
    const { rows } = await gw.ctx.db.query(
      "SELECT who, via, grp, action_code FROM activity WHERE org_id = $1 AND grp = 'ownership' ORDER BY id",
      [orgId],
    );
    expect(rows).toContainEqual({ who: "system", via: "system", grp: "ownership", action_code: "finding.assigned" });
  });

  it("the notifier e-mails the owner like any assignment, saying it was automatic", async () => {
    await waitFor(() => smtp.mails.filter((m) => m.to.includes(ALICE.email)).length >= 2);
    const mail = smtp.mails.find((m) => m.data.includes("headers:hsts"));
    if (!mail) throw new Error("no e-mail about headers:hsts");
    expect(mail.to).toEqual([ALICE.email]);
    expect(mail.data).toContain("assigned to Alice");
    expect(mail.data).toContain("automatic");
    expect(smtp.mails.filter((m) => m.to.includes(ALICE.email))).toHaveLength(2);
  });

  it("a rescan, a redelivered job and a monitor scan assign nothing twice", async () => {
    const before = (await eventsOf(gw, orgId, "finding.assigned")).length;
    await scanNow(gw, key, "a.test");
    const job = scanner.jobs[scanner.jobs.length - 1];
    const seen = scanner.jobs.length;
    await publish(gw.ctx.redis, gw.ctx.keys.stream(SCAN_STREAM), job);
    await publish(gw.ctx.redis, gw.ctx.keys.stream(SCAN_STREAM), monitorJob(orgId, "a.test", gw.ctx.clock.now()));
    await waitFor(() => scanner.jobs.length >= seen + 2);
    await waitFor(async () => (await count("SELECT count(*)::int AS n FROM scans WHERE trigger = 'monitor'", [])) === 2);
    // Both jobs handled and acknowledged (the redelivered one stores nothing new to wait for).
    await waitFor(async () => {
      const pending = await gw.ctx.redis.xpending(gw.ctx.keys.stream(SCAN_STREAM), "scanner");
      return Array.isArray(pending) && Number(pending[0]) === 0;
    });
    expect((await eventsOf(gw, orgId, "finding.assigned")).length).toBe(before);
    expect(await count("SELECT count(*)::int AS n FROM assignments WHERE org_id = $1 AND domain = 'a.test'", [orgId])).toBe(2);
  });

  it("a scan stored for the monitor assigns like one through scan.php", async () => {
    await publish(gw.ctx.redis, gw.ctx.keys.stream(SCAN_STREAM), monitorJob(orgId, "b.test", gw.ctx.clock.now()));
    await waitFor(async () => (await listOf("b.test")).length === 3);
    const list = await listOf("b.test");
    // First found by this scan: due a full fix-time target from today.
    const due = dateOf(gw.ctx.clock.now() + 30 * DAY_MS);
    expect(list.map((a) => [a.finding_key, a.due_at, (a.owner as { email: string }).email])).toEqual([
      ["email:dmarc", due, ALICE.email],
      ["email:spf", due, ALICE.email],
      ["headers:hsts", due, ALICE.email],
    ]);
  });

  it("a reopened assignment without an owner goes to the default owner; one with an owner keeps it", async () => {
    // headers:hsts: nobody, done. email:spf: Bob, done. Both still fail on the next scan.
    const change = (finding_key: string, fields: Record<string, string>) =>
      assignments(gw, "POST", { key, for_domain: "b.test", finding_key, ...fields });
    expect((await change("headers:hsts", { owner: "", status: "done", due: "" })).status).toBe(200);
    expect((await change("email:spf", { owner: "bob@example.com", status: "done" })).status).toBe(200);
    const before = (await eventsOf(gw, orgId, "finding.assigned")).length;
    await scanNow(gw, key, "b.test");

    const list = await listOf("b.test");
    const hsts = list.find((a) => a.finding_key === "headers:hsts");
    expect(hsts).toMatchObject({ owner: ALICE, status: "open", due_at: dateOf(gw.ctx.clock.now() + 30 * DAY_MS) });
    expect(list.find((a) => a.finding_key === "email:spf")).toMatchObject({ owner: { email: "bob@example.com" }, status: "open" });
    const assigned = (await eventsOf(gw, orgId, "finding.assigned")).slice(before);
    expect(assigned.map((e) => [e.payload.finding_key, e.payload.automatic])).toEqual([["headers:hsts", true]]);
    const story = await assignments(gw, "GET", { key, for_domain: "b.test", finding_key: "headers:hsts", history: "1" });
    const codes = story.body.history.map((h: { code: string }) => h.code);
    expect(codes.slice(-3)).toEqual(["finding.reopened", "finding.assigned", "finding.due_set"]);
  });

  it("a removed member clears the setting: nothing is assigned, nothing breaks", async () => {
    // No admin call removes members yet; the row going (SQL, or a future call) is what the schema must survive.
    const { rows } = await gw.ctx.db.query("SELECT id FROM members WHERE org_id = $1 AND email = $2", [orgId, ALICE.email]);
    await gw.ctx.db.query("DELETE FROM members WHERE id = $1", [rows[0].id]);
    expect((await gw.admin("GET", `/orgs/${orgId}`)).body.org.default_owner).toBeNull();
    const before = (await eventsOf(gw, orgId, "finding.assigned")).length;
    await scanNow(gw, key, "c.test");
    expect(await listOf("c.test")).toEqual([]);
    expect((await eventsOf(gw, orgId, "finding.assigned")).length).toBe(before);
  });
});

describe("automaticDue", () => {
  it("is the fix-time target, never before today", () => {
    const now = Date.UTC(2030, 5, 15, 12);
    expect(automaticDue(now, 30, now)).toBe("2030-07-15");
    expect(automaticDue(now - 10 * DAY_MS, 30, now)).toBe("2030-07-05");
    expect(automaticDue(now - 40 * DAY_MS, 30, now)).toBe("2030-06-15");
  });
});
