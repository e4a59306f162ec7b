import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, waitFor } from "../../helpers/gateway.js";
import { attestedHost } from "../../../shared/client/index.js";
import { attested, putContent, rawCall, sha256Hex, usageTally } from "./content-fixtures.js";
import { advance, clientSetup, makeKey, makeOrg, patchKey, usedOf, verifyDomain, type MadeKey } from "./verify-fixtures.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("content");
});
afterAll(async () => {
  await gw?.stop();
});

const call = (params: Record<string, unknown>, headers?: Record<string, string>) =>
  gw.call("/api/v1/content.php", { method: "POST", body: params, headers });

/**
 * The client's side of interface.md 5.3 for content, written from docs/content.md alone:
 * the signed content text is the raw body between the first `"content":` and the last
 * `,"ts":`, never a re-serialization.
 */
function checkSignature(apiKey: string, rawBody: string): { valid: boolean; contentText: string } {
  const start = rawBody.indexOf('"content":') + '"content":'.length;
  const end = rawBody.lastIndexOf(',"ts":');
  const contentText = rawBody.slice(start, end);
  const body = JSON.parse(rawBody) as { ts: number; domain: string; signature: string };
  const expected = createHmac("sha256", apiKey).update(`${body.ts}.${body.domain}.${contentText}`).digest();
  const got = Buffer.from(body.signature, "hex");
  return { valid: got.length === expected.length && timingSafeEqual(got, expected), contentText };
}

const ITEMS = [
  ["greeting", "text", 'Hello, "world" ,"ts": ünïcødé'],
  ["banner", "html", "<b>Sale</b> <script>alert(1)</script>"],
  ["settings", "json", { theme: "dark", "10": [1, 2.5, null], "9": { nested: true }, ts: 1, 'a"b': "x" }],
  ["list", "json", [1, "two", { three: 3 }]],
  ["nothing", "json", null],
  ["price", "number", 19.99],
  ["count", "number", -3],
  ["enabled", "boolean", true],
  ["disabled", "boolean", false],
  ["10", "text", "numeric key"],
  ["9", "text", "numeric key too"],
  ["__proto__", "text", "not a prototype"],
] as const;

let shared: MadeKey;
beforeAll(async () => {
  shared = await clientSetup(gw);
  for (const [key, type, value] of ITEMS) await putContent(gw, shared.orgId, key, type, value);
});

describe("content answers", () => {
  it("returns every value of the organization with type, value (JSON as JSON) and updated_at", async () => {
    const answer = await call({ key: shared.key, domain: "example.com" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(answer.body)).toEqual(["ok", "domain", "content", "ts", "signature", "latency_ms", "attestation"]);
    expect(answer.body).toMatchObject({ ok: true, domain: "example.com" });
    expect(Number.isInteger(answer.body.ts)).toBe(true);
    expect(Number.isInteger(answer.body.latency_ms)).toBe(true);
    expect(answer.body.signature).toMatch(/^[0-9a-f]{64}$/);
    const content = answer.body.content as Record<string, { type: string; value: unknown; updated_at: string }>;
    expect(Object.keys(content).sort()).toEqual(ITEMS.map(([k]) => k).sort());
    for (const [key, type, value] of ITEMS) {
      expect(Object.hasOwn(content, key), key).toBe(true);
      expect(content[key], key).toEqual({ type, value, updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/) });
    }
    expect(typeof content.settings.value).toBe("object");
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    expect(Math.abs(Date.parse(content.price.updated_at) / 1000 - now)).toBeLessThan(60);
  });

  it("answers GET, POST JSON and POST form, under content.php and content", async () => {
    const params = { key: shared.key, domain: "example.com" };
    const answers = [
      await gw.call("/api/v1/content.php", { query: params }),
      await gw.call("/api/v1/content.php", { method: "POST", form: params }),
      await gw.call("/api/v1/content", { method: "POST", body: params }),
      await gw.call("/api/v1/content", { query: { ...params, content_key: "price" } }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.ok).toBe(true);
      expect(a.headers.get("access-control-allow-origin")).toBe("*");
    }
    const preflight = await gw.call("/api/v1/content.php", { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("returns one value by content_key; an absent one is 404 not_found, counted", async () => {
    const one = await call({ key: shared.key, domain: "example.com", content_key: "settings" });
    expect(one.status).toBe(200);
    expect(one.body.content).toEqual({ settings: { type: "json", value: ITEMS[2][2], updated_at: expect.any(String) } });
    const before = await usedOf(gw, shared.orgId);
    for (const contentKey of ["nope", "has space", "x".repeat(300), "constructor"]) {
      const absent = await call({ key: shared.key, domain: "example.com", content_key: contentKey });
      expect(absent.status, contentKey).toBe(404);
      expect(absent.body).toEqual({ ok: false, reason: "not_found", message: expect.any(String) });
      expect(absent.headers.get("access-control-allow-origin")).toBe("*");
    }
    expect(await usedOf(gw, shared.orgId)).toBe(before + 4);
    const empty = await call({ key: shared.key, domain: "example.com", content_key: "" });
    expect(Object.keys(empty.body.content)).toHaveLength(ITEMS.length);
    expect((await call({ key: shared.key, domain: "example.com", content_key: { a: 1 } })).body.reason).toBe("bad_request");
    expect((await call({ key: shared.key, domain: "example.com", content_key: ["price"] })).body.reason).toBe("bad_request");
    expect(Object.keys((await call({ key: shared.key, domain: "example.com", content_key: 10 })).body.content)).toEqual(["10"]);
  });

  it("an organization without content answers an empty object", async () => {
    const made = await clientSetup(gw);
    const answer = await rawCall(gw, "/api/v1/content.php", { body: JSON.stringify({ key: made.key, domain: "example.com" }) });
    expect(answer.status).toBe(200);
    expect(checkSignature(made.key, answer.text)).toEqual({ valid: true, contentText: "{}" });
  });
});

describe("the content signature (interface.md 5.3)", () => {
  it("is HMAC-SHA256 of ts.domain.content over the exact content text of the raw body", async () => {
    for (const params of [
      { domain: "example.com" },
      { domain: "www.example.com", content_key: "settings" },
      { domain: "example.com", content_key: "greeting" },
    ]) {
      const answer = await rawCall(gw, "/api/v1/content.php", { body: JSON.stringify({ key: shared.key, ...params }) });
      expect(answer.status).toBe(200);
      const { valid, contentText } = checkSignature(shared.key, answer.text);
      expect(valid, answer.text).toBe(true);
      const body = JSON.parse(answer.text);
      expect(JSON.parse(contentText)).toEqual(body.content);
      expect(body.domain).toBe(params.domain);
      // In JavaScript the parsed object re-serializes to the same text (key order included).
      expect(JSON.stringify(body.content)).toBe(contentText);
      // Tampering with any part breaks it.
      const tampered = answer.text.replace('"type":"', '"type":"x');
      expect(checkSignature(shared.key, tampered).valid).toBe(false);
      expect(checkSignature(`${shared.key}x`, answer.text).valid).toBe(false);
    }
  });

  it("signs an empty domain for a key without a lock called without one", async () => {
    const server = await makeKey(gw, shared.orgId, { kind: "server", domain: undefined, name: "Backend" });
    const answer = await rawCall(gw, "/api/v1/content.php", { body: JSON.stringify({ key: server.key, content_key: "price" }) });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).domain).toBe("");
    expect(checkSignature(server.key, answer.text).valid).toBe(true);
  });
});

describe("the attestation (docs/content.md)", () => {
  const attestationOf = async (key: string, params: Record<string, unknown>) => {
    const answer = await rawCall(gw, "/api/v1/content.php", { body: JSON.stringify({ key, ...params }) });
    expect(answer.status, answer.text).toBe(200);
    const body = JSON.parse(answer.text) as { ts: number; domain: string; attestation: string };
    return { raw: answer.text, body, token: body.attestation };
  };

  it("verifies with keys.json alone and binds key, organization, domain, content key and the exact content text", async () => {
    const keysJson = await gw.call("/api/v1/keys.json");
    expect(keysJson.body.tokens.types).toEqual(expect.arrayContaining(["content", "secret"]));
    const kid = keysJson.body.keys[0].kid;
    for (const [params, host] of [
      [{ domain: "example.com" }, "example.com"],
      [{ domain: "https://www.example.com/pricing?x=1", content_key: "settings" }, "www.example.com"],
      [{ domain: "example.com", content_key: "greeting" }, "example.com"],
    ] as const) {
      const { raw, body, token } = await attestationOf(shared.key, params);
      // Last field, after latency_ms: the content text rule (up to the last `,"ts":`) still holds.
      expect(raw).toMatch(/,"latency_ms":\d+,"attestation":"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"}$/);
      const { contentText } = checkSignature(shared.key, raw);
      const checked = await attested(gw, token);
      expect(checked?.header).toEqual({ alg: "EdDSA", typ: "JWT", kid });
      expect(checked?.claims).toEqual({
        typ: "content",
        iss: gw.ingress.deps.baseUrl(),
        key: shared.id,
        org: shared.orgId,
        dom: host,
        ck: "content_key" in params ? params.content_key : null,
        sha: sha256Hex(contentText),
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
      const claims = checked?.claims as { iat: number; exp: number };
      expect(claims.exp - claims.iat).toBe(120);
      expect(body.ts - claims.iat).toBeGreaterThanOrEqual(0);
      expect(body.ts - claims.iat).toBeLessThan(60);
      expect(body.domain).toBe(params.domain);
    }
  });

  it("names the host of the domain: every path and form of one host shares one attestation, which the client accepts", async () => {
    const made = await clientSetup(gw);
    await putContent(gw, made.orgId, "banner", "text", "hello");
    const forms = [
      "example.com",
      "https://example.com/a?b=1",
      "HTTP://Example.COM:8443/x",
      "example.com.",
      "example.com/path/" + "p".repeat(200),
    ];
    const answers = [];
    for (const domain of forms) answers.push(await attestationOf(made.key, { domain }));
    // One signature for the host within the reuse minute, whatever the path: a varied path forces none.
    expect(new Set(answers.map((a) => a.token)).size).toBe(1);
    expect((await attested(gw, answers[0].token))?.claims).toMatchObject({ dom: "example.com" });
    // Each answer still echoes and HMAC-signs the domain exactly as sent.
    for (const [i, a] of answers.entries()) expect(a.body.domain).toBe(forms[i]);
    for (const [domain, host] of [
      ["", ""],
      ["https://www.Example.com/", "www.example.com"],
      ["example.com..", "example.com"],
      ["bücher.example", "xn--bcher-kva.example"],
      ["[::1]:80", "[::1]"],
      ["javascript:alert(1)", ""],
    ]) {
      expect(attestedHost(domain), domain).toBe(host);
    }
  });

  it("binds the content_key asked for, even when one value and every value are the same text", async () => {
    // The organization's only content key is named "null": the answer for it and the answer for
    // every value have the same content text, and "null" must still not read as every value.
    const made = await clientSetup(gw);
    await putContent(gw, made.orgId, "null", "text", "only one");
    const claimsOf = async (token: string) => (await attested(gw, token))?.claims;
    const all = await attestationOf(made.key, { domain: "example.com" });
    const one = await attestationOf(made.key, { domain: "example.com", content_key: "null" });
    expect(checkSignature(made.key, one.raw).contentText).toBe(checkSignature(made.key, all.raw).contentText);
    expect(await claimsOf(all.token)).toMatchObject({ ck: null, sha: sha256Hex(checkSignature(made.key, all.raw).contentText) });
    expect(await claimsOf(one.token)).toMatchObject({ ck: "null", sha: sha256Hex(checkSignature(made.key, one.raw).contentText) });
    // Within the reuse minute, each request keeps its own attestation; an empty content_key is every value.
    expect((await attestationOf(made.key, { domain: "example.com", content_key: "" })).token).toBe(all.token);
    expect((await attestationOf(made.key, { domain: "example.com", content_key: "null" })).token).toBe(one.token);
    // A JSON number is taken as its digits, in the claim as in the lookup.
    await putContent(gw, made.orgId, "10", "text", "ten");
    expect(await claimsOf((await attestationOf(made.key, { domain: "example.com", content_key: 10 })).token)).toMatchObject({ ck: "10" });
  });

  it("does not cover content that was changed in the answer", async () => {
    const { raw, token } = await attestationOf(shared.key, { domain: "example.com", content_key: "price" });
    const tampered = raw.replace('"value":19.99', '"value":0.01');
    expect(tampered).not.toBe(raw);
    const { contentText } = checkSignature(shared.key, tampered);
    expect((await attested(gw, token))?.claims.sha).not.toBe(sha256Hex(contentText));
    // Claims cannot be edited under the signature either.
    const [h, p, s] = token.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...claims, sha: sha256Hex(contentText) })).toString("base64url");
    expect(await attested(gw, `${h}.${edited}.${s}`)).toBeNull();
  });

  it("is reused within 60 s for the same answer, and signed afresh for new content, a changed key or after a minute", async () => {
    const made = await clientSetup(gw);
    await putContent(gw, made.orgId, "motd", "text", "first");
    const ask = async (domain = "example.com") => (await attestationOf(made.key, { domain, content_key: "motd" })).token;
    const first = await ask();
    // Seconds later: a token signed afresh would carry another iat.
    await advance(gw, 5);
    expect(await ask()).toBe(first);
    const otherDomain = await ask("www.example.com");
    expect(otherDomain).not.toBe(first);
    expect((await attested(gw, otherDomain))?.claims.dom).toBe("www.example.com");

    await putContent(gw, made.orgId, "motd", "text", "second");
    const changed = await ask();
    expect(changed).not.toBe(first);
    expect((await attested(gw, changed))?.claims.sha).not.toBe((await attested(gw, first))?.claims.sha);
    await advance(gw, 5);
    expect(await ask()).toBe(changed);

    // A new key snapshot version (the key was edited), same content: signed afresh.
    await patchKey(gw, made.id, { name: "Renamed" });
    const afterEdit = await ask();
    expect(afterEdit).not.toBe(changed);
    expect((await attested(gw, afterEdit))?.claims.sha).toBe((await attested(gw, changed))?.claims.sha);

    await advance(gw, 61);
    const later = await ask();
    expect(later).not.toBe(afterEdit);
    const iat = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8")).iat as number;
    expect(iat(later) - iat(afterEdit)).toBeGreaterThanOrEqual(61);
  });
});

describe("updates", () => {
  it("shows an admin change on the very next call, and a deletion as not_found", async () => {
    const made = await clientSetup(gw);
    await putContent(gw, made.orgId, "motd", "text", "first");
    const ask = () => call({ key: made.key, domain: "example.com", content_key: "motd" });
    expect((await ask()).body.content.motd.value).toBe("first");
    const changedAt = Date.now();
    await putContent(gw, made.orgId, "motd", "text", "second");
    await waitFor(async () => (await ask()).body.content?.motd?.value === "second", 1000, 10);
    expect(Date.now() - changedAt).toBeLessThan(1000);
    expect((await ask()).body.content.motd.type).toBe("text");
    await putContent(gw, made.orgId, "motd", "number", 3);
    expect((await ask()).body.content.motd).toMatchObject({ type: "number", value: 3 });
    expect((await gw.admin("DELETE", `/orgs/${made.orgId}/content/motd`)).status).toBe(200);
    const gone = await ask();
    expect(gone.status).toBe(404);
    expect(gone.body.reason).toBe("not_found");
  });

  it("never shows another organization's content", async () => {
    const orgId = await makeOrg(gw);
    await verifyDomain(gw, orgId, "other.example.org");
    const other = await makeKey(gw, orgId, { domain: "other.example.org" });
    await putContent(gw, orgId, "secret_plan", "text", "theirs");
    const mine = await call({ key: shared.key, domain: "example.com" });
    expect(mine.body.content).not.toHaveProperty("secret_plan");
    const theirs = await call({ key: other.key, domain: "other.example.org" });
    expect(Object.keys(theirs.body.content)).toEqual(["secret_plan"]);
    expect((await call({ key: other.key, domain: "other.example.org", content_key: "greeting" })).status).toBe(404);
  });

  it("counts answered calls under the endpoint label content", async () => {
    const made = await clientSetup(gw);
    await putContent(gw, made.orgId, "a", "text", "x");
    await call({ key: made.key, domain: "example.com" });
    await call({ key: made.key, domain: "example.com", content_key: "a" });
    await call({ key: made.key, domain: "example.com", content_key: "b" });
    expect(await usageTally(gw, made.orgId, made.id)).toEqual({ "content/ok/1": 2, "content/not_found/1": 1 });
  });
});
