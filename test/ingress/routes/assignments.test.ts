import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { addMember, assignments, eventsOf, scanNow, startFakeScanner, type FakeScanner } from "../../helpers/findings.js";
import { advance, makeKey, makeOrg, verifyDomain } from "./verify-fixtures.js";

let gw: TestGateway;
let scanner: FakeScanner;
let orgId: number;
let key: string;
let clientKey: string;

const today = () => new Date(gw.ctx.clock.now()).toISOString().slice(0, 10);
const dayOffset = (days: number) => new Date(gw.ctx.clock.now() + days * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  gw = await startTestGateway("assignments");
  scanner = await startFakeScanner(gw);
  orgId = await makeOrg(gw, { plan: "professional" });
  for (const domain of ["a.test", "b.test", "noscan.test"]) await verifyDomain(gw, orgId, domain);
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "unverified.test" });
  await addMember(gw, orgId, "Alice", "alice@example.com");
  await addMember(gw, orgId, "Bob", "bob@example.com");
  key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
  clientKey = (await makeKey(gw, orgId, { name: "Site", kind: "client", domain: "a.test" })).key;
  await scanNow(gw, key, "a.test");
  await scanNow(gw, key, "b.test");
});

afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
});

describe("POST assignments.php", () => {
  it("assigns an owner: the answer, the event, the history and the activity, with the change budget's headers", async () => {
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "alice@example.com" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.assignment).toMatchObject({
      domain: "a.test",
      finding_key: "email:spf",
      finding: "SPF record",
      status: "open",
      owner: { name: "Alice", email: "alice@example.com" },
      due_at: null,
      overdue: false,
      past_target: false,
    });
    expect(typeof res.body.assignment.updated_at).toBe("string");
    expect(res.headers.get("x-ratelimit-limit")).toBe("120");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("119");
    const [event] = await eventsOf(gw, orgId, "finding.assigned");
    expect(event.domain).toBe("a.test");
    expect(event.payload).toMatchObject({
      finding_key: "email:spf",
      finding: "SPF record",
      owner: { name: "Alice", email: "alice@example.com" },
      status: "open",
      due_at: null,
      by: "Backend (API key)",
      automatic: false,
      previous_owner: null,
    });
    const { rows } = await gw.ctx.db.query(
      "SELECT via, grp, action_code FROM activity WHERE org_id = $1 AND action_code = 'finding.assigned'",
      [orgId],
    );
    expect(rows).toEqual([{ via: "api", grp: "ownership", action_code: "finding.assigned" }]);
  });

  it("takes a form body; status and due date change, the owner stays", async () => {
    const due = dayOffset(3);
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", status: "in_progress", due }, true);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.assignment).toMatchObject({ status: "in_progress", due_at: due, owner: { email: "alice@example.com" } });
    const [changed] = await eventsOf(gw, orgId, "finding.status_changed");
    expect(changed.payload).toMatchObject({
      from: "open",
      status: "in_progress",
      by: "Backend (API key)",
      due_at: due,
      finding_key: "email:spf",
    });
  });

  it("an empty owner means nobody; the event names the previous owner; an empty due clears it", async () => {
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", owner: "", due: "" });
    expect(res.status).toBe(200);
    expect(res.body.assignment).toMatchObject({ owner: null, due_at: null, status: "in_progress" });
    const assigned = await eventsOf(gw, orgId, "finding.assigned");
    expect(assigned.at(-1)?.payload).toMatchObject({ owner: null, previous_owner: { email: "alice@example.com" } });
  });

  it.each([
    [{ finding_key: "email:spf" }, 400, "missing_for_domain"],
    [{ for_domain: "unverified.test", finding_key: "email:spf" }, 403, "domain_not_verified"],
    [{ for_domain: "elsewhere.test", finding_key: "email:spf" }, 403, "domain_not_verified"],
    [{ for_domain: "a.test", finding_key: "nocolon" }, 400, "bad_finding_key"],
    [{ for_domain: "a.test", finding_key: "../../etc:passwd" }, 400, "bad_finding_key"],
    [{ for_domain: "a.test" }, 400, "bad_finding_key"],
    [{ for_domain: "noscan.test", finding_key: "email:spf" }, 404, "unknown_domain"],
    [{ for_domain: "a.test", finding_key: "email:never" }, 404, "unknown_finding"],
    [{ for_domain: "a.test", finding_key: "email:spf", owner: "mallory@example.com" }, 400, "unknown_owner"],
    [{ for_domain: "a.test", finding_key: "email:spf", status: "closed" }, 400, "unknown_status"],
    [{ for_domain: "a.test", finding_key: "email:spf", due: "2030-02-30" }, 400, "bad_due"],
    [{ for_domain: "a.test", finding_key: "email:spf", due: "tomorrow" }, 400, "bad_due"],
    [{ for_domain: "a.test", finding_key: "email:spf", due: "2001-01-01" }, 400, "due_in_past"],
  ])("refuses %j with %i %s, without spending the change budget", async (params, status, reason) => {
    const before = Number((await assignments(gw, "GET", { key })).headers.get("x-ratelimit-remaining"));
    const res = await assignments(gw, "POST", { key, ...(params as Record<string, string>) });
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toEqual({ ok: false, reason, message: expect.any(String) });
    expect(res.headers.get("x-ratelimit-limit")).toBe("120");
    expect(Number(res.headers.get("x-ratelimit-remaining"))).toBe(before);
  });

  it("yesterday is in the past and today is not", async () => {
    const past = await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "email:spf", due: dayOffset(-1) });
    expect(past.body.reason).toBe("due_in_past");
    const now = await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "email:spf", due: today() });
    expect(now.status).toBe(200);
    expect(now.body.assignment.due_at).toBe(today());
  });

  it("refuses a client key (server_key_required) and a missing key", async () => {
    const client = await assignments(gw, "POST", { key: clientKey, domain: "a.test", for_domain: "a.test", finding_key: "email:spf" });
    expect(client.status).toBe(403);
    expect(client.body.reason).toBe("server_key_required");
    const none = await assignments(gw, "POST", { for_domain: "a.test", finding_key: "email:spf" });
    expect(none.status).toBe(400);
    expect(none.body.reason).toBe("missing_key");
  });

  it("answers hostile parameters with a refusal, never a 5xx", async () => {
    const bodies: unknown[] = [
      { key, for_domain: "a.test", finding_key: "email:spf", owner: { $ne: null } },
      { key, for_domain: ["a.test"], finding_key: "email:spf" },
      { key, for_domain: "a.test", finding_key: "email:spf", status: 1 },
      { key, for_domain: "a.test", finding_key: "email:spf", due: 20300101 },
      { key, for_domain: "a.test", finding_key: "email:spf", owner: "' OR 1=1 --" },
      { key, for_domain: "a.test'; DROP TABLE assignments; --", finding_key: "email:spf" },
      { key, for_domain: "a.test", finding_key: `email:${"x".repeat(5000)}` },
      { key, for_domain: "a.test", finding_key: "email:spf", due: "9999-99-99" },
      { key, for_domain: "a.test", finding_key: "email:spf", due: "0000-01-01" },
      { key, for_domain: "a.test", finding_key: "email:spf\u0000" },
      '{"key": "broken',
    ];
    for (const body of bodies) {
      const res = await gw.call("/api/v1/assignments.php", { method: "POST", body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
      expect(res.body.ok).toBe(false);
    }
    const stillThere = await gw.ctx.db.query("SELECT count(*)::int AS n FROM assignments");
    expect(stillThere.rows[0].n).toBeGreaterThan(0);
  });

  it("refuses the 121st change of the hour with 429 assignment_rate_limited, and resets the next hour", async () => {
    const hour = Math.floor(gw.ctx.clock.nowSeconds() / 3600);
    await gw.ctx.redis.set(gw.ctx.keys.hourlyBudget("assign", orgId, hour), "119");
    const last = await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "headers:csp", status: "open" });
    expect(last.status).toBe(200);
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "headers:csp", status: "in_progress" });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ ok: false, reason: "assignment_rate_limited", message: expect.any(String) });
    expect(Number(refused.headers.get("x-ratelimit-reset"))).toBe((hour + 1) * 3600);
    await advance(gw, 3600);
    const next = await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "headers:csp", status: "in_progress" });
    expect(next.status).toBe(200);
  });
});

describe("GET assignments.php", () => {
  beforeAll(async () => {
    // a.test: email:spf unowned in_progress; b.test: email:spf due today, headers:csp in_progress.
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "headers:hsts", owner: "bob@example.com", due: dayOffset(1) });
    await assignments(gw, "POST", { key, for_domain: "b.test", finding_key: "headers:hsts", owner: "bob@example.com", due: dayOffset(5) });
    await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:dmarc", status: "done" });
    await advance(gw, 2 * 86_400);
  });

  it("lists open and in-progress by default: overdue first, then by due date, no due date last, then by key", async () => {
    const res = await assignments(gw, "GET", { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("120");
    const order = res.body.assignments.map((a: { domain: string; finding_key: string }) => `${a.domain}/${a.finding_key}`);
    expect(order).toEqual(["b.test/email:spf", "a.test/headers:hsts", "b.test/headers:hsts", "a.test/email:spf", "b.test/headers:csp"]);
    expect(res.body.count).toBe(5);
    expect(res.body.assignments[0]).toMatchObject({ overdue: true });
    expect(res.body.assignments[2]).toMatchObject({ overdue: false });
  });

  it("filters by status, domain, owner and overdue", async () => {
    const done = await assignments(gw, "GET", { key, status: "done" });
    expect(done.body.assignments.map((a: { finding_key: string }) => a.finding_key)).toEqual(["email:dmarc"]);
    expect((await assignments(gw, "GET", { key, status: "all" })).body.count).toBe(6);
    const inProgress = await assignments(gw, "GET", { key, status: "in_progress" });
    expect(inProgress.body.assignments.every((a: { status: string }) => a.status === "in_progress")).toBe(true);
    const onA = await assignments(gw, "GET", { key, for_domain: "a.test" });
    expect(onA.body.assignments.every((a: { domain: string }) => a.domain === "a.test")).toBe(true);
    expect(onA.body.count).toBe(2);
    const bobs = await assignments(gw, "GET", { key, owner: "bob@example.com" });
    expect(bobs.body.count).toBe(2);
    const overdue = await assignments(gw, "GET", { key, overdue: "1" });
    expect(overdue.body.assignments.map((a: { domain: string; finding_key: string }) => `${a.domain}/${a.finding_key}`)).toEqual([
      "b.test/email:spf",
      "a.test/headers:hsts",
    ]);
  });

  it.each([
    [{ status: "closed" }, 400, "unknown_status"],
    [{ owner: "nobody@example.com" }, 400, "unknown_owner"],
    [{ history: "1", for_domain: "a.test", finding_key: "headers:csp" }, 404, "not_found"],
    [{ history: "1", for_domain: "a.test" }, 404, "not_found"],
  ])("refuses %j with %i %s", async (params, status, reason) => {
    const res = await assignments(gw, "GET", { key, ...params });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ ok: false, reason, message: expect.any(String) });
  });

  it("answers hostile reads with a refusal or an empty list, never a 5xx", async () => {
    const queries: Record<string, string>[] = [
      { key, for_domain: "a.test' OR '1'='1" },
      { key, owner: "%" },
      { key, status: "open,done" },
      { key, history: "1", for_domain: "a.test", finding_key: "email:spf' --" },
      { key, for_domain: "\u0000" },
      { key, owner: "a\u0000@example.com" },
      { key, history: "1", for_domain: "a.test", finding_key: "email:spf\ud800" },
      { key, overdue: "yes" },
    ];
    for (const query of queries) {
      const res = await assignments(gw, "GET", query);
      expect(res.status, JSON.stringify(query)).toBeLessThan(500);
      if (res.status === 200) expect(res.body.count ?? 1).toBeGreaterThanOrEqual(0);
    }
    expect((await assignments(gw, "GET", { key, for_domain: "a.test' OR '1'='1" })).body.count).toBe(0);
    const json = await gw.call("/api/v1/assignments.php", { method: "GET", query: { key }, body: undefined });
    expect(json.status).toBe(200);
    const nested = await gw.call("/api/v1/assignments.php", { method: "POST", body: { key, history: "1", for_domain: { a: 1 } } });
    expect(nested.status).toBe(400);
    expect(nested.body.reason).toBe("bad_request");
  });

  it("past_target follows the organization's fix_target_days", async () => {
    expect((await gw.admin("PATCH", `/orgs/${orgId}`, { fix_target_days: 1 })).status).toBe(200);
    const res = await assignments(gw, "GET", { key, for_domain: "a.test" });
    expect(res.body.assignments.every((a: { past_target: boolean }) => a.past_target)).toBe(true);
    await gw.admin("PATCH", `/orgs/${orgId}`, { fix_target_days: 30 });
    const later = await assignments(gw, "GET", { key, for_domain: "a.test" });
    expect(later.body.assignments.some((a: { past_target: boolean }) => a.past_target)).toBe(false);
  });

  it("history=1 tells the story oldest first, with the notes added through the admin API", async () => {
    const note = await gw.admin("POST", `/orgs/${orgId}/assignments/a.test/email:spf/notes`, {
      who: "Alice",
      body: "Waiting on the DNS provider",
    });
    expect(note.status, JSON.stringify(note.body)).toBe(201);
    expect((await gw.admin("POST", `/orgs/${orgId}/assignments/a.test/headers:csp/notes`, { who: "A", body: "x" })).status).toBe(404);
    const res = await assignments(gw, "GET", { key, history: "1", for_domain: "a.test", finding_key: "email:spf" });
    expect(res.status).toBe(200);
    expect(res.body.assignment).toMatchObject({ domain: "a.test", finding_key: "email:spf" });
    const whats = res.body.history.map((h: { what: string }) => h.what);
    expect(whats).toEqual([
      "assigned to Alice <alice@example.com>",
      "status changed from open to in_progress",
      expect.stringMatching(/^due date set to /),
      "assigned to nobody",
      "due date cleared",
    ]);
    for (const entry of res.body.history) expect(Object.keys(entry)).toEqual(expect.arrayContaining(["time", "who", "what"]));
    expect(res.body.notes).toEqual([expect.objectContaining({ who: "Alice", body: "Waiting on the DNS provider" })]);
  });
});

describe("re-checks and reopening", () => {
  it("a passing re-check marks the finding done and stores the result; a failing one changes nothing", async () => {
    scanner.statuses.set("a.test", { "email:spf": "fail", "email:dmarc": "warn", "headers:hsts": "pass", "headers:csp": "pass" });
    const passed = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "headers:hsts", recheck: "1" });
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    expect(passed.body).toMatchObject({ ok: true, passed: true, check_status: "pass", assignment: { status: "done" } });
    expect(passed.headers.get("x-ratelimit-limit")).toBe("30");
    const job = scanner.jobs.at(-1);
    expect(job).toMatchObject({ trigger: "recheck", finding_key: "headers:hsts", domain: "a.test" });
    const stored = await gw.ctx.db.query("SELECT status FROM finding_rechecks WHERE org_id = $1 AND finding_key = 'headers:hsts'", [orgId]);
    expect(stored.rows).toEqual([{ status: "pass" }]);
    const changed = (await eventsOf(gw, orgId, "finding.status_changed")).at(-1);
    expect(changed?.payload).toMatchObject({ finding_key: "headers:hsts", from: "open", status: "done" });

    const failed = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", recheck: "1" }, true);
    expect(failed.body).toMatchObject({ passed: false, check_status: "fail", assignment: { status: "in_progress" } });
    const history = await assignments(gw, "GET", { key, history: "1", for_domain: "a.test", finding_key: "email:spf" });
    expect(history.body.history.at(-1).what).toBe("re-checked: fail");
  });

  it("the 31st re-check of the hour is refused with 429 recheck_rate_limited", async () => {
    const hour = Math.floor(gw.ctx.clock.nowSeconds() / 3600);
    await gw.ctx.redis.set(gw.ctx.keys.hourlyBudget("recheck", orgId, hour), "30");
    const res = await assignments(gw, "POST", { key, for_domain: "a.test", finding_key: "email:spf", recheck: "1" });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ ok: false, reason: "recheck_rate_limited", message: expect.any(String) });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  it("a later scan that finds a done finding failing reopens it", async () => {
    scanner.statuses.set("a.test", { "email:spf": "fail", "email:dmarc": "pass", "headers:hsts": "fail", "headers:csp": "pass" });
    await scanNow(gw, key, "a.test");
    const res = await assignments(gw, "GET", { key, history: "1", for_domain: "a.test", finding_key: "headers:hsts" });
    expect(res.body.assignment.status).toBe("open");
    expect(res.body.history.at(-1)).toMatchObject({
      who: "system",
      what: "reopened: a later scan found it failing again",
      automatic: true,
    });
    const reopened = await eventsOf(gw, orgId, "finding.reopened");
    expect(reopened).toHaveLength(1);
    expect(reopened[0].payload).toMatchObject({ finding_key: "headers:hsts", status: "open", owner: { email: "bob@example.com" } });
    // email:dmarc is done and passes: it stays done.
    const dmarc = await assignments(gw, "GET", { key, history: "1", for_domain: "a.test", finding_key: "email:dmarc" });
    expect(dmarc.body.assignment.status).toBe("done");
  });
});
