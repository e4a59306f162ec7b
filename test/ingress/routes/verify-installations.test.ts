import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINT_LABELS_PER_DAY, OTHER_LABEL, PENDING_INSTALLS_PER_DAY, UNNAMED_INSTALL } from "../../../shared/verify/installations.js";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { usageEvents } from "./content-fixtures.js";
import { advance, clientSetup, usedOf, verify } from "./verify-fixtures.js";

/**
 * Installations and endpoint labels (docs/security.md, item 4 and "Public-key abuse and
 * lockouts"): a call without `install` is the installation "(unnamed)", so it cannot skip
 * the installation rule once the key has named ones; new installations are capped per key
 * per day; endpoint labels are capped without ever refusing (verify-lockouts.test.ts).
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("installs");
});
afterAll(async () => {
  await gw?.stop();
});

const call = (key: string, extra: Record<string, unknown> = {}) => verify(gw, { key, domain: "example.com", ...extra });
const reasonOf = async (key: string, extra: Record<string, unknown> = {}) => (await call(key, extra)).body.reason as string;
const unnamedPath = (id: number, decision: string) => `/keys/${id}/installations/${encodeURIComponent(UNNAMED_INSTALL)}/${decision}`;

async function statuses(keyId: number, count: number): Promise<Record<string, string>> {
  const listed = await waitFor(async () => {
    const answer = await gw.admin("GET", `/keys/${keyId}/installations`);
    return answer.body.installations.length === count ? answer : null;
  });
  return Object.fromEntries(listed.body.installations.map((i: { install: string; status: string }) => [i.install, i.status]));
}

describe("the unnamed installation", () => {
  it("a key that never names installations keeps working: its first call records (unnamed) approved", async () => {
    const made = await clientSetup(gw);
    for (let i = 0; i < 3; i++) expect(await reasonOf(made.key)).toBe("ok");
    expect(await statuses(made.id, 1)).toEqual({ [UNNAMED_INSTALL]: "approved" });
  });

  it("a blocked installation cannot get through by no longer naming itself", async () => {
    const made = await clientSetup(gw);
    expect(await reasonOf(made.key, { install: "site-a" })).toBe("ok");
    expect(await reasonOf(made.key, { install: "intruder" })).toBe("installation_pending");
    await gw.admin("POST", `/keys/${made.id}/installations/intruder/block`);
    expect(await reasonOf(made.key, { install: "intruder" })).toBe("installation_blocked");
    // Before: omitting `install` skipped the rule and answered ok.
    const omitted = await call(made.key);
    expect([omitted.status, omitted.body.reason]).toEqual([403, "installation_pending"]);
    expect(await statuses(made.id, 3)).toEqual({ "site-a": "approved", intruder: "blocked", [UNNAMED_INSTALL]: "pending" });
    // The owner decides on it like any installation.
    expect((await gw.admin("POST", unnamedPath(made.id, "block"))).status).toBe(200);
    expect(await reasonOf(made.key)).toBe("installation_blocked");
    expect((await gw.admin("POST", unnamedPath(made.id, "approve"))).status).toBe(200);
    expect(await reasonOf(made.key)).toBe("ok");
    expect(await reasonOf(made.key, { install: "intruder" })).toBe("installation_blocked");
  });
});

describe("caps per key per day", () => {
  it(`records at most ${PENDING_INSTALLS_PER_DAY} new pending installations a day, then refuses installation_limit_reached`, async () => {
    const made = await clientSetup(gw, {}, { plan: "enterprise" });
    expect(await reasonOf(made.key, { install: "first" })).toBe("ok");
    for (let i = 0; i < PENDING_INSTALLS_PER_DAY; i++)
      expect(await reasonOf(made.key, { install: `new-${i}` })).toBe("installation_pending");
    const over = await call(made.key, { install: "one-too-many" });
    expect([over.status, over.body.reason]).toEqual([403, "installation_limit_reached"]);
    // Known installations answer as before; the refused one was not recorded.
    expect(await reasonOf(made.key, { install: "new-0" })).toBe("installation_pending");
    expect(await reasonOf(made.key, { install: "first" })).toBe("ok");
    const listed = await statuses(made.id, PENDING_INSTALLS_PER_DAY + 1);
    expect(listed).not.toHaveProperty("one-too-many");
    // The next UTC day has a fresh allowance of new installations.
    await advance(gw, 86_400);
    expect(await reasonOf(made.key, { install: "one-too-many" })).toBe("installation_pending");
  });

  it(`records at most ${ENDPOINT_LABELS_PER_DAY} caller-chosen endpoint labels a day; a further label is answered and reported as (other)`, async () => {
    const made = await clientSetup(gw, {}, { plan: "enterprise" });
    for (let i = 0; i < ENDPOINT_LABELS_PER_DAY; i++) expect(await reasonOf(made.key, { endpoint: `page-${i}` })).toBe("ok");
    const usedBefore = await usedOf(gw, made.orgId);
    const over = await call(made.key, { endpoint: "page-new" });
    expect([over.status, over.body.reason, over.body.authorized]).toEqual([200, "ok", true]);
    expect(await reasonOf(made.key, { endpoint: "page-0" })).toBe("ok");
    expect(await usedOf(gw, made.orgId)).toBe(usedBefore + 2);
    const events = await usageEvents(gw, made.orgId);
    expect(events.some((e) => e.endpoint === "page-new")).toBe(false);
    expect(events.filter((e) => e.endpoint === OTHER_LABEL)).toEqual([expect.objectContaining({ reason: "ok", counted: 1, n: 1 })]);
    await advance(gw, 86_400);
    await call(made.key, { endpoint: "page-new" });
    expect((await usageEvents(gw, made.orgId)).some((e) => e.endpoint === "page-new")).toBe(true);
  });
});
