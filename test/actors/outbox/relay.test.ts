import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relayOnce, startOutboxRelay } from "../../../actors/outbox/index.js";
import { insertEvent, outboxBacklog } from "../../../shared/events/db/events.js";
import { PAYLOADS } from "../../fixtures/event-payloads.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import { EVENTS_STREAM, type EventMessage } from "../../../shared/events/stream.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let orgId: number;

beforeAll(async () => {
  gw = await startTestGateway("outbox");
  const org = await gw.admin("POST", "/orgs", { name: "Outbox", plan: "enterprise" });
  orgId = org.body.org.id;
});
afterAll(async () => {
  await gw?.stop();
});

async function streamEvents(): Promise<EventMessage[]> {
  const entries = await gw.ctx.redis.xrange(gw.ctx.keys.stream(EVENTS_STREAM), "-", "+");
  return entries.map(([, fields]) => JSON.parse(fields[fields.indexOf("data") + 1]) as EventMessage);
}

async function writeEvents(n: number, domain: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await insertEvent(gw.ctx.db, {
        orgId,
        type: "scan.completed",
        timeMs: gw.ctx.clock.now(),
        domain,
        payload: { kind: "web", grade: "A", score: 90, fail_count: i },
      }),
    );
  }
  return ids;
}

describe("outbox relay", () => {
  it("publishes every committed event once, in its public form, with two relays racing", async () => {
    const ids = await writeEvents(1200, "race.example");
    const [a, b] = await Promise.all([relayOnce(gw.ctx, 100), relayOnce(gw.ctx, 100)]);
    expect(a + b).toBe(1200);
    expect(await outboxBacklog(gw.ctx.db)).toBe(0);
    const published = (await streamEvents()).filter((m) => m.event.domain === "race.example");
    expect(published.map((m) => m.event.id).sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(published.map((m) => m.event.id)).size).toBe(1200);
    expect(published[0]).toMatchObject({
      org_id: orgId,
      event: { type: "scan.completed", domain: "race.example", kind: "web", grade: "A" },
    });
    expect(published[0].event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it("wakes on commit and publishes nothing of a rolled-back transaction", async () => {
    const relay = await startOutboxRelay(gw.ctx);
    try {
      await transaction(gw.ctx.db, async (tx) => {
        await insertEvent(tx, {
          orgId,
          type: "risk.accepted",
          timeMs: gw.ctx.clock.now(),
          domain: "rolled.example",
          payload: PAYLOADS["risk.accepted"],
        });
        throw new Error("roll back");
      }).catch(() => {});
      const [id] = await writeEvents(1, "woken.example");
      await waitFor(async () => (await streamEvents()).some((m) => m.event.id === id));
      expect((await streamEvents()).some((m) => m.event.domain === "rolled.example")).toBe(false);
    } finally {
      await relay.stop();
    }
  });

  it("survives its LISTEN connection being killed, and connections killed after it stopped", async () => {
    const kill = (where: string) =>
      gw.ctx.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ${where}`,
      );
    const relay = await startOutboxRelay(gw.ctx);
    await kill("AND query ILIKE 'LISTEN%'");
    const [id] = await writeEvents(1, "relisten.example");
    await waitFor(async () => (await streamEvents()).some((m) => m.event.id === id));
    await relay.stop();
    // A stopped relay's connection went back to the pool: an error on it now is the pool's, not the relay's.
    await kill("");
    await waitFor(async () => (await gw.ctx.db.query("SELECT 1")).rowCount === 1);
    await new Promise((resolve) => setImmediate(resolve));
    const [after] = await writeEvents(1, "after-stop.example");
    expect(after).toBeGreaterThan(id);
  });
});
