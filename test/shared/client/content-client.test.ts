import { createHmac, generateKeyPairSync, sign as cryptoSign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAttestation, type ContentResult, contentText, createVerifyClient, valueText } from "../../../shared/client/index.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { putContent, putSecret, sha256Hex } from "../../ingress/routes/content-fixtures.js";
import { clientSetup, makeKey, type MadeKey } from "../../ingress/routes/verify-fixtures.js";

/**
 * The client's content() (shared/client, docs/client.md "Content") against the real
 * gateway: an answer is believed only when its HMAC and its Ed25519 attestation check, so
 * whoever holds the client key (anyone: it is in the page) cannot make up content.
 */

let gw: TestGateway;
let base: string;
let made: MadeKey;
beforeAll(async () => {
  gw = await startTestGateway("content-client");
  base = `${gw.url}/api/v1`;
  made = await clientSetup(gw);
  await putContent(gw, made.orgId, "price", "number", 19.99);
  await putContent(gw, made.orgId, "motd", "text", 'Hello ,"ts": "world"');
});
afterAll(async () => {
  await gw?.stop();
});

type Rewrite = (raw: string) => string | Promise<string>;

/** fetch that can rewrite content.php's raw body, or answer 503 like a proxy. */
function transport() {
  const state: { rewrite: Rewrite | null; down: boolean; calls: string[] } = { rewrite: null, down: false, calls: [] };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    state.calls.push(url.replace(base, ""));
    if (state.down) return new Response('{"ok":false,"reason":"unavailable"}', { status: 503 });
    const response = await fetch(url, init);
    if (state.rewrite === null || !url.endsWith("/content.php")) return response;
    return new Response(await state.rewrite(await response.text()), { status: response.status, headers: response.headers });
  }) as typeof fetch;
  return { state, fetch: fetchFn };
}

/** A genuine content answer's raw text, straight from the service. */
async function genuine(key: string, params: Record<string, string>): Promise<string> {
  const response = await fetch(`${base}/content.php`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key, ...params }),
  });
  return response.text();
}

/** What anyone holding the client key can do: a valid HMAC over whatever content they like. */
function resign(raw: string, key: string): string {
  const body = JSON.parse(raw) as { ts: number; domain: string; signature: string };
  const text = raw.slice(raw.indexOf('"content":') + 10, raw.lastIndexOf(',"ts":'));
  const signature = createHmac("sha256", key).update(`${body.ts}.${body.domain}.${text}`).digest("hex");
  return raw.replace(body.signature, signature);
}

const attestationOf = (raw: string) => (JSON.parse(raw) as { attestation: string }).attestation;
const withAttestation = (raw: string, token: string) => raw.replace(attestationOf(raw), token);

function expectOk(result: ContentResult) {
  expect(result, JSON.stringify(result)).toMatchObject({ ok: true, source: "service" });
}

describe("content()", () => {
  it("returns the content with its attestation's claims, the key id learned from a checked verify answer", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, fetch: t.fetch });
    expect(await client.verify({ domain: "example.com" })).toMatchObject({ authorized: true });
    const result = await client.content({ domain: "example.com" });
    expectOk(result);
    if (!result.ok) throw new Error("unreachable");
    expect(result.content.price).toEqual({ type: "number", value: 19.99, updated_at: expect.any(String) });
    expect(result.content.motd.value).toBe('Hello ,"ts": "world"');
    expect(result.attestation).toMatchObject({
      typ: "content",
      iss: base,
      key: made.id,
      org: made.orgId,
      dom: "example.com",
      ck: null,
      sha: sha256Hex(JSON.stringify(result.answer.content)),
    });
    expect(t.state.calls.filter((c) => c === "/keys.json")).toHaveLength(1);
    const one = await client.content({ domain: "example.com", contentKey: "price" });
    expect(one.ok && Object.keys(one.content)).toEqual(["price"]);
    expect(one.ok && one.attestation.ck).toBe("price");
  });

  it("accepts an answer for a domain with a path: the attestation names its host", async () => {
    const client = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id });
    const result = await client.content({ domain: "https://Example.com/pricing?plan=pro" });
    expectOk(result);
    expect(result.ok && result.attestation.dom).toBe("example.com");
  });

  it("takes the key id from the options, and refuses to believe an answer for a key whose id it does not know", async () => {
    const named = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id });
    expectOk(await named.content({ domain: "example.com" }));
    const unknown = createVerifyClient({ baseUrl: base, key: made.key });
    expect(await unknown.content({ domain: "example.com" })).toMatchObject({
      ok: false,
      source: "client",
      reason: "bad_attestation",
      message: expect.stringContaining("id is unknown"),
    });
    expectOk(await unknown.content({ domain: "example.com", keyId: made.id }));
    // Another key's id: the attestation names this key.
    expect(await unknown.content({ domain: "example.com", keyId: made.id + 1000 })).toMatchObject({
      ok: false,
      reason: "bad_attestation",
      message: expect.stringContaining("another key"),
    });
  });

  it("refuses content changed in transit even with a valid HMAC (the client key is public)", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id, fetch: t.fetch });
    const kid = JSON.parse(
      Buffer.from(attestationOf(await genuine(made.key, { domain: "example.com" })).split(".")[0], "base64url").toString(),
    ).kid as string;
    const other = await makeKey(gw, made.orgId, { name: "Other" });
    const impostor = generateKeyPairSync("ed25519");
    const impostorSigned = (raw: string) => {
      const text = raw.slice(raw.indexOf('"content":') + 10, raw.lastIndexOf(',"ts":'));
      const iat = JSON.parse(raw).ts as number;
      const claims = {
        typ: "content",
        iss: base,
        key: made.id,
        org: made.orgId,
        dom: "example.com",
        ck: null,
        sha: sha256Hex(text),
        iat,
        exp: iat + 120,
      };
      const head = Buffer.from(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid })).toString("base64url");
      const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
      return `${head}.${body}.${cryptoSign(null, Buffer.from(`${head}.${body}`), impostor.privateKey).toString("base64url")}`;
    };
    const cases: [string, Rewrite, string, string][] = [
      ["a value changed, HMAC left", (raw) => raw.replace("19.99", "0.01"), "bad_signature", ""],
      [
        "a value changed, HMAC recomputed with the client key",
        (raw) => resign(raw.replace("19.99", "0.01"), made.key),
        "bad_attestation",
        "content changed",
      ],
      [
        "a value removed, HMAC recomputed",
        (raw) => resign(raw.replace(/,"price":\{[^}]*\}/, ""), made.key),
        "bad_attestation",
        "content changed",
      ],
      ["no attestation", (raw) => raw.replace(/,"attestation":"[^"]*"/, ""), "bad_attestation", "malformed"],
      [
        "the genuine attestation of another domain's answer",
        async (raw) => withAttestation(raw, attestationOf(await genuine(made.key, { domain: "www.example.com" }))),
        "bad_attestation",
        "another domain",
      ],
      [
        "the genuine attestation of another key's answer",
        async (raw) => withAttestation(raw, attestationOf(await genuine(other.key, { domain: "example.com" }))),
        "bad_attestation",
        "another key",
      ],
      [
        "an attestation over the forged content, signed by an impostor under the real kid",
        (raw) => {
          const forged = resign(raw.replace("19.99", "0.01"), made.key);
          return withAttestation(forged, impostorSigned(forged));
        },
        "bad_attestation",
        "bad signature",
      ],
    ];
    for (const [what, rewrite, reason, why] of cases) {
      t.state.rewrite = rewrite;
      const result = await client.content({ domain: "example.com" });
      expect(result, what).toMatchObject({ ok: false, source: "client", reason, message: expect.stringContaining(why) });
    }
    // A second `content` appended after the checked one: a parser would read that one, so the body is refused.
    t.state.rewrite = (raw) => `${raw.slice(0, -1)},"content":{"price":{"type":"number","value":0.01,"updated_at":"x"}}}`;
    expect(await client.content({ domain: "example.com" })).toMatchObject({ ok: false, source: "client", reason: "bad_signature" });
  });

  it("refuses a genuine answer to another request: one content key for every value, every value for one, another key", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id, fetch: t.fetch });
    // Whole genuine bodies from the service (HMAC and attestation intact), served for another call.
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ["one value served for every value", {}, { content_key: "price" }],
      ["every value served for one", { contentKey: "price" }, {}],
      ["another value served for one", { contentKey: "price" }, { content_key: "motd" }],
    ];
    for (const [what, asked, served] of cases) {
      t.state.rewrite = () => genuine(made.key, { domain: "example.com", ...served });
      expect(await client.content({ domain: "example.com", ...asked }), what).toMatchObject({
        ok: false,
        source: "client",
        reason: "bad_attestation",
        message: expect.stringContaining("another content key"),
      });
    }
    t.state.rewrite = null;
    expectOk(await client.content({ domain: "example.com", contentKey: "price" }));
    // checkAttestation directly: `ck` omitted, null or "" is every value.
    const raw = await genuine(made.key, { domain: "example.com", content_key: "price" });
    const keys = await client.keys();
    if (keys === null) throw new Error("keys.json unavailable");
    const expected = { typ: "content", iss: base, keyId: made.id, dom: "example.com", text: contentText(raw) ?? "" } as const;
    const nowS = Math.floor(Date.now() / 1000);
    expect(await checkAttestation(attestationOf(raw), keys, { ...expected, ck: "price", nowS })).toMatchObject({ ok: true });
    for (const ck of [undefined, null, ""]) {
      expect(await checkAttestation(attestationOf(raw), keys, { ...expected, ck, nowS })).toMatchObject({
        ok: false,
        why: "another content key",
      });
    }
  });

  it("refuses a genuine answer outside its validity (a replay, or this machine's clock off)", async () => {
    const ahead = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id, now: () => Date.now() + 180_000 });
    expect(await ahead.content({ domain: "example.com" })).toMatchObject({ ok: false, source: "client", reason: "stale_answer" });
    const behind = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id, now: () => Date.now() - 300_000 });
    expect(await behind.content({ domain: "example.com" })).toMatchObject({ ok: false, source: "client", reason: "stale_answer" });
  });

  it("passes on the service's refusals, and a 5xx or no answer is unreachable", async () => {
    const t = transport();
    const client = createVerifyClient({ baseUrl: base, key: made.key, keyId: made.id, fetch: t.fetch });
    expect(await client.content({ domain: "example.com", contentKey: "absent" })).toMatchObject({
      ok: false,
      source: "service",
      reason: "not_found",
      status: 404,
    });
    expect(await client.content({ domain: "elsewhere.example.net" })).toMatchObject({
      ok: false,
      source: "service",
      reason: "domain_mismatch",
    });
    t.state.down = true;
    expect(await client.content({ domain: "example.com" })).toMatchObject({
      ok: false,
      source: "client",
      reason: "unreachable",
      fault: "HTTP 503",
    });
  });
});

describe("checkAttestation for a secret answer", () => {
  it("checks name, value text and nonce against keys.json", async () => {
    const server = await makeKey(gw, made.orgId, { kind: "server", domain: undefined, name: "Backend", ip_allow: ["127.0.0.1/32"] });
    await putSecret(gw, made.orgId, "api_token", 'tok "quoted" \\ ünï');
    const response = await fetch(`${base}/secret.php`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: server.key, name: "api_token", nonce: "n-1" }),
    });
    const raw = await response.text();
    const keys = await createVerifyClient({ baseUrl: base }).keys();
    if (keys === null) throw new Error("keys.json unavailable");
    const text = valueText(raw) ?? "";
    expect(JSON.parse(text)).toBe('tok "quoted" \\ ünï');
    // A second `value` appended: JSON.parse(raw).value would be it, not the text checked.
    expect(valueText(`${raw.slice(0, -1)},"value":"evil"}`)).toBeNull();
    const token = (JSON.parse(raw) as { attestation: string }).attestation;
    const expected = {
      typ: "secret",
      iss: base,
      keyId: server.id,
      dom: "",
      name: "api_token",
      nonce: "n-1",
      text,
      nowS: Math.floor(Date.now() / 1000),
    } as const;
    expect(await checkAttestation(token, keys, expected)).toMatchObject({
      ok: true,
      claims: { typ: "secret", name: "api_token", nonce: "n-1" },
    });
    expect(await checkAttestation(token, keys, { ...expected, text: JSON.stringify("another value") })).toMatchObject({
      ok: false,
      why: "value changed",
    });
    expect(await checkAttestation(token, keys, { ...expected, name: "other_name" })).toMatchObject({
      ok: false,
      why: "another secret or nonce",
    });
    expect(await checkAttestation(token, keys, { ...expected, nonce: undefined })).toMatchObject({
      ok: false,
      why: "another secret or nonce",
    });
    expect(await checkAttestation(token, keys, { ...expected, typ: "content" })).toMatchObject({ ok: false, why: "wrong token type" });
  });
});

describe("contentText and valueText", () => {
  const content = (value: string) => `{"a":{"type":"json","value":${value},"updated_at":"2026-05-01T09:30:00Z"}}`;
  const contentBody = (text: string) =>
    `{"ok":true,"domain":"","content":${text},"ts":1777628000,"signature":"00","latency_ms":0,"attestation":"h.p.s"}`;
  const secretBody = (text: string) => `{"ok":true,"name":"n","value":${text},"ts":1777628000,"signature":"00","attestation":"h.p.s"}`;
  const append = (raw: string, extra: string) => `${raw.slice(0, -1)},${extra}}`;

  it("return the text when the parsed body's field is exactly its value", () => {
    expect(contentText(contentBody(content('{"x":[1,"y",null]}')))).toBe(content('{"x":[1,"y",null]}'));
    expect(valueText(secretBody('"v \\"q\\""'))).toBe('"v \\"q\\""');
  });

  it("return null when a duplicate field makes JSON.parse(raw) read another value than the text cut", () => {
    const raw = contentBody(content("null"));
    for (const extra of [
      `"content":${content("0.01")}`,
      // Parses to Infinity and -0, which JSON.stringify writes back as null and 0.
      `"content":${content("1e999")}`,
      `"content":{"a":{"value":null,"type":"json","updated_at":"2026-05-01T09:30:00Z"}}`,
    ]) {
      expect(contentText(append(raw, extra)), extra).toBeNull();
    }
    expect(contentText(append(contentBody(content("0")), `"content":${content("-0")}`))).toBeNull();
    expect(valueText(append(secretBody('"genuine"'), '"value":"evil"'))).toBeNull();
    expect(valueText(append(secretBody('"genuine"'), '"value":["genuine"]'))).toBeNull();
    // A duplicate before the real one: the text cut from the first is not what the parser keeps.
    expect(valueText(`{"value":"evil",${secretBody('"genuine"').slice(1)}`)).toBeNull();
    expect(contentText("not json")).toBeNull();
  });
});
