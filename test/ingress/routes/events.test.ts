import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneEvents, startRetention } from "../../../actors/siem/retention.js";
import { EVENT_TYPES, insertEvent, type EventType } from "../../../shared/events/db/events.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import { FINDING, PAYLOADS } from "../../fixtures/event-payloads.js";
import { parseRfc5424 } from "../../fixtures/siem/rfc5424.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { makeKey, makeOrg, verifyDomain } from "./verify-fixtures.js";

let gw: TestGateway;
let orgId: number;
let otherOrg: number;
let serverKey: string;
let clientKey: string;

const WARNING = ["scan.regression", "risk.expired", "finding.reopened", "finding.overdue", "finding.escalated"];

const feed = (query: Record<string, string>) => gw.call("/api/v1/events.php", { query: { key: serverKey, ...query } });
// The helper parses a one-line answer as JSON: take it back to its text.
const lines = (body: unknown) => (typeof body === "string" ? body : JSON.stringify(body)).split("\n").filter((l) => l !== "");

function add(org: number, type: EventType, domain = "example.com", timeMs = gw.ctx.clock.now()) {
  return insertEvent(gw.ctx.db, { orgId: org, type, timeMs, domain, payload: PAYLOADS[type] });
}

beforeAll(async () => {
  gw = await startTestGateway("events");
  orgId = await makeOrg(gw, { plan: "enterprise" });
  otherOrg = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, "example.com");
  serverKey = (await makeKey(gw, orgId, { name: "SIEM", kind: "server", domain: undefined, rate_per_minute: 100_000 })).key;
  clientKey = (await makeKey(gw, orgId, { name: "Site", kind: "client" })).key;
});
afterAll(async () => {
  await gw?.stop();
});

describe("events.php", () => {
  it("ndjson: every type with id, type, time, domain and its fields, cursor headers", async () => {
    const since = String(await add(orgId, "scan.completed"));
    for (const type of EVENT_TYPES) await add(orgId, type, "shop.example.com");
    await add(otherOrg, "scan.completed", "other.example");
    const res = await feed({ since });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const events = lines(res.body).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => e.type)).toEqual([...EVENT_TYPES]);
    for (const event of events) {
      expect(event).toMatchObject({ id: expect.any(Number), domain: "shop.example.com", ...PAYLOADS[event.type as EventType] });
      expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(res.headers.get("x-next-cursor")).toBe(String(events[events.length - 1].id));
    expect(res.headers.get("x-has-more")).toBe("0");
    const typed = await feed({ since, type: "finding.overdue" });
    expect(lines(typed.body).map((l) => JSON.parse(l).type)).toEqual(["finding.overdue"]);
  });

  it("syslog: RFC 5424 lines, warning for the named types, escaped structured data, the event as MSG", async () => {
    const since = String(await add(orgId, "scan.completed"));
    for (const type of EVENT_TYPES) await add(orgId, type, "shop.example.com");
    const res = await feed({ since, format: "syslog" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const parsed = lines(res.body).map(parseRfc5424);
    expect(parsed.map((p) => p.msgId)).toEqual([...EVENT_TYPES]);
    for (const p of parsed) {
      expect(p.facility).toBe(10);
      expect(p.severity).toBe(WARNING.includes(p.msgId) ? 4 : p.severity);
      if (!WARNING.includes(p.msgId)) expect([5, 6]).toContain(p.severity);
      expect(p).toMatchObject({ version: 1, hostname: "127.0.0.1", appName: "access-gateway", procId: "-" });
      const event = JSON.parse(p.msg) as Record<string, unknown>;
      expect(p.sd[0].params).toMatchObject({ event_id: String(event.id), domain: "shop.example.com" });
      expect(event.type).toBe(p.msgId);
    }
    // Non-ASCII is escaped in MSG: the line is pure ASCII.
    expect(/^[\x20-\x7e\n]*$/.test(String(res.body))).toBe(true);
    const changed = parsed.find((p) => p.msgId === "finding.status_changed");
    expect(JSON.parse(changed?.msg ?? "{}").by).toBe("Zoë");
    expect(res.headers.get("x-next-cursor")).toBe(parsed[parsed.length - 1].sd[0].params.event_id);
  });

  it('escapes ", \\ and ] in structured-data values (RFC 5424 6.3.3)', async () => {
    const since = String(await add(orgId, "scan.completed"));
    await insertEvent(gw.ctx.db, {
      orgId,
      type: "finding.overdue",
      timeMs: gw.ctx.clock.now(),
      domain: "a.example",
      payload: { ...FINDING, finding_key: 'web:x"]\\y', days_overdue: 1 },
    });
    const res = await feed({ since, format: "syslog" });
    const line = lines(res.body)[0];
    expect(line).toContain('finding_key="web:x\\"\\]\\\\y"');
    expect(parseRfc5424(line).sd[0].params.finding_key).toBe('web:x"]\\y');
  });

  it("since past the end: nothing, the same cursor, no more", async () => {
    const res = await feed({ since: "9000000000000" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    expect(res.headers.get("x-next-cursor")).toBe("9000000000000");
    expect(res.headers.get("x-has-more")).toBe("0");
  });

  it("pages with limit and X-Has-More", async () => {
    const first = await add(orgId, "risk.accepted", "page.example");
    for (let i = 0; i < 4; i++) await add(orgId, "risk.accepted", "page.example");
    const page = await feed({ since: String(first - 1), limit: "3" });
    expect(lines(page.body)).toHaveLength(3);
    expect(page.headers.get("x-has-more")).toBe("1");
    const rest = await feed({ since: page.headers.get("x-next-cursor") ?? "", limit: "3" });
    expect(lines(rest.body).map((l) => JSON.parse(l).id)).toEqual([first + 3, first + 4].filter((id) => id <= first + 4));
    expect(rest.headers.get("x-has-more")).toBe("0");
  });

  it("a client following the cursor gets every event exactly once, in order, while writers commit concurrently", async () => {
    const start = String(await add(orgId, "scan.completed", "race.example"));
    const written: number[] = [];
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; i < 40; i++) {
        await transaction(gw.ctx.db, async (tx) => {
          written.push(
            await insertEvent(tx, {
              orgId,
              type: "scan.completed",
              timeMs: gw.ctx.clock.now(),
              domain: "race.example",
              payload: { kind: "web", grade: "A", score: w, fail_count: i },
            }),
          );
          // Hold the transaction open a moment after the id was drawn: commits arrive late.
          if (i % 3 === w % 3) await tx.query("SELECT pg_sleep(0.002)");
        });
        // Another organization's writes interleave their ids.
        if (i % 10 === 0) await add(otherOrg, "scan.completed", "noise.example");
      }
    };
    const received: number[] = [];
    let cursor = start;
    let pages = 0;
    const reader = async () => {
      for (;;) {
        const done = !writing;
        const res = await feed({ since: cursor, limit: "7" });
        expect(res.status).toBe(200);
        received.push(...lines(res.body).map((l) => JSON.parse(l).id as number));
        cursor = res.headers.get("x-next-cursor") ?? cursor;
        pages += 1;
        if (done && res.headers.get("x-has-more") === "0") return;
      }
    };
    const reading = reader();
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    writing = false;
    await reading;
    const mine = received.filter((id) => written.includes(id));
    expect(received).toEqual(mine);
    expect(received).toEqual([...written].sort((a, b) => a - b));
    expect(new Set(received).size).toBe(320);
    expect(pages).toBeGreaterThan(20);
  });

  describe("refusals", () => {
    it.each([
      [{ limit: "0" }, "bad_limit"],
      [{ limit: "1001" }, "bad_limit"],
      [{ limit: "ten" }, "bad_limit"],
      [{ limit: "-5" }, "bad_limit"],
      [{ limit: "2.5" }, "bad_limit"],
      [{ since: "x" }, "bad_since"],
      [{ since: "-1" }, "bad_since"],
      [{ since: "99999999999999999999" }, "bad_since"],
      [{ type: "scan.started" }, "unknown_type"],
      [{ format: "xml" }, "bad_format"],
    ])("%j → 400 %s, with the cursor headers", async (query, reason) => {
      const res = await feed(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ok: false, reason, message: expect.any(String) });
      expect(res.headers.get("x-has-more")).toBe("0");
      expect(res.headers.get("x-next-cursor")).toMatch(/^\d+$/);
    });

    it("a client key is refused with server_key_required; no key with missing_key", async () => {
      const res = await gw.call("/api/v1/events.php", { query: { key: clientKey, domain: "example.com" } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ ok: false, reason: "server_key_required", message: expect.any(String) });
      const none = await gw.call("/api/v1/events.php", { method: "POST", body: { since: 0 } });
      expect(none.body).toEqual({ ok: false, reason: "missing_key", message: expect.any(String) });
    });

    it("accepts JSON numbers by POST", async () => {
      const res = await gw.call("/api/v1/events.php", { method: "POST", body: { key: serverKey, since: 0, limit: 1 } });
      expect(res.status).toBe(200);
      expect(lines(res.body)).toHaveLength(1);
    });
  });

  describe("retention", () => {
    it("removes only events older than 90 days, in batches", async () => {
      const now = gw.ctx.clock.now();
      const day = 86_400_000;
      const old = await Promise.all([91, 95, 200].map((d) => add(orgId, "risk.expired", "old.example", now - d * day)));
      const kept = await add(orgId, "risk.expired", "old.example", now - 89 * day);
      const deleted = await pruneEvents(gw.ctx.db, now, 2);
      expect(deleted).toBeGreaterThanOrEqual(3);
      const { rows } = await gw.ctx.db.query<{ id: number }>("SELECT id FROM events WHERE domain = 'old.example'");
      expect(rows.map((r) => r.id)).toEqual([kept]);
      expect(old.every((id) => !rows.some((r) => r.id === id))).toBe(true);
    });

    it("runs on the shared clock: advancing it 91 days expires today's events", async () => {
      const retention = startRetention({ db: gw.ctx.db, clock: gw.ctx.clock, logger: gw.ctx.logger });
      try {
        const id = await add(orgId, "risk.expiring", "clock.example");
        const exists = async () => (await gw.ctx.db.query("SELECT 1 FROM events WHERE id = $1", [id])).rowCount === 1;
        expect(await exists()).toBe(true);
        const moved = await gw.admin("POST", "/clock", { advance_s: 91 * 86_400 });
        expect(moved.status).toBe(200);
        await waitFor(async () => !(await exists()));
        const fresh = await add(orgId, "risk.expiring", "clock.example");
        expect((await gw.ctx.db.query("SELECT 1 FROM events WHERE id = $1", [fresh])).rowCount).toBe(1);
      } finally {
        await retention.stop();
      }
    });
  });
});
