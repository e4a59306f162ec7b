import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINT_LABELS_PER_DAY, OTHER_LABEL, PENDING_INSTALLS_PER_DAY, UNNAMED_INSTALL } from "../../../shared/verify/installations.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { usageEvents } from "./content-fixtures.js";
import { clientSetup, verify, type MadeKey } from "./verify-fixtures.js";

/**
 * What a holder of a public client key must never be able to do to the site that owns it
 * (docs/security.md, "Public-key abuse and lockouts"): shut its calls with endpoint labels,
 * with a stranger's `install`, or through a rotation made right after an installation was
 * seen. No usage actor runs here: Redis is all the gateway knows of recent sightings, the
 * worst case of the actor's lag.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("lockouts");
});
afterAll(async () => {
  await gw?.stop();
});

const reasonOf = async (key: string, extra: Record<string, unknown> = {}) =>
  (await verify(gw, { key, domain: "example.com", ...extra })).body.reason as string;

async function statuses(keyId: number): Promise<Record<string, string>> {
  const listed = await gw.admin("GET", `/keys/${keyId}/installations`);
  return Object.fromEntries(listed.body.installations.map((i: { install: string; status: string }) => [i.install, i.status]));
}

async function labelsOf(made: MadeKey): Promise<string[]> {
  const day = new Date((await gw.admin("GET", "/clock")).body.now * 1000).toISOString().slice(0, 10);
  return gw.ctx.redis.smembers(gw.ctx.keys.endpointLabels(made.orgId, made.id, day));
}

describe("endpoint labels never shut a key", () => {
  it(`${ENDPOINT_LABELS_PER_DAY} junk labels from the wrong domain, then more from the right one: verify, content.php and botcheck.php still answer`, async () => {
    const made = await clientSetup(gw, {}, { plan: "enterprise" });
    for (let i = 0; i < ENDPOINT_LABELS_PER_DAY; i++)
      expect(await reasonOf(made.key, { domain: "evil.example.org", endpoint: `wrong-${i}` })).toBe("domain_mismatch");
    // A refused call records no label.
    expect(await labelsOf(made)).toEqual([]);
    for (let i = 0; i < ENDPOINT_LABELS_PER_DAY; i++) expect(await reasonOf(made.key, { endpoint: `junk-${i}` })).toBe("ok");
    for (let i = 0; i < 5; i++) expect(await reasonOf(made.key, { endpoint: `past-cap-${i}` })).toBe("ok");
    expect((await labelsOf(made)).sort()).toEqual(Array.from({ length: ENDPOINT_LABELS_PER_DAY }, (_, i) => `junk-${i}`).sort());

    expect(await reasonOf(made.key)).toBe("ok");
    expect(await reasonOf(made.key, { endpoint: "checkout" })).toBe("ok");
    const content = await gw.call("/api/v1/content.php", { method: "POST", body: { key: made.key, domain: "example.com" } });
    expect([content.status, content.body.ok]).toEqual([200, true]);
    const botcheck = await gw.call("/api/v1/botcheck.php", {
      method: "POST",
      body: { key: made.key },
      headers: { origin: "https://example.com" },
    });
    expect([botcheck.status, botcheck.body]).toEqual([200, { enforced: false, allow: true }]);

    const events = (await usageEvents(gw, made.orgId)).filter((e) => e.key === made.id);
    expect(events.some((e) => e.reason === "endpoint_limit_reached")).toBe(false);
    // Unrecorded labels are reported as one bucket; the endpoints' own labels are never folded.
    const labels = new Set(events.map((e) => e.endpoint));
    expect([...labels].filter((l) => l.startsWith("wrong-") || l.startsWith("past-cap-") || l === "checkout")).toEqual([]);
    expect(events.filter((e) => e.endpoint === OTHER_LABEL).reduce((n, e) => n + e.n, 0)).toBe(ENDPOINT_LABELS_PER_DAY + 5 + 1);
    expect(labels.has("verify") && labels.has("content") && labels.has("botcheck")).toBe(true);
  });
});

describe("a stranger's install never shuts the site's own calls", () => {
  it("a key used without install owns (unnamed): a stranger's install=evil is pending, the site's calls stay ok", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key)).toBe("ok");
    expect(await reasonOf(made.key, { install: "evil" })).toBe("installation_pending");
    for (let i = 0; i < 3; i++) expect(await reasonOf(made.key)).toBe("ok");
    expect(await statuses(made.id)).toEqual({ [UNNAMED_INSTALL]: "approved", evil: "pending" });
  });

  it("a site with a named installation keeps it; a blocked stranger still cannot pass by omitting install", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "evil" })).toBe("installation_pending");
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("ok");
    await gw.admin("POST", `/keys/${made.id}/installations/evil/block`);
    expect(await reasonOf(made.key, { install: "evil" })).toBe("installation_blocked");
    expect(await reasonOf(made.key)).toBe("installation_pending");
  });

  it(`a stranger filling the day's ${PENDING_INSTALLS_PER_DAY} pending names blocks neither the site nor the owner's new installation`, async () => {
    const made = await clientSetup(gw, {}, { plan: "enterprise" });
    expect(await reasonOf(made.key)).toBe("ok");
    for (let i = 0; i < PENDING_INSTALLS_PER_DAY; i++)
      expect(await reasonOf(made.key, { install: `evil-${i}` })).toBe("installation_pending");
    expect(await reasonOf(made.key, { install: "evil-more" })).toBe("installation_limit_reached");
    expect(await reasonOf(made.key)).toBe("ok");
    // The owner approves the real new installation by its name, before it was ever seen: it works at once.
    expect((await gw.admin("POST", `/keys/${made.id}/installations/site-b/approve`)).status).toBe(200);
    expect(await reasonOf(made.key, { install: "site-b" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "evil-even-more" })).toBe("installation_limit_reached");
  });
});

describe("rotation keeps the installations Redis has seen", () => {
  it("rotating at once after the first installation was seen: the new key accepts it and still refuses the blocked one", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "b" })).toBe("installation_pending");
    expect((await gw.admin("POST", `/keys/${made.id}/installations/b/block`)).status).toBe(200);
    const rotated = await gw.admin("POST", `/keys/${made.id}/rotate`);
    expect(rotated.status).toBe(201);
    const fresh = { key: rotated.body.key as string, id: rotated.body.details.id as number };

    expect(await reasonOf(fresh.key, { install: "a" })).toBe("ok");
    expect(await reasonOf(fresh.key, { install: "b" })).toBe("installation_blocked");
    expect(await reasonOf(fresh.key)).toBe("installation_pending");
    expect(await reasonOf(made.key, { install: "a" })).toBe("invalid_key");
    // PostgreSQL holds them for the new key too, so a Redis loss restores them.
    const { rows } = await gw.ctx.db.query("SELECT install, status FROM installations WHERE key_id = $1 ORDER BY install", [fresh.id]);
    expect(rows).toEqual([
      { install: "a", status: "approved" },
      { install: "b", status: "blocked" },
    ]);
    // Projecting the old key again (the reconcile loop) hands nothing over twice and changes nothing.
    await gw.ingress.deps.projector.keyChanged(made.id);
    expect(await gw.ctx.redis.hgetall(gw.ctx.keys.installations(made.orgId, fresh.id))).toEqual({
      a: "approved",
      b: "blocked",
      [UNNAMED_INSTALL]: "pending",
    });
    expect(await gw.ctx.redis.exists(gw.ctx.keys.installations(made.orgId, made.id))).toBe(0);
  });

  it("a site used without install keeps working through an immediate rotation, and a stranger stays pending", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key)).toBe("ok");
    const rotated = await gw.admin("POST", `/keys/${made.id}/rotate`);
    expect(rotated.status).toBe(201);
    expect(await reasonOf(rotated.body.key)).toBe("ok");
    expect(await reasonOf(rotated.body.key, { install: "evil" })).toBe("installation_pending");
    expect(await reasonOf(rotated.body.key)).toBe("ok");
  });
});
