import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { putSecret, usageEvents, type UsageEvent } from "./content-fixtures.js";
import { ENDPOINT_LABELS_PER_DAY, OTHER_LABEL } from "../../../shared/verify/installations.js";
import { makeKey, makeOrg, usedOf, verify, verifyDomain } from "./verify-fixtures.js";

/**
 * interface.md section 8 charges refusals, never the service's own faults: a call the
 * counting script counted `ok` whose answer then fails (5xx) is given back, on every gated
 * endpoint, however the route failed (docs/security.md, item 11a). Each case below fails
 * after the gate with a real fault or one injected into a real connection's call, and checks
 * the organization's cycle counter and the usage events the usage actor reads.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("refund");
});
afterAll(async () => {
  vi.restoreAllMocks();
  await gw?.stop();
});

async function freshOrg(): Promise<number> {
  const orgId = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, "example.com");
  return orgId;
}

const shape = (events: UsageEvent[]) => events.map((e) => [e.endpoint, e.reason, e.counted, e.n, (e as { refund?: number }).refund ?? 0]);

describe("a counted call whose answer faults is given back", () => {
  it("secret.php: a value that no longer unseals answers 503, and the call is not charged", async () => {
    const orgId = await freshOrg();
    await putSecret(gw, orgId, "stripe_key", "sk_live_value");
    // Sealed under another GATEWAY_SECRET (an operator's mistake): the ingress cannot open it.
    await gw.ctx.redis.hset(gw.ctx.keys.secretSnapshot(orgId), "stripe_key", Buffer.alloc(60, 7).toString("base64"));
    const made = await makeKey(gw, orgId, { kind: "server", domain: undefined, ip_allow: ["127.0.0.1/32"] });
    const answer = await gw.call("/api/v1/secret.php", { method: "POST", body: { key: made.key, name: "stripe_key" } });
    expect(answer.status).toBe(503);
    expect(answer.body.reason).toBe("unavailable");
    expect(await usedOf(gw, orgId)).toBe(0);
    expect(shape(await usageEvents(gw, orgId))).toEqual([
      ["secret", "ok", 1, 1, 0],
      ["secret", "unavailable", 0, 1, 1],
    ]);
  });

  it("events.php: PostgreSQL failing after the gate answers 503, and the call is not charged", async () => {
    const orgId = await freshOrg();
    const made = await makeKey(gw, orgId, { kind: "server", domain: undefined });
    const query = vi.spyOn(gw.ingress.deps.readDb, "query").mockImplementationOnce(() => {
      throw new Error("connection terminated");
    });
    const failed = await gw.call("/api/v1/events.php", { query: { key: made.key } });
    expect(query).toHaveBeenCalled();
    query.mockRestore();
    expect(failed.status).toBe(503);
    expect(await usedOf(gw, orgId)).toBe(0);
    // A later call that is answered stays charged.
    const answered = await gw.call("/api/v1/events.php", { query: { key: made.key } });
    expect(answered.status).toBe(200);
    expect(await usedOf(gw, orgId)).toBe(1);
    expect(shape(await usageEvents(gw, orgId))).toEqual([
      ["events", "ok", 1, 1, 0],
      ["events", "unavailable", 0, 1, 1],
      ["events", "ok", 1, 1, 0],
    ]);
  });

  it("verify.php: a fault while making the answer is given back; the next call is charged", async () => {
    const orgId = await freshOrg();
    const made = await makeKey(gw, orgId, { kind: "client", domain: "example.com" });
    // The first success of a key signs its tokens, which names the service's base address.
    const baseUrl = vi.spyOn(gw.ingress.deps, "baseUrl").mockImplementationOnce(() => {
      throw new Error("broken configuration");
    });
    const failed = await verify(gw, { key: made.key, domain: "example.com" });
    expect(baseUrl).toHaveBeenCalled();
    baseUrl.mockRestore();
    expect(failed.status).toBe(503);
    expect(await usedOf(gw, orgId)).toBe(0);
    const answered = await verify(gw, { key: made.key, domain: "example.com" });
    expect(answered.body.authorized).toBe(true);
    expect(await usedOf(gw, orgId)).toBe(1);
    expect(shape(await usageEvents(gw, orgId))).toEqual([
      ["verify", "ok", 1, 1, 0],
      ["verify", "unavailable", 0, 1, 1],
      ["verify", "ok", 1, 1, 0],
    ]);
  });

  it("verify.php: a caller-chosen label is given back under the label the call was reported under", async () => {
    const orgId = await freshOrg();
    const made = await makeKey(gw, orgId, { kind: "client", domain: "example.com" });
    const failOnce = () =>
      vi.spyOn(gw.ingress.deps, "baseUrl").mockImplementationOnce(() => {
        throw new Error("broken configuration");
      });
    // Within the cap: the label is recorded, and the refund names it.
    let baseUrl = failOnce();
    expect((await verify(gw, { key: made.key, domain: "example.com", endpoint: "checkout" })).status).toBe(503);
    baseUrl.mockRestore();
    // Past the cap (the day's set full of other labels): the call was reported as (other), and so is its refund.
    const day = new Date(gw.ctx.clock.now()).toISOString().slice(0, 10);
    const labels = Array.from({ length: ENDPOINT_LABELS_PER_DAY }, (_, i) => `label-${i}`);
    await gw.ctx.redis.del(gw.ctx.keys.endpointLabels(orgId, made.id, day));
    await gw.ctx.redis.sadd(gw.ctx.keys.endpointLabels(orgId, made.id, day), ...labels);
    baseUrl = failOnce();
    expect((await verify(gw, { key: made.key, domain: "example.com", endpoint: "signup" })).status).toBe(503);
    baseUrl.mockRestore();
    expect(await usedOf(gw, orgId)).toBe(0);
    expect(shape(await usageEvents(gw, orgId))).toEqual([
      ["checkout", "ok", 1, 1, 0],
      ["checkout", "unavailable", 0, 1, 1],
      [OTHER_LABEL, "ok", 1, 1, 0],
      [OTHER_LABEL, "unavailable", 0, 1, 1],
    ]);
  });

  it("a refusal after the gate stays charged", async () => {
    const orgId = await freshOrg();
    const made = await makeKey(gw, orgId, { kind: "server", domain: undefined, ip_allow: ["127.0.0.1/32"] });
    const refused = await gw.call("/api/v1/secret.php", { method: "POST", body: { key: made.key, name: "nothing" } });
    expect(refused.status).toBe(404);
    expect(refused.body.reason).toBe("unknown_secret");
    expect(await usedOf(gw, orgId)).toBe(1);
    expect(shape(await usageEvents(gw, orgId))).toEqual([["secret", "unknown_secret", 1, 1, 0]]);
  });
});
