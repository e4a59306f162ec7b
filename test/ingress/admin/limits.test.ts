import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORG_LIMITS, type LimitedResource } from "../../../shared/accounts/limits.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/**
 * The counts an organization may hold where the contract sets none (shared/accounts/limits.ts):
 * each create route fills to its limit and then refuses 409 `limit_reached`, writing nothing;
 * two creates racing for the last place give one 201 and one 409. Most rows are written
 * directly (the limit is large); the last ones go through the API.
 */

let gw: TestGateway;
let serial = 0;

beforeAll(async () => {
  gw = await startTestGateway("limits");
});
afterAll(async () => {
  await gw?.stop();
});

async function newOrg(): Promise<number> {
  return (await gw.admin("POST", "/orgs", { name: `Limits ${++serial}` })).body.org.id;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  return (await gw.ctx.db.query<{ n: number }>(sql, params)).rows[0].n;
}

async function activityCount(orgId: number): Promise<number> {
  return count("SELECT count(*)::int AS n FROM activity WHERE org_id = $1", [orgId]);
}

interface Case {
  resource: LimitedResource;
  /** Writes `n` rows of the resource directly. */
  seed(orgId: number, n: number): Promise<void>;
  /** One create through the API; `i` makes it distinct. */
  create(orgId: number, i: number): Promise<{ status: number; body: any }>;
  held(orgId: number): Promise<number>;
}

const sealedDummy = Buffer.from([1, 2, 3]);

const CASES: Case[] = [
  {
    resource: "siem_destinations",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        "INSERT INTO siem_destinations (org_id, kind, url, created_at) SELECT $1, 'http', 'https://siem.example/' || g, now() FROM generate_series(1, $2) g",
        [org, n],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/siem`, { kind: "http", url: `https://siem${i}.example/ingest` }),
    held: (org) => count("SELECT count(*)::int AS n FROM siem_destinations WHERE org_id = $1", [org]),
  },
  {
    resource: "webhooks",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        "INSERT INTO webhooks (org_id, url, secret_sealed, created_at) SELECT $1, 'https://hooks.example/' || g, $3, now() FROM generate_series(1, $2) g",
        [org, n, sealedDummy],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/webhooks`, { url: `https://hooks${i}.example/in`, secret: "0123456789abcdef" }),
    held: (org) => count("SELECT count(*)::int AS n FROM webhooks WHERE org_id = $1", [org]),
  },
  {
    resource: "tokens",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        `INSERT INTO org_tokens (org_id, name, token_hash, prefix, scopes, created_by, created_at)
         SELECT $1::bigint, 't' || g, sha256(('seed-' || $1::bigint::text || '-' || g)::bytea), 'gwo_seed', '{read}', 'operator', now() FROM generate_series(1, $2) g`,
        [org, n],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/tokens`, { name: `api ${i}`, scopes: ["read"] }),
    held: (org) => count("SELECT count(*)::int AS n FROM org_tokens WHERE org_id = $1 AND revoked_at IS NULL", [org]),
  },
  {
    resource: "members",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        "INSERT INTO members (org_id, name, email, role, created_at) SELECT $1, 'M' || g, 'seed' || g || '@example.com', 'member', now() FROM generate_series(1, $2) g",
        [org, n],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/members`, { name: `New ${i}`, email: `new${i}@example.com`, role: "member" }),
    held: (org) => count("SELECT count(*)::int AS n FROM members WHERE org_id = $1", [org]),
  },
  {
    resource: "domains",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        "INSERT INTO domains (org_id, name, verification_token, created_at) SELECT $1, 'seed' || g || '.example', md5(g::text), now() FROM generate_series(1, $2) g",
        [org, n],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/domains`, { domain: `new${i}.example` }),
    held: (org) => count("SELECT count(*)::int AS n FROM domains WHERE org_id = $1", [org]),
  },
  {
    resource: "content",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        `INSERT INTO content (org_id, content_key, type, value, updated_at) SELECT $1, 'seed' || g, 'text', '"x"', now() FROM generate_series(1, $2) g`,
        [org, n],
      );
    },
    create: (org, i) => gw.admin("PUT", `/orgs/${org}/content/new${i}`, { type: "text", value: "hello" }),
    held: (org) => count("SELECT count(*)::int AS n FROM content WHERE org_id = $1", [org]),
  },
  {
    resource: "secrets",
    seed: async (org, n) => {
      await gw.ctx.db.query(
        "INSERT INTO secrets (org_id, name, sealed, updated_at) SELECT $1, 'seed' || g, $3, now() FROM generate_series(1, $2) g",
        [org, n, sealedDummy],
      );
    },
    create: (org, i) => gw.admin("PUT", `/orgs/${org}/secrets/new${i}`, { value: "s3cret" }),
    held: (org) => count("SELECT count(*)::int AS n FROM secrets WHERE org_id = $1", [org]),
  },
  {
    resource: "risks",
    seed: async (org, n) => {
      await gw.admin("POST", `/orgs/${org}/domains`, { domain: "risky.example", verified: true });
      await gw.ctx.db.query(
        "INSERT INTO acknowledgements (org_id, domain, finding_key, acked_at) SELECT $1, 'risky.example', 'seed:f' || g, now() FROM generate_series(1, $2) g",
        [org, n],
      );
    },
    create: (org, i) => gw.admin("POST", `/orgs/${org}/risks`, { domain: "risky.example", finding_key: `web:new${i}`, note: "n" }),
    held: (org) => count("SELECT count(*)::int AS n FROM acknowledgements WHERE org_id = $1 AND released_at IS NULL", [org]),
  },
];

describe("per-organization limits", () => {
  for (const c of CASES) {
    it(`${c.resource}: ${ORG_LIMITS[c.resource]} at most; the next create is 409 limit_reached and writes nothing`, async () => {
      const org = await newOrg();
      const limit = ORG_LIMITS[c.resource];
      await c.seed(org, limit - 2);
      // Two racing for the second-to-last place: both fit. Then two racing for the last: one fits.
      const fit = await Promise.all([c.create(org, 1), c.create(org, 2)]);
      expect(fit.filter((a) => a.status === 201 || a.status === 200)).toHaveLength(2);
      expect(await c.held(org)).toBe(limit);

      const activityBefore = await activityCount(org);
      const races = await Promise.all([c.create(org, 3), c.create(org, 4)]);
      for (const refused of races) {
        expect(refused.status).toBe(409);
        expect(refused.body).toMatchObject({ ok: false, reason: "limit_reached", resource: c.resource, limit });
        expect(refused.body.detail).toContain(String(limit));
      }
      expect(await c.held(org)).toBe(limit);
      expect(await activityCount(org)).toBe(activityBefore);
    });
  }

  it("two creates racing for the last place: exactly one is taken", async () => {
    const org = await newOrg();
    await CASES[1].seed(org, ORG_LIMITS.webhooks - 1);
    const answers = await Promise.all([1, 2, 3, 4].map((i) => CASES[1].create(org, i)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
    expect(await CASES[1].held(org)).toBe(ORG_LIMITS.webhooks);
  });

  it("a full organization still replaces what it has, and removing one makes room", async () => {
    const org = await newOrg();
    await CASES[5].seed(org, ORG_LIMITS.content);
    const replaced = await gw.admin("PUT", `/orgs/${org}/content/seed1`, { type: "text", value: "replaced" });
    expect(replaced.status).toBe(200);
    expect((await gw.admin("PUT", `/orgs/${org}/content/fresh`, { type: "text", value: "x" })).body.reason).toBe("limit_reached");
    expect((await gw.admin("DELETE", `/orgs/${org}/content/seed2`)).status).toBe(200);
    expect((await gw.admin("PUT", `/orgs/${org}/content/fresh`, { type: "text", value: "x" })).status).toBe(200);

    await CASES[6].seed(org, ORG_LIMITS.secrets);
    expect((await gw.admin("PUT", `/orgs/${org}/secrets/seed1`, { value: "rotated" })).status).toBe(200);
    expect((await gw.admin("PUT", `/orgs/${org}/secrets/other`, { value: "x" })).body.reason).toBe("limit_reached");

    // A revoked token frees its place.
    await CASES[2].seed(org, ORG_LIMITS.tokens);
    expect((await CASES[2].create(org, 9)).body.reason).toBe("limit_reached");
    const [{ id }] = (await gw.ctx.db.query<{ id: string }>("SELECT id FROM org_tokens WHERE org_id = $1 LIMIT 1", [org])).rows;
    expect((await gw.admin("DELETE", `/orgs/${org}/tokens/${id}`)).status).toBe(200);
    expect((await CASES[2].create(org, 10)).status).toBe(201);

    // Re-accepting a finding already accepted replaces it: no new place needed.
    await CASES[7].seed(org, ORG_LIMITS.risks);
    const again = await gw.admin("POST", `/orgs/${org}/risks`, { domain: "risky.example", finding_key: "seed:f1", note: "again" });
    expect(again.status).toBe(201);
    expect((await CASES[7].create(org, 11)).body.reason).toBe("limit_reached");
  });

  it("a full organization answers a duplicate member or domain 409 conflict, as before", async () => {
    const org = await newOrg();
    await CASES[3].seed(org, ORG_LIMITS.members);
    expect((await gw.admin("POST", `/orgs/${org}/members`, { name: "Dup", email: "SEED1@example.com", role: "member" })).body.reason).toBe(
      "conflict",
    );
    await CASES[4].seed(org, ORG_LIMITS.domains);
    expect((await gw.admin("POST", `/orgs/${org}/domains`, { domain: "seed1.example" })).body.reason).toBe("conflict");
  });

  it(`a finding holds at most ${ORG_LIMITS.notes} notes`, async () => {
    const org = await newOrg();
    const { rows } = await gw.ctx.db.query<{ id: string }>(
      "INSERT INTO assignments (org_id, domain, finding_key, finding, status, found_at, updated_at) VALUES ($1, 'notes.example', 'email:spf', 'SPF record', 'open', now(), now()) RETURNING id",
      [org],
    );
    await gw.ctx.db.query(
      "INSERT INTO assignment_notes (assignment_id, at, who, body) SELECT $1, now(), 'operator', 'n' || g FROM generate_series(1, $2) g",
      [rows[0].id, ORG_LIMITS.notes - 1],
    );
    const path = `/orgs/${org}/assignments/notes.example/email:spf/notes`;
    const answers = await Promise.all([1, 2].map((i) => gw.admin("POST", path, { who: "ops", body: `last ${i}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)?.body).toMatchObject({
      reason: "limit_reached",
      resource: "notes",
      limit: ORG_LIMITS.notes,
    });
    expect(await count("SELECT count(*)::int AS n FROM assignment_notes WHERE assignment_id = $1", [rows[0].id])).toBe(ORG_LIMITS.notes);
  });
});
