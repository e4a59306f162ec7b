import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOutboxRelay } from "../../../actors/outbox/index.js";
import type { RunningActor } from "../../../actors/index.js";
import { startSiemPusher, type SiemPusher } from "../../../actors/siem/index.js";
import { type FakeHttp, startFakeHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { addDestination, writeEvents } from "./support.js";

/**
 * At least once from the moment `POST /orgs/:org/siem` answers: destinations added back to
 * back while events keep coming, round after round. A destination whose stream the pusher
 * took for an orphan (its loop not started yet, the pusher's destination list read before it
 * committed) lost the events fanned out to it in between, silently.
 */
const ROUNDS = 20;
/**
 * Keys under the test's prefix that no destination pattern matches: a deployment's Redis
 * holds snapshots and counters for every key, and the pusher's orphan sweep SCANs all of
 * them, so the sweep takes round trips enough for a second destination to commit meanwhile.
 */
const BALLAST_KEYS = 100_000;

let gw: TestGateway;
let relay: RunningActor;
let pusher: SiemPusher;

beforeAll(async () => {
  gw = await startTestGateway("siemb2b", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  for (let i = 0; i < BALLAST_KEYS; i += 5_000) {
    const pairs = Array.from({ length: 5_000 }, (_, j) => [`${gw.prefix}ballast:${i + j}`, "1"]).flat();
    await gw.ctx.redis.mset(...pairs);
  }
  relay = await startOutboxRelay(gw.ctx);
  pusher = await startSiemPusher(gw.ctx, { batchSize: 50, lingerMs: 10 });
});

afterAll(async () => {
  await pusher?.stop();
  await relay?.stop();
  await gw?.stop();
});

/**
 * Writes events one transaction at a time until stopped. Each id is kept with the number of
 * destinations whose POST had answered when its transaction began: destination k (0-based,
 * in the order added) owes the collector every event written with more than k answered.
 */
function eventStream(orgId: number) {
  const written: { id: number; answered: number }[] = [];
  const state = { answered: 0, stopped: false };
  const done = (async () => {
    while (!state.stopped) {
      const answered = state.answered;
      const [id] = await writeEvents(gw, orgId, 1);
      written.push({ id, answered });
    }
  })();
  return {
    written,
    answered: () => void (state.answered += 1),
    owed: (k: number) => written.filter((w) => w.answered > k).map((w) => w.id),
    async stop() {
      state.stopped = true;
      await done;
    },
  };
}

describe("SIEM destinations added back to back", () => {
  it(`every event committed after each POST answered reaches its collector (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const created = await gw.admin("POST", "/orgs", { name: `Back to back ${round}`, plan: "enterprise" });
      const orgId = created.body.org.id as number;
      const collectors: FakeHttp[] = await Promise.all([startFakeHttp(), startFakeHttp()]);
      const events = eventStream(orgId);
      try {
        await waitFor(() => events.written.length >= 3);
        const ids: number[] = [];
        for (const collector of collectors) {
          ids.push(await addDestination(gw, orgId, { kind: "http", url: collector.url }));
          events.answered();
        }
        const enough = events.written.length + 10;
        await waitFor(() => events.written.length >= enough);
        await events.stop();
        const owed = collectors.map((_, k) => events.owed(k));
        expect(owed[1].length).toBeGreaterThanOrEqual(10);
        await waitFor(() => collectors.every((c, k) => owed[k].every((id) => c.stored.has(id))), 20_000).catch(async (error: unknown) => {
          const states = await Promise.all(ids.map(async (id) => (await gw.admin("GET", `/orgs/${orgId}/siem/${id}`)).body.destination));
          const missing = collectors.map((c, k) => owed[k].filter((id) => !c.stored.has(id)));
          throw new Error(`round ${round}: ${String(error)}; missing ${JSON.stringify(missing)}; states ${JSON.stringify(states)}`);
        });
      } finally {
        await events.stop();
        await Promise.all(collectors.map((c) => c.close()));
      }
    }
  }, 600_000);

  it("the sweep still drops the stream of a deleted destination that a fan-out wrote after the delete", async () => {
    const created = await gw.admin("POST", "/orgs", { name: "Orphan", plan: "enterprise" });
    const orgId = created.body.org.id as number;
    const collector = await startFakeHttp();
    try {
      const id = await addDestination(gw, orgId, { kind: "http", url: collector.url });
      await waitFor(() => pusher.running().includes(id));
      expect((await gw.admin("DELETE", `/orgs/${orgId}/siem/${id}`)).status).toBe(200);
      await waitFor(() => !pusher.running().includes(id));
      const stream = gw.ctx.keys.stream(`events:siem:${id}`);
      // A fan-out holding the old destination list appends after the delete.
      await gw.ctx.redis.xadd(stream, "*", "data", "{}");
      await pusher.reload();
      expect(await gw.ctx.redis.exists(stream)).toBe(0);
    } finally {
      await collector.close();
    }
  });
});
