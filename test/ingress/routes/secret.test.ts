import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../../../shared/platform/reasons.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { attested, putSecret, rawCall, sha256Hex, usageTally } from "./content-fixtures.js";
import { advance, makeKey, makeOrg, usedOf, verifyDomain, type MadeKey } from "./verify-fixtures.js";

let gw: TestGateway;
let orgId: number;
beforeAll(async () => {
  gw = await startTestGateway("secret");
  orgId = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, "example.com");
  await putSecret(gw, orgId, "stripe_key", PLAINTEXT);
});
afterAll(async () => {
  await gw?.stop();
});

const PLAINTEXT = "sk_live_PLAINTEXT-must-never-be-stored-4f1c9a";
const PATH = "/api/v1/secret.php";

/** A server key bound to the test's connecting address (127.0.0.1) unless told otherwise. */
const serverKey = (body: Record<string, unknown> = {}) =>
  makeKey(gw, orgId, { kind: "server", domain: undefined, name: "Backend", ip_allow: ["127.0.0.1/32"], ...body });
const ask = (params: Record<string, unknown>) => gw.call(PATH, { method: "POST", body: params });

function corsHeaders(headers: Headers): string[] {
  return [...headers.keys()].filter((name) => name.startsWith("access-control-"));
}

/** interface.md 5.3: a secret answer is signed exactly like a verify answer. */
function signatureValid(apiKey: string, keyId: number, body: { ts: number; signature: string }, domain: string, nonce?: string): boolean {
  const parts: unknown[] = [body.ts, keyId, 1, domain];
  if (nonce) parts.push(nonce);
  const expected = createHmac("sha256", apiKey).update(parts.join(".")).digest();
  const got = Buffer.from(body.signature, "hex");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

describe("secret answers", () => {
  it("answers the value to a server key from an allowed address, signed like verify, never cached, no CORS", async () => {
    const made = await serverKey();
    const nonce = "0123456789abcdef0123456789abcdef";
    const answer = await ask({ key: made.key, name: "stripe_key", nonce });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      name: "stripe_key",
      value: PLAINTEXT,
      ts: expect.any(Number),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
      nonce,
      attestation: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(signatureValid(made.key, made.id, answer.body, "", nonce)).toBe(true);
    expect(signatureValid(made.key, made.id, answer.body, "", "other")).toBe(false);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(corsHeaders(answer.headers)).toEqual([]);
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    expect(Math.abs(answer.body.ts - now)).toBeLessThanOrEqual(2);

    const form = await gw.call("/api/v1/secret", { method: "POST", form: { key: made.key, name: "stripe_key" } });
    expect(form.status).toBe(200);
    expect(form.body).not.toHaveProperty("nonce");
    expect(signatureValid(made.key, made.id, form.body, "")).toBe(true);
  });

  it("covers the domain when the key has a lock", async () => {
    const made = await serverKey({ domain: "example.com" });
    const answer = await ask({ key: made.key, name: "stripe_key", domain: "api.example.com" });
    expect(answer.status).toBe(200);
    expect(signatureValid(made.key, made.id, answer.body, "api.example.com")).toBe(true);
    expect((await ask({ key: made.key, name: "stripe_key" })).body.reason).toBe("domain_mismatch");
  });

  it("shows a changed value on the next call", async () => {
    const made = await serverKey();
    await putSecret(gw, orgId, "rotating", "v1");
    expect((await ask({ key: made.key, name: "rotating" })).body.value).toBe("v1");
    await putSecret(gw, orgId, "rotating", "v2");
    expect((await ask({ key: made.key, name: "rotating" })).body.value).toBe("v2");
    await gw.admin("DELETE", `/orgs/${orgId}/secrets/rotating`);
    expect((await ask({ key: made.key, name: "rotating" })).body.reason).toBe("unknown_secret");
  });
});

describe("the attestation (docs/secret.md)", () => {
  const raw = async (params: Record<string, unknown>) => {
    const answer = await rawCall(gw, PATH, { body: JSON.stringify(params) });
    expect(answer.status, answer.text).toBe(200);
    return { text: answer.text, body: JSON.parse(answer.text) as { ts: number; value: string; attestation: string } };
  };

  it("verifies with keys.json alone and binds key, organization, domain, name, the exact value text and the nonce", async () => {
    const made = await serverKey({ domain: "example.com" });
    // A value whose JSON text has escapes: the digest is of the text as in the body.
    await putSecret(gw, orgId, "quoted", 'a "quoted" \\ välue\n');
    const nonce = "n-0123456789";
    const { text, body } = await raw({ key: made.key, name: "quoted", domain: "api.example.com", nonce });
    expect(text.endsWith(`,"attestation":"${body.attestation}"}`)).toBe(true);
    const valueText = text.slice(text.indexOf('"value":') + '"value":'.length, text.indexOf(',"ts":'));
    expect(JSON.parse(valueText)).toBe('a "quoted" \\ välue\n');
    const checked = await attested(gw, body.attestation);
    expect(checked?.header).toMatchObject({ alg: "EdDSA", typ: "JWT" });
    expect(checked?.claims).toEqual({
      typ: "secret",
      iss: gw.ingress.deps.baseUrl(),
      key: made.id,
      org: orgId,
      dom: "api.example.com",
      name: "quoted",
      sha: sha256Hex(valueText),
      nonce,
      iat: body.ts,
      exp: body.ts + 120,
    });
    expect(sha256Hex(JSON.stringify(body.value))).toBe(checked?.claims.sha);

    const bare = await ask({ key: made.key, name: "stripe_key", domain: "example.com" });
    const claims = (await attested(gw, bare.body.attestation))?.claims;
    expect(claims).toMatchObject({ typ: "secret", dom: "example.com", name: "stripe_key", sha: sha256Hex(JSON.stringify(PLAINTEXT)) });
    expect(claims).not.toHaveProperty("nonce");
    expect(bare.body.attestation).not.toContain(PLAINTEXT);
  });

  it("is signed per call with a nonce; without one reused within 60 s until the value changes", async () => {
    const made = await serverKey();
    await putSecret(gw, orgId, "reused", "v1");
    const token = async (nonce?: string) =>
      (await ask({ key: made.key, name: "reused", ...(nonce === undefined ? {} : { nonce }) })).body.attestation as string;
    const a = await token("nonce-a");
    const b = await token("nonce-b");
    expect(a).not.toBe(b);
    expect((await attested(gw, b))?.claims.nonce).toBe("nonce-b");
    const plain = await token();
    await advance(gw, 5);
    expect(await token()).toBe(plain);
    await putSecret(gw, orgId, "reused", "v2");
    const changed = await token();
    expect(changed).not.toBe(plain);
    expect((await attested(gw, changed))?.claims.sha).toBe(sha256Hex(JSON.stringify("v2")));
    await advance(gw, 61);
    expect(await token()).not.toBe(changed);
  });
});

describe("methods and CORS", () => {
  it("refuses every method but POST with 405 and Allow: POST, without CORS headers; no preflight answer", async () => {
    const made = await serverKey();
    for (const method of ["GET", "PUT", "DELETE", "PATCH", "HEAD"]) {
      for (const path of [PATH, "/api/v1/secret"]) {
        const answer = await gw.call(path, { method, query: { key: made.key, name: "stripe_key" } });
        expect(answer.status, `${method} ${path}`).toBe(405);
        if (method !== "HEAD") expect(answer.body).toEqual({ ok: false, reason: "method_not_allowed", message: expect.any(String) });
        expect(answer.headers.get("allow")).toBe("POST");
        expect(corsHeaders(answer.headers)).toEqual([]);
        expect(JSON.stringify(answer.body)).not.toContain(PLAINTEXT);
      }
    }
    const preflight = await gw.call(PATH, {
      method: "OPTIONS",
      headers: { origin: "https://example.com", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(405);
    expect(corsHeaders(preflight.headers)).toEqual([]);
  });

  it("refuses a query string on POST with 400 bad_request, uncounted, whatever it holds and even with a good body", async () => {
    const made = await serverKey();
    const before = await usedOf(gw, orgId);
    const attempts: { query: Record<string, string>; body?: Record<string, string>; form?: Record<string, string> }[] = [
      { query: { key: made.key, name: "stripe_key" } },
      { query: { key: made.key }, body: { name: "stripe_key" } },
      { query: { cachebust: "1" }, body: { key: made.key, name: "stripe_key" } },
      { query: { cachebust: "1" }, form: { key: made.key, name: "stripe_key" } },
    ];
    for (const [i, attempt] of attempts.entries()) {
      for (const path of [PATH, "/api/v1/secret"]) {
        const answer = await gw.call(path, { method: "POST", ...attempt });
        expect([i, path, answer.status]).toEqual([i, path, 400]);
        expect(answer.body).toEqual({ ok: false, reason: "bad_request", message: REASONS.bad_request.message, detail: expect.any(String) });
        expect(answer.headers.get("cache-control")).toBe("no-store");
        expect(corsHeaders(answer.headers)).toEqual([]);
        expect(JSON.stringify(answer.body)).not.toContain(PLAINTEXT);
      }
    }
    expect(await usedOf(gw, orgId)).toBe(before);
    // The body alone is answered; the other endpoints still read the query string on POST.
    expect((await ask({ key: made.key, name: "stripe_key" })).body.value).toBe(PLAINTEXT);
    const client = await makeKey(gw, orgId, { kind: "client", domain: "example.com" });
    const verified = await gw.call("/api/v1/verify.php", { method: "POST", query: { key: client.key }, body: { domain: "example.com" } });
    expect(verified.body).toMatchObject({ authorized: true });
  });

  it("sends no CORS header on refusals either", async () => {
    const answer = await ask({ key: "sk_live_unknown", name: "stripe_key" });
    expect(answer.status).toBe(401);
    expect(corsHeaders(answer.headers)).toEqual([]);
    expect(answer.headers.get("cache-control")).toBe("no-store");
  });
});

interface Case {
  reason: keyof typeof REASONS;
  counts: boolean;
  arrange: () => Promise<{ made: MadeKey | null; params: Record<string, unknown> }>;
}

const CASES: Case[] = [
  { reason: "missing_key", counts: false, arrange: async () => ({ made: null, params: { name: "stripe_key" } }) },
  {
    reason: "invalid_key",
    counts: false,
    arrange: async () => ({ made: null, params: { key: "sk_live_neverissued", name: "stripe_key" } }),
  },
  {
    reason: "server_key_required",
    counts: false,
    arrange: async () => {
      const made = await makeKey(gw, orgId, { kind: "client", domain: "example.com", ip_allow: ["127.0.0.1"] });
      return { made, params: { key: made.key, name: "stripe_key", domain: "example.com" } };
    },
  },
  {
    reason: "ip_binding_required",
    counts: false,
    arrange: async () => {
      const made = await serverKey({ ip_allow: [] });
      return { made, params: { key: made.key, name: "stripe_key" } };
    },
  },
  {
    reason: "ip_not_allowed",
    counts: true,
    arrange: async () => {
      // The ip parameter names an allowed address; only the connecting one (127.0.0.1) counts.
      const made = await serverKey({ ip_allow: ["10.0.0.0/8"] });
      return { made, params: { key: made.key, name: "stripe_key", ip: "10.1.2.3" } };
    },
  },
  {
    reason: "ip_blocked",
    counts: true,
    arrange: async () => {
      const made = await serverKey({ ip_allow: ["0.0.0.0/0"], ip_deny: ["127.0.0.1"] });
      return { made, params: { key: made.key, name: "stripe_key", ip: "8.8.8.8" } };
    },
  },
  {
    reason: "key_suspended",
    counts: false,
    arrange: async () => {
      const made = await serverKey();
      await gw.admin("POST", `/keys/${made.id}/suspend`);
      return { made, params: { key: made.key, name: "stripe_key" } };
    },
  },
  {
    reason: "missing_name",
    counts: true,
    arrange: async () => {
      const made = await serverKey();
      return { made, params: { key: made.key } };
    },
  },
  {
    reason: "unknown_secret",
    counts: true,
    arrange: async () => {
      const made = await serverKey();
      return { made, params: { key: made.key, name: "nope" } };
    },
  },
];

describe("refusals", () => {
  for (const c of CASES) {
    it(c.reason, async () => {
      const { made, params } = await c.arrange();
      const before = made ? await usedOf(gw, made.orgId) : 0;
      const answer = await ask(params);
      expect(answer.status).toBe(REASONS[c.reason].status);
      expect(answer.body).toEqual({ ok: false, reason: c.reason, message: expect.any(String) });
      expect(corsHeaders(answer.headers)).toEqual([]);
      if (made) expect(await usedOf(gw, made.orgId)).toBe(before + (c.counts ? 1 : 0));
    });
  }

  it("the ip parameter never lets a key in from another address", async () => {
    const bound = await serverKey({ ip_binding: false });
    expect((await ask({ key: bound.key, name: "stripe_key", ip: "10.9.9.9" })).body.value).toBe(PLAINTEXT);
  });

  it("missing_name for an empty or non-string name; unknown_secret for one that cannot exist", async () => {
    const made = await serverKey();
    expect((await ask({ key: made.key, name: "" })).body.reason).toBe("missing_name");
    expect((await ask({ key: made.key, name: { a: 1 } })).body.reason).toBe("missing_name");
    for (const name of ["has space", "x".repeat(500), "__proto__", "constructor"]) {
      expect((await ask({ key: made.key, name })).body.reason, name).toBe("unknown_secret");
    }
  });

  it("records usage under the endpoint label secret", async () => {
    const made = await serverKey();
    await ask({ key: made.key, name: "stripe_key" });
    await ask({ key: made.key, name: "nope" });
    expect(await usageTally(gw, orgId, made.id)).toEqual({ "secret/ok/1": 1, "secret/unknown_secret/1": 1 });
  });
});

describe("at rest", () => {
  it("no dump of the database holds the plaintext: SELECT *, sealed::text, every row of every table", async () => {
    const needles = [PLAINTEXT, Buffer.from(PLAINTEXT).toString("hex"), Buffer.from(PLAINTEXT).toString("base64")];
    const { rows } = await gw.ctx.db.query("SELECT * FROM secrets");
    expect(rows.length).toBeGreaterThan(0);
    const star = JSON.stringify(rows.map((r) => ({ ...r, sealed: (r.sealed as Buffer).toString("latin1") })));
    const text = (await gw.ctx.db.query<{ t: string }>("SELECT sealed::text AS t, encode(sealed, 'escape') AS e FROM secrets")).rows;
    const { rows: tables } = await gw.ctx.db.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    let dump = "";
    for (const { name } of tables) {
      const { rows: all } = await gw.ctx.db.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
      dump += all.map((r) => r.row).join("\n");
    }
    for (const needle of needles) {
      expect(star).not.toContain(needle);
      expect(JSON.stringify(text)).not.toContain(needle);
      expect(dump).not.toContain(needle);
    }
    expect(dump).toContain("stripe_key");
    // Nor does Redis: the snapshot holds the sealed bytes.
    const cached = await gw.ctx.redis.hgetall(gw.ctx.keys.secretSnapshot(orgId));
    for (const needle of needles) expect(JSON.stringify(cached)).not.toContain(needle);
  });

  it("a sealed value moved to another name does not open (503, not the value)", async () => {
    const made = await serverKey();
    const sealed = await gw.ctx.redis.hget(gw.ctx.keys.secretSnapshot(orgId), "stripe_key");
    await gw.ctx.redis.hset(gw.ctx.keys.secretSnapshot(orgId), "moved", sealed ?? "");
    const answer = await ask({ key: made.key, name: "moved" });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ ok: false, reason: "unavailable" });
    expect(JSON.stringify(answer.body)).not.toContain(PLAINTEXT);
    await gw.ctx.redis.hdel(gw.ctx.keys.secretSnapshot(orgId), "moved");
  });
});
