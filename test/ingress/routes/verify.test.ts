import { createHash, createHmac, createPublicKey, timingSafeEqual, verify as verifySig } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, makeKey, makeOrg, verify } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("verify");
});
afterAll(async () => {
  await gw?.stop();
});

/** The client's side of interface.md 5.3, written from the contract alone. */
function signatureValid(apiKey: string, body: Record<string, unknown>, sentNonce: string | undefined, nowS: number): boolean {
  const parts = [body.ts, (body.key as { id: number }).id, 1, body.domain];
  if (sentNonce) parts.push(sentNonce);
  const expected = createHmac("sha256", apiKey).update(parts.join(".")).digest();
  const got = Buffer.from(String(body.signature), "hex");
  return got.length === expected.length && timingSafeEqual(got, expected) && Math.abs(nowS - Number(body.ts)) <= Number(body.expires_in);
}

/** Offline check of a token with only the published JWK: Ed25519 over "header.payload". */
function offline(token: string, jwk: Record<string, unknown>): Record<string, unknown> | null {
  const [header, payload, signature] = token.split(".");
  const key = createPublicKey({ key: jwk as { kty: string; crv: string; x: string }, format: "jwk" });
  if (!verifySig(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"))) return null;
  return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
}

describe("verify answers", () => {
  it("answers GET, POST JSON and POST form, under verify.php and verify, with CORS", async () => {
    const k = await clientSetup(gw);
    const params = { key: k.key, domain: "example.com" };
    const answers = [
      await gw.call("/api/v1/verify.php", { query: params }),
      await gw.call("/api/v1/verify.php", { method: "POST", body: params }),
      await gw.call("/api/v1/verify.php", { method: "POST", form: params }),
      await gw.call("/api/v1/verify", { method: "POST", body: params }),
      await gw.call("/api/v1/verify.php", {
        method: "POST",
        body: new URLSearchParams(params).toString(),
        headers: { "content-type": "text/plain" },
      }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toMatchObject({ authorized: true, reason: "ok", domain: "example.com", expires_in: 120 });
      expect(a.headers.get("access-control-allow-origin")).toBe("*");
    }
    const preflight = await gw.call("/api/v1/verify.php", { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("carries the public key object and the success fields of 2.2", async () => {
    const k = await clientSetup(gw, { scopes: ["read", "write"], industry: "retail", is_trial: true, environment: "staging" });
    const { body } = await verify(gw, { key: k.key, domain: "www.example.com" });
    expect(body.key).toEqual({
      id: k.id,
      name: "Site",
      prefix: k.details.prefix,
      environment: "staging",
      industry: "retail",
      scopes: "read,write",
      domain: "example.com",
      is_trial: true,
      expires_at: String(k.details.expires_at).replace("T", " ").replace("Z", ""),
    });
    // The public 2.1 forms stay in verify answers; admin details carry the operator forms (ISO, the list).
    expect(body.key.expires_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(k.details.scopes).toEqual(["read", "write"]);
    expect(JSON.stringify(body)).not.toContain(k.key);
    expect(Number.isInteger(body.latency_ms)).toBe(true);
    expect(Number.isInteger(body.ts)).toBe(true);
    const now = (await gw.admin("GET", "/clock")).body.now;
    expect(Math.abs(body.ts - now)).toBeLessThanOrEqual(2);
    expect(body.entitlement_expires - body.ts).toBeGreaterThan(7 * 86400 - 61);
    expect(body.entitlement_expires - body.ts).toBeLessThanOrEqual(7 * 86400);
    expect(body).not.toHaveProperty("nonce");
    expect(body).not.toHaveProperty("firewall");
    expect(typeof body.browser_guard).toBe("string");
  });

  it("signs ts.keyId.1.domain[.nonce] with the API key; the nonce is echoed", async () => {
    const k = await clientSetup(gw);
    const clock = async () => (await gw.admin("GET", "/clock")).body.now as number;
    const withNonce = await verify(gw, { key: k.key, domain: "example.com", nonce: "0f1e2d3c4b5a69788796a5b4c3d2e1f0" });
    expect(withNonce.body.nonce).toBe("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
    expect(signatureValid(k.key, withNonce.body, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", await clock())).toBe(true);
    expect(signatureValid(k.key, withNonce.body, undefined, await clock())).toBe(false);
    expect(signatureValid("ak_live_other", withNonce.body, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", await clock())).toBe(false);
    const noNonce = await verify(gw, { key: k.key, domain: "example.com" });
    expect(signatureValid(k.key, noNonce.body, undefined, await clock())).toBe(true);
    const emptyNonce = await verify(gw, { key: k.key, domain: "example.com", nonce: "" });
    expect(emptyNonce.body).not.toHaveProperty("nonce");
    expect(signatureValid(k.key, emptyNonce.body, undefined, await clock())).toBe(true);
    // A stale answer fails the freshness half of the check.
    expect(signatureValid(k.key, noNonce.body, undefined, (await clock()) + 121)).toBe(false);
  });

  it("echoes a nonce of any characters byte for byte: multi-byte UTF-8, quotes, backslashes and control characters", async () => {
    const k = await clientSetup(gw);
    const clock = async () => (await gw.admin("GET", "/clock")).body.now as number;
    const nonce = 'ñ✓😀 "q" \\ \u0001 é';
    // Twice on one connection: a wrong Content-Length would cut the first answer or run into the second.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw.url}/api/v1/verify.php`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ key: k.key, domain: "example.com", nonce }),
      });
      const raw = Buffer.from(await res.arrayBuffer());
      expect(res.status).toBe(200);
      expect(Number(res.headers.get("content-length"))).toBe(raw.length);
      const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      expect(body.nonce).toBe(nonce);
      expect(body.authorized).toBe(true);
      expect(signatureValid(k.key, body, nonce, await clock())).toBe(true);
    }
  });

  it("issues entitlement and lifeline that verify offline with only keys.json", async () => {
    const k = await clientSetup(gw);
    const published = await gw.call("/api/v1/keys.json");
    expect(published.status).toBe(200);
    expect(published.headers.get("access-control-allow-origin")).toBe("*");
    const jwk = published.body.keys[0];
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA" });
    const { body } = await verify(gw, { key: k.key, domain: "Example.com.", install: "site-1" });
    const entitlement = offline(body.entitlement, jwk);
    const lifeline = offline(body.lifeline, jwk);
    expect(entitlement).toMatchObject({ typ: "entitlement", key: k.id, dom: "example.com", exp: body.entitlement_expires });
    expect(lifeline).toMatchObject({
      typ: "lifeline",
      key: k.id,
      ent: entitlement?.jti,
      ins: createHash("sha256").update("site-1").digest("hex"),
    });
    expect(Number(entitlement?.exp)).toBeGreaterThan(body.ts);
    const [h, , s] = String(body.entitlement).split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...entitlement, key: 999 })).toString("base64url")}.${s}`;
    expect(offline(forged, jwk)).toBeNull();
  });

  it("reuses a signed entitlement for about a minute, then signs a fresh one", async () => {
    const k = await clientSetup(gw);
    const first = await verify(gw, { key: k.key, domain: "example.com", install: "a" });
    const again = await verify(gw, { key: k.key, domain: "example.com", install: "a" });
    expect(again.body.entitlement).toBe(first.body.entitlement);
    await advance(gw, 61);
    const later = await verify(gw, { key: k.key, domain: "example.com", install: "a" });
    expect(later.body.entitlement).not.toBe(first.body.entitlement);
    expect(later.body.entitlement_expires).toBeGreaterThan(first.body.entitlement_expires);
  });

  it("keys the reused entitlement by the host it names: a path or query after the host is the same entry", async () => {
    const k = await clientSetup(gw);
    const first = await verify(gw, { key: k.key, domain: "https://www.example.com/a?x=1", install: "h" });
    expect(first.body.authorized).toBe(true);
    for (const domain of ["https://www.example.com/b?y=2", "WWW.EXAMPLE.COM.", "www.example.com:8443"]) {
      // Seconds later: a token signed afresh would carry another time.
      await advance(gw, 5);
      const again = await verify(gw, { key: k.key, domain, install: "h" });
      expect(again.body.entitlement, domain).toBe(first.body.entitlement);
    }
    // Another host is another token (it names another host).
    const other = await verify(gw, { key: k.key, domain: "shop.example.com", install: "h" });
    expect(other.body.entitlement).not.toBe(first.body.entitlement);
  });

  it("sends browser_guard to client keys only and firewall to server keys only", async () => {
    const orgId = await makeOrg(gw);
    const server = await makeKey(gw, orgId, { kind: "server", domain: null, firewall: { block_paths: ["/wp-admin"] } });
    const bare = await makeKey(gw, orgId, { kind: "server", domain: null, name: "bare" });
    const s = await verify(gw, { key: server.key });
    expect(s.status).toBe(200);
    expect(s.body.firewall).toEqual({ block_paths: ["/wp-admin"] });
    expect(s.body).not.toHaveProperty("browser_guard");
    expect(s.body.domain).toBe("");
    const b = await verify(gw, { key: bare.key });
    expect(b.body).not.toHaveProperty("firewall");
    expect(b.body).not.toHaveProperty("browser_guard");
  });

  it("adds a notice for an outdated client library", async () => {
    const k = await clientSetup(gw);
    const old = await verify(gw, { key: k.key, domain: "example.com", client: "gateway-js/1.4.2" });
    expect(old.body.notice).toMatch(/gateway-js 1\.4\.2 is outdated/);
    const current = await verify(gw, { key: k.key, domain: "example.com", client: "gateway-js/2.1.0" });
    expect(current.body).not.toHaveProperty("notice");
    const header = await verify(gw, { key: k.key, domain: "example.com" }, { "x-gateway-client": "gateway-php/1.0" });
    expect(header.body.notice).toMatch(/gateway-php/);
    const bare = await verify(gw, { key: k.key, domain: "example.com", sdk_version: "0.9.0" });
    expect(bare.body.notice).toMatch(/outdated/);
  });

  it("refuses a malformed body, an over-long nonce and an unstorable installation id with bad_request", async () => {
    const k = await clientSetup(gw);
    for (const extra of [{ nonce: "n".repeat(257) }, { install: "a\u0000b" }]) {
      const refused = await verify(gw, { key: k.key, domain: "example.com", ...extra });
      expect(refused.status).toBe(400);
      expect(refused.body.reason).toBe("bad_request");
    }
    const bad = await gw.call("/api/v1/verify.php", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ authorized: false, reason: "bad_request" });
  });
});
