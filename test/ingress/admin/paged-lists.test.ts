import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertInstallation } from "../../../shared/verify/db/keys.js";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { checkPaging, pageThrough, type ListGet } from "../../helpers/paging.js";

/**
 * The lists that once answered whole: a key's installations, SIEM destinations, webhooks and
 * a finding's notes. Each is paged like every admin list (docs/accounts.md "Lists"): read two
 * at a time, the pages add up to the whole list in its order.
 */

let gw: TestGateway;
let orgId: number;
let stranger: string;

async function ok(method: string, path: string, body?: unknown) {
  const res = await gw.admin(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

const as =
  (token: string): ListGet =>
  (path, query = {}) =>
    gw.call(`/admin/v1${path}`, { query, headers: { authorization: `Bearer ${token}` } });
const get = as(ADMIN_TOKEN);

beforeAll(async () => {
  gw = await startTestGateway("paged-lists");
  orgId = (await ok("POST", "/orgs", { name: "Paged", plan: "enterprise" })).org.id;
  const otherOrg = (await ok("POST", "/orgs", { name: "Stranger", plan: "enterprise" })).org.id;
  stranger = (await ok("POST", `/orgs/${otherOrg}/tokens`, { name: "stranger", scopes: ["read"] })).token;
});
afterAll(async () => {
  await gw?.stop();
});

/** The list read two at a time equals the list read whole; another organization's principal gets 404. */
async function pagesAddUp(path: string, field: string): Promise<unknown[]> {
  const whole = await get(path, { limit: "500" });
  expect(whole.body).toMatchObject({ ok: true, page: 1, limit: 500, has_more: false });
  expect(whole.body.total).toBe(whole.body[field].length);
  expect(whole.body.total).toBeGreaterThan(2);
  expect(await pageThrough(get, path, field, 2)).toEqual(whole.body[field]);
  const theirs = await as(stranger)(path);
  expect(theirs.status).toBe(404);
  expect(theirs.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
  return whole.body[field];
}

describe("GET /keys/:id/installations", () => {
  it("pages newest first, those only Redis has seen yet first of all, with Redis's status where it has one", async () => {
    const keyId = (await ok("POST", `/orgs/${orgId}/keys`, { name: "k", kind: "client", domain: "app.example.com" })).details.id;
    const now = gw.ctx.clock.now();
    for (const [install, status, agoS] of [
      ["oldest", "approved", 50],
      ["older", "pending", 40],
      ["middle", "blocked", 30],
      ["newer", "pending", 20],
      ["newest", "pending", 10],
    ] as const) {
      await upsertInstallation(gw.ctx.db, { keyId, install, status, seenMs: now - agoS * 1000 });
    }
    // Redis (what verify judges by) says approved where the row says pending; two the usage actor has not written yet.
    await gw.ctx.redis.hset(
      gw.ctx.keys.installations(orgId, keyId),
      "older",
      "approved",
      "unwritten-b",
      "pending",
      "unwritten-a",
      "pending",
    );
    const path = `/keys/${keyId}/installations`;
    const listed = (await pagesAddUp(path, "installations")) as { install: string; status: string }[];
    expect(listed.map((i) => `${i.install}:${i.status}`)).toEqual([
      "unwritten-a:pending",
      "unwritten-b:pending",
      "newest:pending",
      "newer:pending",
      "middle:blocked",
      "older:approved",
      "oldest:approved",
    ]);
    await checkPaging(get, path, "installations");
  });
});

describe("GET /orgs/:org/siem", () => {
  it("pages the destinations in the order they were added", async () => {
    const ids: number[] = [];
    for (let i = 1; i <= 5; i++) {
      ids.push((await ok("POST", `/orgs/${orgId}/siem`, { kind: "http", url: `https://siem${i}.example/ingest` })).destination.id);
    }
    const path = `/orgs/${orgId}/siem`;
    const listed = (await pagesAddUp(path, "destinations")) as { id: number; url: string; delivered: number }[];
    expect(listed.map((d) => d.id)).toEqual(ids);
    expect(listed[4]).toMatchObject({ url: "https://siem5.example/ingest", delivered: 0, pending: 0, failed: 0, dead_letters: 0 });
    await checkPaging(get, path, "destinations");
  });
});

describe("GET /orgs/:org/webhooks", () => {
  it("pages the webhooks in the order they were added, with their delivery counts", async () => {
    const ids: number[] = [];
    for (let i = 1; i <= 5; i++) {
      ids.push(
        (await ok("POST", `/orgs/${orgId}/webhooks`, { url: `https://hooks${i}.example/in`, secret: "0123456789abcdef" })).webhook.id,
      );
    }
    const path = `/orgs/${orgId}/webhooks`;
    const listed = (await pagesAddUp(path, "webhooks")) as { id: number }[];
    expect(listed.map((w) => w.id)).toEqual(ids);
    expect(listed[0]).toMatchObject({ url: "https://hooks1.example/in", delivered: 0, pending: 0, failed: 0, last_error: null });
    expect(JSON.stringify(listed)).not.toContain("0123456789abcdef");
    await checkPaging(get, path, "webhooks");
  });
});

describe("GET /orgs/:org/assignments/:domain/:finding_key/notes", () => {
  it("pages a finding's notes oldest first", async () => {
    await gw.ctx.db.query(
      `INSERT INTO assignments (org_id, domain, finding_key, finding, status, found_at, updated_at)
       VALUES ($1, 'notes.example', 'email:spf', 'SPF record', 'open', now(), now())`,
      [orgId],
    );
    const path = `/orgs/${orgId}/assignments/notes.example/email:spf/notes`;
    for (let i = 1; i <= 5; i++) await ok("POST", path, { who: "ops", body: `note ${i}` });
    const listed = (await pagesAddUp(path, "notes")) as { body: string; domain: string; finding_key: string }[];
    expect(listed.map((n) => n.body)).toEqual(["note 1", "note 2", "note 3", "note 4", "note 5"]);
    expect(listed[0]).toMatchObject({ domain: "notes.example", finding_key: "email:spf", who: "ops" });
    await checkPaging(get, path, "notes");
    // A finding nobody is assigned is 404 before its paging is read.
    expect((await get(`/orgs/${orgId}/assignments/notes.example/email:dmarc/notes`, { limit: "0" })).status).toBe(404);
  });
});
