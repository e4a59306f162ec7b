import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dailyUptime, insertCheck, SERVICE_KEYS, upsertService, type ServiceKey } from "../../../shared/status/db/status.js";
import { buildSnapshot, type DayBar } from "../../../shared/status/document.js";
import { backfillDailyRollups } from "../../../actors/prober/handler.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

const DAY_MS = 86_400_000;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway("statusrollup");
  for (const service of SERVICE_KEYS) await upsertService(gw.ctx.db, service, service, null, gw.ctx.clock.now());
});
afterAll(async () => {
  await gw?.stop();
});

async function bars(): Promise<Record<ServiceKey, DayBar[]>> {
  const snapshot = await buildSnapshot(gw.ctx.db, {
    nowMs: gw.ctx.clock.now(),
    siteUrl: gw.url,
    pageName: "x",
    probeIntervalS: 60,
    slowMs: 2000,
  });
  expect(snapshot.bars).not.toBeNull();
  return snapshot.bars as Record<ServiceKey, DayBar[]>;
}

/** The bars the raw checks give: the same 90 days, counted from `probes`. */
async function rawBars(): Promise<Record<ServiceKey, DayBar[]>> {
  const today = Math.floor(gw.ctx.clock.now() / DAY_MS) * DAY_MS;
  const from = today - 89 * DAY_MS;
  const rows = await dailyUptime(gw.ctx.db, from, today + DAY_MS);
  return Object.fromEntries(
    SERVICE_KEYS.map((service) => [
      service,
      Array.from({ length: 90 }, (_, i) => {
        const date = new Date(from + i * DAY_MS).toISOString().slice(0, 10);
        const row = rows.find((r) => r.service === service && r.day === date);
        const checks = row?.checks ?? 0;
        return { date, checks, uptime_pct: checks === 0 ? null : Math.round(((row?.up ?? 0) / checks) * 100_000) / 1000 };
      }),
    ]),
  ) as Record<ServiceKey, DayBar[]>;
}

/** A deterministic pattern: `n` checks of a service on the day `daysAgo`, from 00:00:30 UTC, `everyMs` apart; `fail(i)` says which fail. */
async function seedDay(service: ServiceKey, daysAgo: number, n: number, everyMs: number, fail: (i: number) => boolean): Promise<void> {
  const dayStart = Math.floor(gw.ctx.clock.now() / DAY_MS) * DAY_MS - daysAgo * DAY_MS;
  for (let i = 0; i < n; i++) {
    const at = dayStart + 30_000 + i * everyMs;
    const ok = !fail(i);
    await insertCheck(gw.ctx.db, {
      service,
      slotMs: at,
      atMs: at,
      ok,
      latencyMs: ok ? 50 : null,
      statusCode: ok ? 200 : 503,
      error: ok ? null : "status 503",
    });
  }
}

describe("status roll-ups", () => {
  it("the 90-day bars read from the roll-ups equal the bars the raw checks give, day boundaries included", async () => {
    // Move the test clock to 12:00 UTC of its day so every seeded check lies in the past.
    const now = gw.ctx.clock.now();
    const noon = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS / 2;
    const advance = noon > now ? noon - now : noon + DAY_MS - now;
    expect((await gw.admin("POST", "/clock", { advance_s: Math.ceil(advance / 1000) })).status).toBe(200);

    await seedDay("website", 0, 40, 60_000, (i) => i % 7 === 3);
    await seedDay("website", 1, 30, 47 * 60_000, (i) => i % 5 === 0);
    await seedDay("api", 1, 25, 3_600_000, () => false);
    await seedDay("api", 2, 12, 2 * 3_600_000, () => true);
    await seedDay("dashboard", 5, 20, 60_000, (i) => i < 2);
    await seedDay("dashboard", 89, 3, 60_000, () => false);
    // Outside the 90 days: in neither.
    await seedDay("dashboard", 90, 3, 60_000, () => true);
    // A check at 23:59:59.999 and one at 00:00:00.000 the next day fall on their own days.
    const boundary = Math.floor(gw.ctx.clock.now() / DAY_MS) * DAY_MS - 3 * DAY_MS;
    await insertCheck(gw.ctx.db, {
      service: "api",
      slotMs: boundary - 1,
      atMs: boundary - 1,
      ok: false,
      latencyMs: null,
      statusCode: 503,
      error: "status 503",
    });
    await insertCheck(gw.ctx.db, {
      service: "api",
      slotMs: boundary,
      atMs: boundary,
      ok: true,
      latencyMs: 9,
      statusCode: 200,
      error: null,
    });

    const fromRollups = await bars();
    expect(fromRollups).toEqual(await rawBars());
    expect(fromRollups.website[89]).toMatchObject({ checks: 40, uptime_pct: Math.round((34 / 40) * 100_000) / 1000 });
    expect(fromRollups.api[86]).toMatchObject({ checks: 1, uptime_pct: 100 });
    expect(fromRollups.api[85]).toMatchObject({ checks: 1, uptime_pct: 0 });
    expect(fromRollups.dashboard[0]).toMatchObject({ checks: 3, uptime_pct: 100 });
    expect(fromRollups.api[87]).toMatchObject({ checks: 12, uptime_pct: 0 });

    // A repeated record of a slot is refused and counts nothing.
    const dayStart = Math.floor(gw.ctx.clock.now() / DAY_MS) * DAY_MS;
    expect(
      await insertCheck(gw.ctx.db, {
        service: "website",
        slotMs: dayStart + 30_000,
        atMs: dayStart + 30_000,
        ok: false,
        latencyMs: null,
        statusCode: 503,
        error: "x",
      }),
    ).toBe(false);
    expect(await bars()).toEqual(fromRollups);

    // The bars' read touches the roll-ups only: raw checks deleted after their roll-up change nothing.
    await gw.ctx.db.query("DELETE FROM probes WHERE service = 'website' AND at < $1", [new Date(dayStart)]);
    await gw.ctx.db.query("DELETE FROM probes WHERE service = 'api'");
    expect(await bars()).toEqual(fromRollups);
    expect(await rawBars()).not.toEqual(fromRollups);
  });

  it("the backfill writes the roll-ups of days that have raw checks but none, and leaves the others alone", async () => {
    const today = Math.floor(gw.ctx.clock.now() / DAY_MS) * DAY_MS;
    const before = await bars();
    // Checks written as a prober that predates the roll-ups writes them: raw rows only.
    for (let i = 0; i < 6; i++) {
      const at = today - 10 * DAY_MS + i * 600_000;
      await gw.ctx.db.query(
        "INSERT INTO probes (service, slot_at, at, ok, latency_ms, status_code, error) VALUES ('website', $1, $1, $2, 20, 200, null)",
        [new Date(at), i !== 4],
      );
    }
    expect((await bars()).website[79].checks).toBe(0);
    expect(await backfillDailyRollups({ db: gw.ctx.db, clock: gw.ctx.clock })).toBe(1);
    const after = await bars();
    expect(after.website[79]).toMatchObject({ checks: 6, uptime_pct: Math.round((5 / 6) * 100_000) / 1000 });
    expect({ ...after, website: after.website.filter((_, i) => i !== 79) }).toEqual({
      ...before,
      website: before.website.filter((_, i) => i !== 79),
    });
    // A second run finds nothing to write.
    expect(await backfillDailyRollups({ db: gw.ctx.db, clock: gw.ctx.clock })).toBe(0);
    // A later check of a backfilled day adds to its row.
    const at = today - 10 * DAY_MS + 7_200_000;
    expect(
      await insertCheck(gw.ctx.db, { service: "website", slotMs: at, atMs: at, ok: true, latencyMs: 5, statusCode: 200, error: null }),
    ).toBe(true);
    expect((await bars()).website[79]).toMatchObject({ checks: 7 });
  });
});
