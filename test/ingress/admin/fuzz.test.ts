import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { startDnsServer, type TestDnsServer } from "./dns-server.js";

/**
 * Bad input never gives a 5xx. Every admin route and every public path gets garbage:
 * raw bytes, broken JSON, wrong types, hostile unicode, deep nesting, path traversal,
 * broken percent-encoding, oversized bodies. A refusal must be a 4xx with a reason.
 */

let gw: TestGateway;
let dns: TestDnsServer;
let orgId: number;
const keyIds: number[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  gw = await startTestGateway("fuzz", { DNS_RESOLVER: dns.resolver });
  orgId = (await gw.admin("POST", "/orgs", { name: "Fuzz", plan: "enterprise" })).body.org.id;
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "fuzz.example.com" });
  for (let i = 0; i < 16; i++) {
    keyIds.push(
      (await gw.admin("POST", `/orgs/${orgId}/keys`, { name: `k${i}`, kind: "client", domain: "fuzz.example.com" })).body.details.id,
    );
  }
});
afterAll(async () => {
  await gw?.stop();
  await dns?.close();
});

/** Deterministic pseudo-random numbers (mulberry32): a failure replays the same way. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function nested(depth: number, leaf: unknown = "x"): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

const GARBAGE_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53 + 1,
  1e308,
  -1e308,
  "",
  " ",
  "0",
  "true",
  "null",
  "x".repeat(5000),
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff\ud800",
  "😀".repeat(300),
  "\u202eevil",
  "e\u0301\u0301\u0301",
  "../../../etc/passwd",
  "..\\..\\windows",
  "%E0%A4%A",
  "%00",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  `$${"{"}jndi:ldap://x}`,
  "2024-02-30",
  "0000-01-01T00:00:00Z",
  "10.0.0.0/99",
  "ZZ",
  "javascript:alert(1)",
  "http://[::1",
  "xn--",
  "-.-",
  [],
  [null],
  [[[]]],
  [1, "a", {}],
  Array.from({ length: 300 }, (_, i) => `v${i}`),
  ["\u0000"],
  {},
  { a: 1 },
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  nested(40),
  nested(10),
  { enabled: "\ud800" },
  { rules: [{ a: "\u0000" }] },
];

const RAW_BODIES: (string | Buffer)[] = [
  "",
  " ",
  "{",
  "}",
  "{}}",
  "[]",
  "[1,2",
  "null",
  "true",
  "123",
  '"string"',
  "{'single':1}",
  '{"a":1,}',
  '{"a":1,"a":2}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  "a=b&c=d",
  "key=%E0%A4%A",
  `{"${"k".repeat(10_000)}":1}`,
  `${"[".repeat(50_000)}${"]".repeat(50_000)}`,
  `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`,
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
  Buffer.from([0xff, 0xfe, 0x00, 0x7b]),
  Buffer.from([0xc3, 0x28, 0xa0, 0xa1]),
  "\u0000\u0000",
  '{"name":"\\ud800"}',
  '{"name":"\\u0000"}',
  '{"name":1e999}',
  '{"name":-0}',
];

const PATH_GARBAGE = [
  "%E0%A4%A",
  "%",
  "%%",
  "%zz",
  "%00",
  "%2e%2e",
  "..",
  ".",
  "%2F",
  "..%2F..%2Fetc%2Fpasswd",
  "0",
  "-1",
  "1.5",
  "1e3",
  "99999999999999999999",
  "０",
  "١",
  "x".repeat(3000),
  "%F0%9F%98%80",
  "%ED%A0%80",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "%20",
  "+",
];

interface Route {
  method: string;
  path: (id: number) => string;
  base: Record<string, unknown>;
  fields: string[];
}

const KEY_FIELDS = [
  "name",
  "kind",
  "domain",
  "environment",
  "industry",
  "scopes",
  "ip_allow",
  "ip_deny",
  "ip_binding",
  "countries_allow",
  "countries_block",
  "rate_per_minute",
  "rate_per_source_per_minute",
  "is_trial",
  "expires_at",
  "botcheck",
  "firewall",
  "content_origin",
];

function routes(): Route[] {
  const org = () => `/orgs/${orgId}`;
  return [
    { method: "POST", path: () => "/orgs", base: { name: "F" }, fields: ["name", "plan", "fix_target_days", "subscription"] },
    { method: "GET", path: () => `${org()}`, base: {}, fields: [] },
    { method: "PATCH", path: () => `${org()}`, base: {}, fields: ["name", "plan", "fix_target_days", "subscription"] },
    { method: "POST", path: () => `${org()}/members`, base: { name: "M", email: "m@example.com" }, fields: ["name", "email", "role"] },
    { method: "POST", path: () => `${org()}/domains`, base: { domain: "new.example.com" }, fields: ["domain", "verified"] },
    { method: "POST", path: () => `${org()}/domains/fuzz.example.com/verify`, base: {}, fields: ["domain"] },
    { method: "POST", path: () => `${org()}/keys`, base: { name: "K", kind: "server" }, fields: KEY_FIELDS },
    { method: "GET", path: (id) => `/keys/${id}`, base: {}, fields: [] },
    { method: "PATCH", path: (id) => `/keys/${id}`, base: {}, fields: KEY_FIELDS },
    { method: "POST", path: (id) => `/keys/${id}/suspend`, base: {}, fields: ["status"] },
    { method: "POST", path: (id) => `/keys/${id}/resume`, base: {}, fields: ["status"] },
    { method: "GET", path: (id) => `/keys/${id}/installations`, base: {}, fields: [] },
    { method: "POST", path: (id) => `/keys/${id}/installations/inst-1/approve`, base: {}, fields: ["install"] },
    { method: "POST", path: (id) => `/keys/${id}/installations/inst-1/block`, base: {}, fields: ["install"] },
    { method: "GET", path: (id) => `/keys/${id}/usage`, base: {}, fields: [] },
    { method: "PUT", path: () => `${org()}/content/banner`, base: { type: "json", value: 1 }, fields: ["type", "value"] },
    { method: "PUT", path: () => `${org()}/content/headline`, base: { type: "text", value: "x" }, fields: ["type", "value"] },
    { method: "DELETE", path: () => `${org()}/content/banner`, base: {}, fields: ["value"] },
    { method: "PUT", path: () => `${org()}/secrets/api_token`, base: { value: "s3cret" }, fields: ["value"] },
    { method: "DELETE", path: () => `${org()}/secrets/api_token`, base: {}, fields: ["value"] },
    {
      method: "POST",
      path: () => `${org()}/risks`,
      base: { domain: "fuzz.example.com", finding_key: "web:hsts" },
      fields: ["domain", "finding_key", "note", "expires_at"],
    },
    { method: "DELETE", path: () => `${org()}/risks/fuzz.example.com/web:hsts`, base: {}, fields: ["domain"] },
    { method: "GET", path: () => "/clock", base: {}, fields: [] },
    { method: "POST", path: () => "/clock", base: {}, fields: ["advance_s"] },
    // Last: they consume their key.
    { method: "POST", path: (id) => `/keys/${id}/rotate`, base: {}, fields: ["kind", "grace_s"] },
    { method: "POST", path: (id) => `/keys/${id}/revoke`, base: {}, fields: ["reason"] },
  ];
}

const PUBLIC_PATHS = [
  "/api/v1/verify.php",
  "/api/v1/verify",
  "/api/v1/botcheck.php",
  "/api/v1/content.php",
  "/api/v1/secret.php",
  "/api/v1/scan.php",
  "/api/v1/events.php",
  "/api/v1/assignments.php",
  "/api/v1/activity.php",
  "/api/v1/keys.json",
  "/api/status.php",
  "/status-badge.php",
  "/healthz",
  "/metrics",
  "/",
  "/api",
  "/api/v1",
  "/admin",
  "/admin/v1",
];
const PUBLIC_FIELDS = [
  "key",
  "domain",
  "ip",
  "install",
  "scope",
  "content_key",
  "name",
  "for_domain",
  "since",
  "from",
  "to",
  "limit",
  "page",
  "group",
  "nonce",
  "held_ms",
];

interface Attempt {
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

interface Outcome {
  attempt: Attempt;
  status: number | null;
  error?: string;
  body?: string;
}

async function send(attempt: Attempt): Promise<Outcome> {
  try {
    const response = await fetch(`${gw.url}${attempt.path}`, {
      method: attempt.method,
      headers: attempt.headers,
      body: attempt.method === "GET" || attempt.method === "HEAD" ? undefined : attempt.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    return { attempt, status: response.status, body: text.slice(0, 300) };
  } catch (error) {
    return { attempt, status: null, error: String(error) };
  }
}

/** Runs attempts with bounded concurrency; returns those answered 5xx, not at all, or with a refusal lacking a reason. */
async function bad(attempts: Attempt[], concurrency = 24): Promise<Outcome[]> {
  const failures: Outcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < attempts.length) {
      const outcome = await send(attempts[next++]);
      if (outcome.status === null || outcome.status >= 500) {
        failures.push(outcome);
        continue;
      }
      const isJson = outcome.body?.startsWith("{");
      if (outcome.status >= 400 && isJson && !/"reason":"[a-z0-9_]/.test(outcome.body ?? "") && outcome.attempt.method !== "HEAD") {
        failures.push(outcome);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failures.map((f) => ({ ...f, attempt: { ...f.attempt, body: String(f.attempt.body ?? "").slice(0, 120) } }));
}

const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };

describe("fuzzing the admin API", () => {
  it("garbage field values never give a 5xx", async () => {
    const attempts: Attempt[] = [];
    routes().forEach((route, index) => {
      const path = `/admin/v1${route.path(keyIds[index % keyIds.length])}`;
      for (const field of [...route.fields, "__proto__", "constructor", "unexpected", ""]) {
        for (const value of GARBAGE_VALUES) {
          const body = JSON.stringify({ ...route.base, [field]: value });
          attempts.push({ method: route.method, path, body, headers: auth });
        }
      }
    });
    expect(attempts.length).toBeGreaterThan(1000);
    expect(await bad(attempts)).toEqual([]);
  }, 120_000);

  it("raw and random bodies never give a 5xx", async () => {
    const rand = random(20240601);
    const attempts: Attempt[] = [];
    routes().forEach((route, index) => {
      const path = `/admin/v1${route.path(keyIds[(index + 3) % keyIds.length])}`;
      const bodies: (string | Buffer)[] = [...RAW_BODIES];
      for (let i = 0; i < 20; i++) {
        bodies.push(Buffer.from(Array.from({ length: Math.floor(rand() * 2000) }, () => Math.floor(rand() * 256))));
      }
      for (const body of bodies) {
        attempts.push({ method: route.method === "GET" ? "POST" : route.method, path, body, headers: auth });
        attempts.push({ method: route.method, path, body, headers: { ...auth, "content-type": "text/plain; charset=utf-16" } });
      }
    });
    expect(await bad(attempts)).toEqual([]);
  }, 60_000);

  it("garbage path parameters, methods and tokens never give a 5xx", async () => {
    const templates = [
      "/admin/v1/orgs/:p",
      "/admin/v1/orgs/:p/members",
      "/admin/v1/orgs/:p/domains",
      "/admin/v1/orgs/:p/keys",
      `/admin/v1/orgs/${orgId}/domains/:p/verify`,
      "/admin/v1/keys/:p",
      "/admin/v1/keys/:p/suspend",
      "/admin/v1/keys/:p/installations",
      `/admin/v1/keys/${keyIds[15]}/installations/:p/approve`,
      `/admin/v1/keys/${keyIds[15]}/installations/:p/block`,
      "/admin/v1/keys/:p/usage",
      "/admin/v1/:p",
      `/admin/v1/orgs/${orgId}/content/:p`,
      `/admin/v1/orgs/${orgId}/secrets/:p`,
      "/admin/v1/orgs/:p/content/x",
      `/admin/v1/orgs/${orgId}/risks/:p/web:hsts`,
      `/admin/v1/orgs/${orgId}/risks/fuzz.example.com/:p`,
    ];
    const attempts: Attempt[] = [];
    for (const template of templates) {
      for (const p of PATH_GARBAGE) {
        for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"]) {
          attempts.push({ method, path: template.replace(":p", p), body: "{}", headers: auth });
        }
      }
    }
    for (const authorization of [
      "",
      "Bearer",
      "Bearer ",
      "bearer test",
      `Bearer ${ADMIN_TOKEN}x`,
      `Basic ${ADMIN_TOKEN}`,
      "Bearer \u00e9",
      `Bearer ${"t".repeat(3000)}`,
    ]) {
      attempts.push({ method: "POST", path: "/admin/v1/orgs", body: '{"name":"x"}', headers: { authorization } });
    }
    attempts.push({ method: "GET", path: `/admin/v1/keys/${keyIds[14]}/usage?from=%E0%A4%A&to=${"9".repeat(2000)}`, headers: auth });
    attempts.push({ method: "GET", path: `/admin/v1/keys/${keyIds[14]}/usage?from=2024-01-01&from=2024-02-30`, headers: auth });
    expect(await bad(attempts)).toEqual([]);
  }, 60_000);
});

describe("fuzzing the public paths", () => {
  it("garbage queries and bodies never give a 5xx", async () => {
    const rand = random(7);
    const attempts: Attempt[] = [];
    for (const path of PUBLIC_PATHS) {
      // A seeded sample of values per field keeps the run short; every value is still tried on every path.
      for (const [index, field] of PUBLIC_FIELDS.entries()) {
        const sample = GARBAGE_VALUES.filter((_, i) => i % PUBLIC_FIELDS.length === index || rand() < 0.08);
        for (const value of sample) {
          const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
          attempts.push({ method: "GET", path: `${path}?${field}=${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, "?"))}` });
          attempts.push({
            method: "POST",
            path,
            body: JSON.stringify({ [field]: value }),
            headers: { "content-type": "application/json" },
          });
          attempts.push({ method: "POST", path, body: `${field}=${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, "?"))}` });
        }
      }
      for (const body of RAW_BODIES) attempts.push({ method: "POST", path, body });
      for (const query of ["key=%E0%A4%A", "%", "key=%zz&key=%00", "a".repeat(5000), "key[]=1&key[x]=2", "__proto__[x]=1"]) {
        attempts.push({ method: "GET", path: `${path}?${query}` });
      }
      for (const method of ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]) attempts.push({ method, path, body: "{}" });
    }
    for (const p of PATH_GARBAGE) attempts.push({ method: "GET", path: `/api/v1/${p}` }, { method: "GET", path: `/${p}` });
    expect(await bad(attempts)).toEqual([]);
  }, 120_000);
});

describe("body size", () => {
  const oversized = "x".repeat(256 * 1024 + 1);

  it.each(["/admin/v1/orgs", `/admin/v1/orgs/1/keys`, "/api/v1/verify.php", "/api/v1/verify", "/nowhere"])(
    "answers 413 payload_too_large for more than 256 KiB to %s, declared or chunked",
    async (path) => {
      const declared = await gw.call(path, { method: "POST", body: oversized, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(declared.status).toBe(413);
      expect(declared.body).toEqual({ ok: false, reason: "payload_too_large", message: expect.any(String) });

      const chunks = Array.from({ length: 33 }, () => new TextEncoder().encode("y".repeat(8 * 1024)));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      });
      const chunked = await fetch(`${gw.url}${path}`, {
        method: "POST",
        body: stream,
        duplex: "half",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      } as RequestInit & { duplex: "half" });
      expect(chunked.status).toBe(413);
      expect(await chunked.json()).toEqual({ ok: false, reason: "payload_too_large", message: expect.any(String) });
    },
  );

  it("accepts a body of exactly 256 KiB (and judges its content)", async () => {
    const name = "n".repeat(256 * 1024 - '{"name":""}'.length);
    const r = await gw.admin("POST", "/orgs", { name });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("bad_name");
  });

  it("still serves the connection's next request after a 413 on a fresh one", async () => {
    expect((await gw.call("/admin/v1/orgs", { method: "POST", body: oversized })).status).toBe(413);
    expect((await gw.admin("GET", `/orgs/${orgId}`)).status).toBe(200);
  });
});

describe("raw HTTP", () => {
  /** What fetch refuses to send: raw request lines, traversal, bad framing. */
  function raw(text: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(gw.ingress.port, "127.0.0.1");
      let out = "";
      socket.setTimeout(2000, () => socket.destroy());
      socket.on("data", (chunk) => {
        out += chunk.toString("latin1");
        if (/\r\n\r\n[\s\S]*\}$/.test(out)) socket.end();
      });
      socket.on("close", () => resolve(out));
      socket.on("error", () => resolve(out));
      socket.write(text, "latin1");
    });
  }

  it.each([
    "GET /admin/v1/../../etc/passwd HTTP/1.1",
    "GET /admin/v1/keys/..%2f..%2fetc%2fpasswd HTTP/1.1",
    "GET /admin/v1/keys/%E0%A4%A HTTP/1.1",
    "GET /admin/v1/keys/%zz HTTP/1.1",
    "GET //admin//v1//keys//1 HTTP/1.1",
    "GET /admin/v1/orgs/1?%%%%%% HTTP/1.1",
    "GET /api/v1/verify.php?key=%ff%fe%00 HTTP/1.1",
    "GET /\u00e9\u00e8/%C0%AE%C0%AE/ HTTP/1.1",
    "POST /admin/v1/orgs HTTP/1.1\r\ncontent-length: 999999999",
    'POST /admin/v1/orgs HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"nam\r\n0\r\n',
  ])("%s never answers 5xx", async (head) => {
    const request = `${head}\r\nhost: x\r\nauthorization: Bearer ${ADMIN_TOKEN}\r\n${head.includes("\r\n\r\n") ? "" : "\r\n"}`;
    const answer = await raw(request.includes("\r\n\r\n") ? request : `${request}\r\n`);
    const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
    // uWS may also drop a request it cannot parse: that is not a 5xx either.
    if (status !== undefined) expect(Number(status)).toBeLessThan(500);
  });
});
