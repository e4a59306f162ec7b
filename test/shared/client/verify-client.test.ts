import { createHash, createHmac, generateKeyPairSync, sign as cryptoSign } from "node:crypto";
import { request as httpRequest } from "node:http";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIngress } from "../../../ingress/main.js";
import { createVerifyClient, memoryStore, type VerifyResult } from "../../../shared/client/index.js";
import { loadConfig } from "../../../shared/platform/config.js";
import { openContext } from "../../../shared/platform/context.js";
import { deriveSigningKey } from "../../../shared/platform/crypto/entitlement.js";
import { silentLogger } from "../../../shared/platform/log.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, patchKey, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The verify client (shared/client) against the real gateway: signature and ts checks,
 * the entitlement cache checked offline, fail-open on 5xx and on a stopped ingress,
 * close-at-once on a refusal, kid rotation. Transport faults are injected through the
 * client's `fetch` option (what a proxy answering 503 looks like to it).
 */

/**
 * The service's public address: a TCP forwarder to the current ingress. SITE_URL names it,
 * so `iss` stays the same when the ingress behind it is stopped or replaced (a rotation).
 */
const front: { server: Server | null; target: number } = { server: null, target: 0 };
let gw: TestGateway;
let base: string;
beforeAll(async () => {
  const server = createServer((socket) => {
    const upstream = connect(front.target, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  front.server = server;
  const site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startTestGateway("verify-client", { SITE_URL: site });
  front.target = gw.ingress.port;
  base = `${site}/api/v1`;
});
afterAll(async () => {
  await gw?.stop();
  await new Promise((resolve) => front.server?.close(resolve));
});

/**
 * fetch over a new connection per request (node:http, no agent): a stopped ingress then
 * refuses the connection, where a pooled keep-alive connection would still be answered.
 */
function freshFetch(input: string, init?: RequestInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      input,
      { method: init?.method ?? "GET", agent: false, headers: (init?.headers ?? {}) as Record<string, string> },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers }));
        });
      },
    );
    req.on("error", reject);
    req.end(typeof init?.body === "string" ? init.body : undefined);
  });
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Mode = "pass" | "503" | "down" | { rewrite: (body: Record<string, unknown>) => Record<string, unknown> };

/** fetch through a switch: pass, a 503 from "a proxy", a refused connection, or a rewritten verify answer. */
function transport() {
  const state: { mode: Mode; calls: string[] } = { mode: "pass", calls: [] };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    state.calls.push(url.replace(base, ""));
    const mode = state.mode;
    if (mode === "503") return new Response('{"ok":false,"reason":"unavailable"}', { status: 503 });
    if (mode === "down") throw new TypeError("fetch failed: connect ECONNREFUSED");
    const response = await freshFetch(url, init);
    if (mode === "pass" || !url.endsWith("/verify.php")) return response;
    const body = mode.rewrite((await response.json()) as Record<string, unknown>);
    return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
  }) as typeof fetch;
  return { state, fetch: fetchFn };
}

function expectAuthorized(result: VerifyResult, source: "service" | "entitlement") {
  expect(result, JSON.stringify(result)).toMatchObject({ authorized: true, source, reason: "ok" });
}

describe("verify client", () => {
  let made: MadeKey;
  beforeAll(async () => {
    made = await clientSetup(gw);
    // Every client of this key names the same installation: once a key has one, a call
    // naming none is the pending "(unnamed)" installation (docs/security.md, item 4).
  });

  it("accepts a signed, fresh answer and keeps a checked entitlement", async () => {
    const store = memoryStore();
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", store, fetch: t.fetch });
    const result = await client.verify({ domain: "www.example.com" });
    expectAuthorized(result, "service");
    if (!result.authorized || result.source !== "service") throw new Error("unreachable");
    expect(result.answer.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(result.entitlement).toMatchObject({ typ: "entitlement", key: made.id, dom: "www.example.com", iss: base });
    expect(t.state.calls).toEqual(["/verify.php", "/keys.json"]);
    await client.verify({ domain: "www.example.com" });
    expect(t.state.calls.filter((c) => c === "/keys.json")).toHaveLength(1); // keys.json cached with its max-age
  });

  it("refuses a tampered answer and a stale one", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", fetch: t.fetch });
    const tampered: [string, (b: Record<string, unknown>) => Record<string, unknown>][] = [
      ["domain", (b) => ({ ...b, domain: "evil.example.com" })],
      ["domain and nothing else", (b) => ({ ...b, domain: "Example.com" })],
      ["signature", (b) => ({ ...b, signature: String(b.signature).replace(/^./, (c) => (c === "0" ? "1" : "0")) })],
      ["ts", (b) => ({ ...b, ts: Number(b.ts) - 1 })],
      ["key id", (b) => ({ ...b, key: { ...(b.key as object), id: made.id + 1 } })],
      ["nonce of another call", (b) => ({ ...b, nonce: "0".repeat(32) })],
    ];
    for (const [what, rewrite] of tampered) {
      t.state.mode = { rewrite };
      const result = await client.verify({ domain: "example.com" });
      // The nonce echo is not what is checked: the client signs over the nonce it sent.
      if (what === "nonce of another call") expectAuthorized(result, "service");
      else expect(result, what).toMatchObject({ authorized: false, source: "client", reason: "bad_signature" });
    }
    // A replayed (genuine) answer whose ts is outside the window: the client's clock is 3 minutes ahead.
    const late = createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", now: () => Date.now() + 180_000 });
    expect(await late.verify({ domain: "example.com" })).toMatchObject({ authorized: false, source: "client", reason: "stale_answer" });
    // expires_in is not signed: a larger one is not believed.
    const s = transport();
    s.state.mode = { rewrite: (b) => ({ ...b, expires_in: 86_400 }) };
    expect(
      await createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", now: () => Date.now() + 180_000, fetch: s.fetch }).verify(
        { domain: "example.com" },
      ),
    ).toMatchObject({ authorized: false, reason: "stale_answer" });
  });

  it("never reads a success as authorized when its entitlement does not check (a client key's HMAC is public)", async () => {
    const own = await clientSetup(gw);
    const store = memoryStore();
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: own.key, install: "site-5", store, fetch: t.fetch });
    expectAuthorized(await client.verify({ domain: "example.com" }), "service");
    const kid = (await client.keys())?.keys[0].kid;
    // Anyone holding the client key (it is in the page source) computes a valid HMAC; only
    // the Ed25519 tokens are out of reach. An impostor's own Ed25519 key, under the real kid:
    const impostor = generateKeyPairSync("ed25519");
    const jws = (claims: Record<string, unknown>) => {
      const head = Buffer.from(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid })).toString("base64url");
      const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
      return `${head}.${body}.${cryptoSign(null, Buffer.from(`${head}.${body}`), impostor.privateKey).toString("base64url")}`;
    };
    const nowS = Math.floor(Date.now() / 1000);
    const forgedEntitlement = {
      typ: "entitlement",
      iss: base,
      key: own.id,
      org: 1,
      dom: "example.com",
      scp: "full_access",
      env: "production",
      trial: false,
      iat: nowS,
      exp: nowS + 86_400,
      jti: "forged",
    };
    const forgedLifeline = {
      typ: "lifeline",
      iss: base,
      key: own.id,
      dom: "example.com",
      ins: createHash("sha256").update("site-5").digest("hex"),
      ent: "forged",
      iat: nowS,
      exp: nowS + 86_400,
    };
    // A character early in the signature part (the last one only carries padding bits).
    const flip = (token: unknown) =>
      String(token).replace(/\.(.)([^.]*)$/, (_, c: string, rest: string) => `.${c === "A" ? "B" : "A"}${rest}`);
    const rewrites: [string, (b: Record<string, unknown>) => Record<string, unknown>][] = [
      ["entitlement not a token", (b) => ({ ...b, entitlement: "x.y.z" })],
      ["entitlement signature", (b) => ({ ...b, entitlement: flip(b.entitlement) })],
      ["lifeline signature", (b) => ({ ...b, lifeline: flip(b.lifeline) })],
      ["no tokens", (b) => ({ ...b, entitlement: undefined, lifeline: undefined })],
      ["tokens signed by an impostor", (b) => ({ ...b, entitlement: jws(forgedEntitlement), lifeline: jws(forgedLifeline) })],
    ];
    for (const [what, rewrite] of rewrites) {
      t.state.mode = { rewrite };
      expect(await client.verify({ domain: "example.com" }), what).toMatchObject({
        authorized: false,
        source: "client",
        reason: "bad_entitlement",
      });
    }
    // A whole answer made up by whoever sits on the transport, HMAC and all.
    const forger = (async (input: string | URL | Request, init?: RequestInit) => {
      if (!String(input).endsWith("/verify.php")) return t.fetch(input, init);
      const asked = JSON.parse(String(init?.body)) as { domain: string; nonce: string };
      const ts = Math.floor(Date.now() / 1000);
      const signature = createHmac("sha256", own.key).update(`${ts}.${own.id}.1.${asked.domain}.${asked.nonce}`).digest("hex");
      const answer = {
        authorized: true,
        reason: "ok",
        domain: asked.domain,
        nonce: asked.nonce,
        ts,
        expires_in: 120,
        signature,
        latency_ms: 1,
        key: {
          id: own.id,
          name: "x",
          prefix: "ak_live_",
          environment: "production",
          industry: "",
          scopes: "full_access",
          domain: "example.com",
          is_trial: false,
          expires_at: "",
        },
        entitlement: jws(forgedEntitlement),
        entitlement_expires: nowS + 86_400,
        lifeline: jws(forgedLifeline),
      };
      return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
    }) as typeof fetch;
    const fooled = createVerifyClient({ baseUrl: base, key: own.key, install: "site-5", store, fetch: forger });
    expect(await fooled.verify({ domain: "example.com" })).toMatchObject({
      authorized: false,
      source: "client",
      reason: "bad_entitlement",
    });
    // keys.json out of reach and none cached: nothing to check the tokens with, so no.
    const noKeys = (async (input: string | URL | Request, init?: RequestInit) =>
      String(input).endsWith("/keys.json") ? new Response("{}", { status: 503 }) : freshFetch(String(input), init)) as typeof fetch;
    expect(
      await createVerifyClient({ baseUrl: base, key: own.key, install: "site-5", fetch: noKeys }).verify({ domain: "example.com" }),
    ).toMatchObject({
      authorized: false,
      source: "client",
      reason: "bad_entitlement",
      message: expect.stringContaining("keys.json unavailable"),
    });
    // As for a tampered answer, the cache checked earlier stays: the service did not refuse.
    t.state.mode = "down";
    expectAuthorized(await client.verify({ domain: "example.com" }), "entitlement");
  });

  it("serves on the cached entitlement while the service answers 5xx, until it expires", async () => {
    const t = transport();
    let offsetMs = 0;
    const own = await clientSetup(gw);
    const client = createVerifyClient({ baseUrl: base, key: own.key, install: "site-2", fetch: t.fetch, now: () => Date.now() + offsetMs });
    t.state.mode = "503";
    expect(await client.verify({ domain: "example.com" })).toMatchObject({ authorized: false, source: "client", reason: "unreachable" });
    t.state.mode = "pass";
    expectAuthorized(await client.verify({ domain: "example.com" }), "service");
    for (const mode of ["503", "down"] as const) {
      t.state.mode = mode;
      const served = await client.verify({ domain: "example.com" });
      expectAuthorized(served, "entitlement");
      expect(served).toMatchObject({
        entitlement: { key: own.id, dom: "example.com" },
        fault: mode === "503" ? "HTTP 503" : expect.stringContaining("ECONNREFUSED"),
      });
    }
    // Only for the domain it was issued for.
    expect(await client.verify({ domain: "shop.example.com" })).toMatchObject({ authorized: false, reason: "unreachable" });
    offsetMs = 7 * 86_400_000 + 1000;
    expect(await client.verify({ domain: "example.com" })).toMatchObject({
      authorized: false,
      reason: "unreachable",
      fault: expect.stringContaining("expired"),
    });
  });

  it("the lifeline binds the cache to its installation", async () => {
    const store = memoryStore();
    const t = transport();
    const own = await clientSetup(gw);
    const first = createVerifyClient({ baseUrl: base, key: own.key, install: "site-3", store, fetch: t.fetch });
    expectAuthorized(await first.verify({ domain: "example.com" }), "service");
    // Someone copies the cache to another installation: the lifeline names site-3, not site-4.
    expect(await store.get("keys.json")).toBeTruthy();
    t.state.mode = "down";
    const copied = createVerifyClient({ baseUrl: base, key: own.key, install: "site-4", store, fetch: t.fetch });
    expect(await copied.verify({ domain: "example.com" })).toMatchObject({ authorized: false, reason: "unreachable" });
    expectAuthorized(await first.verify({ domain: "example.com" }), "entitlement");
  });

  it("closes at once on a refusal and forgets the cache", async () => {
    const key = await clientSetup(gw);
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: key.key, fetch: t.fetch });
    expectAuthorized(await client.verify({ domain: "example.com" }), "service");
    await gw.admin("POST", `/keys/${key.id}/suspend`);
    const refused = await client.verify({ domain: "example.com" });
    expect(refused).toMatchObject({ authorized: false, source: "service", reason: "key_suspended", status: 403 });
    t.state.mode = "503";
    expect(await client.verify({ domain: "example.com" })).toMatchObject({ authorized: false, source: "client", reason: "unreachable" });
    t.state.mode = "pass";
    expect(await client.verify({ domain: "other.example.net" })).toMatchObject({ authorized: false, source: "service" });
  });

  it("prints a notice once", async () => {
    const notices: string[] = [];
    const client = createVerifyClient({
      baseUrl: base,
      key: made.key,
      install: "site-1",
      client: "gateway-js/1.4.2",
      onNotice: (n) => notices.push(n),
    });
    for (let i = 0; i < 3; i++) expectAuthorized(await client.verify({ domain: "example.com" }), "service");
    expect(notices).toEqual(["gateway-js 1.4.2 is outdated: upgrade to 2.0.0 or later."]);
    const current: string[] = [];
    await createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", onNotice: (n) => current.push(n) }).verify({
      domain: "example.com",
    });
    expect(current).toEqual([]);
  });

  it("ingress gone → serves on the entitlement; the service comes back with a rotated key → keys.json refetched by kid", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, install: "site-1", fetch: t.fetch });
    const before = await client.verify({ domain: "example.com" });
    expectAuthorized(before, "service");
    const oldKid = (await client.keys())?.keys[0].kid;
    // The ingress goes away: the address behind the service's name refuses connections.
    front.target = await deadPort();
    const offline = await client.verify({ domain: "example.com" });
    expectAuthorized(offline, "entitlement");
    expect(offline).toMatchObject({ fault: expect.any(String) });
    // The deployment's master secret changed: a new Ed25519 key, a new kid, behind the same address.
    const rotatedSecret = Buffer.from("b3d87cdeda8949c80e1a93a072eb5f5936e85d8c3b563bd3143bce109bc8ef13", "hex");
    const ctx = await openContext(loadConfig({ ...gw.env, GATEWAY_SECRET: rotatedSecret.toString("hex") }), "test", {
      logger: silentLogger(),
    });
    const rotated = await startIngress(ctx);
    const original = gw.ingress;
    gw.ingress = {
      ...original,
      stop: async () => {
        await rotated.stop();
        await ctx.close();
        await original.stop();
      },
    };
    front.target = rotated.port;
    const newKid = deriveSigningKey(rotatedSecret).kid;
    expect(newKid).not.toBe(oldKid);
    t.state.calls.length = 0;
    const after = await client.verify({ domain: "example.com" });
    expectAuthorized(after, "service");
    expect(after.authorized && after.source === "service" && after.entitlement?.jti).toBeTruthy();
    expect(t.state.calls).toEqual(["/verify.php", "/keys.json"]); // fresh cache, unknown kid: refetched
    expect((await client.keys())?.keys.map((k) => k.kid)).toEqual([newKid]);
    t.state.mode = "down";
    expectAuthorized(await client.verify({ domain: "example.com" }), "entitlement");
  });
});

describe("patchKey is available to other client tests", () => {
  it("changes the domain lock the client sees", async () => {
    const key = await clientSetup(gw);
    await patchKey(gw, key.id, { name: "Renamed" });
    const result = await createVerifyClient({ baseUrl: base, key: key.key }).verify({ domain: "example.com" });
    expect(result.authorized && result.source === "service" && result.answer.key.name).toBe("Renamed");
  });
});
