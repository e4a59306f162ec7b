import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageActor } from "../../../actors/usage/index.js";
import { runActor, type ActorHandle } from "../../../actors/runtime/index.js";
import { UNNAMED_INSTALL } from "../../../shared/verify/installations.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, verify } from "../../ingress/routes/verify-fixtures.js";

/**
 * An installation's last_seen_at follows its later calls (operator-api.md, installations):
 * the counting script puts an installation in the usage event on its first call of each
 * minute, and the usage actor moves last_seen_at. The test clock stands in for the hour.
 */

let gw: TestGateway;
let actor: ActorHandle | null = null;
beforeAll(async () => {
  gw = await startTestGateway("lastseen");
  actor = await runActor(usageActor, {
    redis: gw.ctx.redis,
    keys: gw.ctx.keys,
    clock: gw.ctx.clock,
    logger: silentLogger(),
    db: gw.ctx.db,
    consumerName: "test-last-seen",
  });
});
afterAll(async () => {
  await actor?.stop({ timeoutMs: 2000 });
  await gw?.stop();
});

interface Seen {
  first_seen_at: string;
  last_seen_at: string;
}

async function seen(keyId: number, install: string): Promise<Seen | undefined> {
  const listed = await gw.admin("GET", `/keys/${keyId}/installations`);
  return (listed.body.installations as (Seen & { install: string })[]).find((i) => i.install === install);
}

/** Whether last_seen_at is at least an hour after `since` (the clock runs on between the calls: no exact instant). */
const anHourAfter = (row: Seen | undefined, since: string) =>
  row !== undefined && Date.parse(row.last_seen_at) - Date.parse(since) >= 3_600_000;

describe("last_seen_at", () => {
  it("a sighting an hour later moves last_seen_at; first_seen_at stays", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-a" })).body.reason).toBe("ok");
    const first = await waitFor(async () => {
      const row = await gw.ctx.db.query("SELECT 1 FROM installations WHERE key_id = $1 AND install = 'site-a'", [made.id]);
      return row.rowCount === 1 ? seen(made.id, "site-a") : undefined;
    });
    expect(first.last_seen_at).toBe(first.first_seen_at);

    await advance(gw, 3600);
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "site-a" })).body.reason).toBe("ok");
    const moved = await waitFor(async () => {
      const row = await seen(made.id, "site-a");
      return anHourAfter(row, first.first_seen_at) ? row : undefined;
    });
    expect(moved.first_seen_at).toBe(first.first_seen_at);
  });

  it("the unnamed installation and a blocked one are sighted too", async () => {
    const made = await clientSetup(gw);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "intruder" })).body.reason).toBe("installation_pending");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/intruder/block`)).status).toBe(200);
    await waitFor(async () => (await gw.ctx.db.query("SELECT 1 FROM installations WHERE key_id = $1", [made.id])).rowCount === 2);
    const before = { unnamed: await seen(made.id, UNNAMED_INSTALL), intruder: await seen(made.id, "intruder") };

    await advance(gw, 3600);
    expect((await verify(gw, { key: made.key, domain: "example.com" })).body.reason).toBe("ok");
    expect((await verify(gw, { key: made.key, domain: "example.com", install: "intruder" })).body.reason).toBe("installation_blocked");
    await waitFor(
      async () =>
        anHourAfter(await seen(made.id, UNNAMED_INSTALL), before.unnamed?.last_seen_at ?? "") &&
        anHourAfter(await seen(made.id, "intruder"), before.intruder?.last_seen_at ?? ""),
    );
    const { rows } = await gw.ctx.db.query("SELECT install, status FROM installations WHERE key_id = $1 ORDER BY install", [made.id]);
    expect(rows).toEqual([
      { install: UNNAMED_INSTALL, status: "approved" },
      { install: "intruder", status: "blocked" },
    ]);
  });
});
