import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runActor, type ActorHandle } from "../../actors/runtime/index.js";
import { usageActor } from "../../actors/usage/index.js";
import { registerAdminRoutes } from "../../ingress/admin/routes.js";
import { registerPublicRoutes } from "../../ingress/routes/index.js";
import { PUBLIC_PARAMETERS } from "../../ingress/routes/schemas.js";
import { silentLogger } from "../../shared/platform/log.js";
import { addMember, scanNow, startFakeScanner, type FakeScanner } from "../helpers/findings.js";
import { ADMIN_TOKEN, startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";
import { readSpec } from "../helpers/spec.js";
import { startDnsServer, type TestDnsServer } from "./admin/dns-server.js";
import { putContent, putSecret } from "./routes/content-fixtures.js";
import { makeKey, makeOrg, verifyDomain } from "./routes/verify-fixtures.js";

/**
 * Names of Object.prototype as request data (docs/security.md, "Input handling"): every
 * parameter of every public endpoint and every field and path parameter of every admin
 * route gets `__proto__`, `constructor`, `toString`, `hasOwnProperty` and `valueOf`, as a
 * value and as a parameter name, in a query string, a JSON body and a form body. No answer
 * is a 5xx or shows a function's text, and the reports built from those calls (usage,
 * installations) stay numbers and statuses. The endpoints come from the route tables, their
 * parameters from the routes' schemas and the contracts' tables, so a new one is covered.
 */

const NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];
const DOMAIN = "example.com";

let gw: TestGateway;
let dns: TestDnsServer;
let scanner: FakeScanner;
let usage: ActorHandle;
let orgId: number;
let client: { key: string; id: number };
let server: { key: string; id: number };
const ids: Record<string, number> = {};
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

beforeAll(async () => {
  dns = await startDnsServer();
  gw = await startTestGateway("protonames", { DNS_RESOLVER: dns.resolver });
  scanner = await startFakeScanner(gw);
  usage = await runActor(usageActor, {
    redis: gw.ctx.redis,
    keys: gw.ctx.keys,
    clock: gw.ctx.clock,
    logger: silentLogger(),
    db: gw.ctx.db,
    consumerName: "test-usage",
  });
  orgId = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, DOMAIN);
  await addMember(gw, orgId, "Alice", "alice@example.com");
  await putContent(gw, orgId, "banner", "text", "hello");
  await putSecret(gw, orgId, "db_password", "hunter2");
  // Rates high enough that every call of the sweep is judged, not refused rate_limited.
  client = await makeKey(gw, orgId, { name: "Site", botcheck: { enabled: true }, rate_per_minute: 100_000 });
  server = await makeKey(gw, orgId, { name: "Backend", kind: "server", ip_allow: ["127.0.0.0/8"], rate_per_minute: 100_000 });
  await scanNow(gw, server.key, DOMAIN);
  ids.key = (await makeKey(gw, orgId, { name: "Admin target", kind: "server" })).id;
  const siem = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url: "https://siem.example.com/in" });
  const webhook = await gw.admin("POST", `/orgs/${orgId}/webhooks`, {
    url: "https://hooks.example.com/in",
    secret: "whsec-0123456789abcdef",
  });
  const incident = await gw.admin("POST", "/status/incidents", {
    title: "Slow",
    impact: "minor",
    affects: [],
    status: "investigating",
    body: "b",
  });
  const maintenance = await gw.admin("POST", "/status/maintenance", { title: "Upgrade", body: "b", affects: [], ...window() });
  for (const [name, made] of Object.entries({ siem, webhook, incident, maintenance })) {
    expect(made.status, `${name}: ${JSON.stringify(made.body)}`).toBe(201);
  }
  ids.siem = siem.body.destination.id;
  ids.webhook = webhook.body.webhook.id;
  ids.incident = incident.body.incident.id;
  ids.maintenance = maintenance.body.maintenance.id;
});
afterAll(async () => {
  await usage?.stop({ timeoutMs: 2000 });
  await scanner?.stop();
  await gw?.stop();
  await dns?.close();
});

function window(): { starts_at: string; ends_at: string } {
  const now = gw.ctx.clock.now();
  return { starts_at: new Date(now + 86_400_000).toISOString(), ends_at: new Date(now + 90_000_000).toISOString() };
}

// ---- What to send: route tables and contracts -------------------------------------------

interface RouteEntry {
  method: string;
  path: string;
}

function table(register: (add: (method: string, path: string) => void) => void): RouteEntry[] {
  const routes: RouteEntry[] = [];
  register((method, path) => routes.push({ method, path }));
  return routes;
}

/** interface.md section 4: the parameter names of each `/name.php` endpoint's tables. */
function specParameters(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const section of readSpec("interface.md").split(/^### /m)) {
    const heading = /^4\.\d+ `[A-Z|]+ \/(\w+)\.php`/.exec(section);
    if (!heading) continue;
    const names = out.get(heading[1]) ?? new Set<string>();
    let inTable = false;
    for (const line of section.split("\n")) {
      if (/^\| Param \|/.test(line)) inTable = true;
      else if (inTable && line.startsWith("|") && !line.startsWith("|---")) {
        for (const name of line.split("|")[1].split(",")) names.add(name.trim());
      } else if (inTable && !line.startsWith("|")) inTable = false;
    }
    out.set(heading[1], names);
  }
  return out;
}

/** operator-api.md: the body (or query) fields of each admin call, by `METHOD /path` with `:param` kept. */
function adminFields(): Map<string, Set<string>> {
  const spec = readSpec("operator-api.md");
  const keyFields = new Set<string>();
  const keyTable = spec.slice(spec.indexOf("| Field | Type | Default | Meaning |"));
  for (const line of keyTable.split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    for (const match of line.split("|")[1].matchAll(/`([a-z_]+)`/g)) keyFields.add(match[1]);
  }
  const out = new Map<string, Set<string>>([["POST /orgs/:org/keys", keyFields]]);
  for (const line of spec.split("\n")) {
    const row = /^\| `([A-Z]+) (\/[^`]*)`((?: · `\/[a-z]+`)*) \| ([^|]*) \|/.exec(line);
    if (!row) continue;
    const [, method, path, variants, body] = row;
    let text = body.replace(/\([^)]*\)/g, "");
    if (text.includes(";")) text = text.slice(text.lastIndexOf(";") + 1);
    const fields = text.includes("any field of the table above")
      ? new Set([...keyFields].filter((f) => f !== "kind"))
      : new Set([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    const paths = [path, ...[...variants.matchAll(/`(\/[a-z]+)`/g)].map((m) => path.replace(/\/[a-z]+$/, m[1]))];
    for (const p of paths) out.set(`${method} ${p}`, fields);
  }
  return out;
}

interface Problem {
  what: string;
  status: number | null;
  body: string;
}

/** A 5xx, no answer, a function's or object's text in the answer, or a 4xx JSON refusal without a reason. */
async function check(what: string, url: string, init: RequestInit): Promise<Problem | null> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
    const body = await response.text();
    // A function's or an object's text where data belongs (the page script is code: not judged on this).
    const script = (response.headers.get("content-type") ?? "").includes("javascript");
    const broken =
      response.status >= 500 ||
      (!script && /\[native code\]|function [A-Za-z]*\(|\[object Object\]/.test(body)) ||
      (response.status >= 400 && body.startsWith("{") && !/"reason":"[^"]+"/.test(body));
    return broken ? { what, status: response.status, body: body.slice(0, 300) } : null;
  } catch (error) {
    return { what, status: null, body: String(error) };
  }
}

async function run(attempts: (() => Promise<Problem | null>)[], concurrency = 6): Promise<Problem[]> {
  const problems: Problem[] = [];
  let next = 0;
  const worker = async () => {
    while (next < attempts.length) {
      const problem = await attempts[next++]();
      if (problem) problems.push(problem);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return problems;
}

// ---- Public endpoints ---------------------------------------------------------------------

const BROWSER = {
  origin: `https://${DOMAIN}`,
  "user-agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  accept: "text/html,application/xhtml+xml",
  "accept-language": "en-US,en;q=0.9",
  "accept-encoding": "gzip, deflate, br",
  "sec-ch-ua-platform": '"constructor"',
};

/** The parameters of a call that passes the endpoint's gate, so each odd value reaches the code behind it. */
function baseOf(name: string): Record<string, string> {
  switch (name) {
    case "verify":
    case "content":
      return { key: client.key, domain: DOMAIN };
    case "botcheck":
      return { key: client.key, action: "assess" };
    case "secret":
      return { key: server.key, name: "db_password" };
    case "assignments":
      return { key: server.key, domain: DOMAIN, for_domain: DOMAIN, finding_key: "email:spf" };
    default:
      return { key: server.key, domain: DOMAIN };
  }
}

function publicAttempts(path: string, methods: readonly string[], params: Record<string, string>, headers: Record<string, string>) {
  const url = `${gw.url}${path}`;
  const label = `${path} ${JSON.stringify(params)}`;
  const attempts: (() => Promise<Problem | null>)[] = [];
  if (methods.includes("GET")) attempts.push(() => check(`GET ${label}`, `${url}?${new URLSearchParams(params)}`, { headers }));
  if (methods.includes("POST")) {
    attempts.push(() =>
      check(`POST json ${label}`, url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(params),
      }),
    );
    attempts.push(() =>
      check(`POST form ${label}`, url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
        body: `${new URLSearchParams(params)}`,
      }),
    );
  }
  return attempts;
}

describe("prototype names on the public endpoints", () => {
  const routes = table((add) => registerPublicRoutes(add));
  const methodsOf = (path: string) => routes.filter((r) => r.path === path).map((r) => r.method);
  const endpoints = [...new Set(routes.map((r) => r.path))].filter(
    (p) => /^\/api\/v1\/\w+\.php$/.test(p) && methodsOf(p).some((m) => m === "GET" || m === "POST"),
  );

  it("knows the parameters of every endpoint of the route table and of interface.md", () => {
    const spec = specParameters();
    expect([...spec.keys()].sort()).toEqual(
      expect.arrayContaining(["activity", "assignments", "botcheck", "content", "events", "scan", "secret", "verify"]),
    );
    for (const name of spec.keys()) expect(endpoints).toContain(`/api/v1/${name}.php`);
    for (const path of endpoints) expect(Object.keys(PUBLIC_PARAMETERS)).toContain(path.slice("/api/v1/".length, -".php".length));
  });

  it("answers every parameter set to each name, and each name as a parameter, without a 5xx", async () => {
    const spec = specParameters();
    const attempts: (() => Promise<Problem | null>)[] = [];
    for (const path of endpoints) {
      const name = path.slice("/api/v1/".length, -".php".length) as keyof typeof PUBLIC_PARAMETERS;
      const parameters = new Set([...Object.keys(PUBLIC_PARAMETERS[name]), ...(spec.get(name) ?? [])]);
      const base = baseOf(name);
      const headers = name === "botcheck" ? BROWSER : {};
      const methods = methodsOf(path);
      for (const value of NAMES) {
        for (const parameter of parameters) attempts.push(...publicAttempts(path, methods, { ...base, [parameter]: value }, headers));
        attempts.push(...publicAttempts(path, methods, { ...base, [value]: "1" }, headers));
      }
      // The library and installation names of verify as they are sent in practice.
      if (name === "verify") {
        for (const value of NAMES) {
          attempts.push(...publicAttempts(path, methods, { ...base, client: `${value}/1.0` }, headers));
          attempts.push(...publicAttempts(path, methods, { ...base, client: `${value}/1.0` }, { "x-gateway-client": `${value}/1.0` }));
        }
      }
    }
    // The other public resources: their query parameters, and each name as one.
    const QUERY: Record<string, string[]> = { "/status-badge.php": ["lang"], "/status/report": ["quarter"], "/botcheck.js": ["v"] };
    for (const path of new Set(routes.filter((r) => r.method === "GET" && !endpoints.includes(r.path)).map((r) => r.path))) {
      for (const value of NAMES) {
        for (const parameter of [...(QUERY[path] ?? []), value]) {
          attempts.push(() =>
            check(`GET ${path} ${parameter}=${value}`, `${gw.url}${path}?${new URLSearchParams({ [parameter]: value })}`, {}),
          );
        }
      }
    }
    expect(attempts.length).toBeGreaterThan(800);
    expect(await run(attempts)).toEqual([]);
  }, 180_000);

  it("takes a botcheck action named after one for an unknown action", async () => {
    for (const action of ["__proto__", "constructor"]) {
      const answer = await gw.call("/api/v1/botcheck.php", { method: "POST", body: { key: client.key, action }, headers: BROWSER });
      expect([action, answer.status, answer.body.reason]).toEqual([action, 400, "bad_request"]);
    }
  });

  it("keeps the usage report in numbers, with each name an endpoint label like any other", async () => {
    const labels = ["constructor", "tostring", "hasownproperty", "valueof"];
    const daily = async () =>
      (await gw.ctx.db.query<{ endpoint: string; calls: number }>("SELECT endpoint, calls FROM usage_daily WHERE key_id = $1", [client.id]))
        .rows;
    await waitFor(async () => {
      const rows = await daily();
      return labels.every((l) => rows.some((r) => r.endpoint === l));
    }, 20_000);
    const report = await gw.admin("GET", `/keys/${client.id}/usage`);
    expect(report.status).toBe(200);
    for (const day of report.body.usage as { calls: number; by_reason: Record<string, unknown>; by_endpoint: Record<string, unknown> }[]) {
      for (const tally of [day.by_reason, day.by_endpoint]) {
        for (const count of Object.values(tally)) expect(typeof count).toBe("number");
        expect(Object.values(tally).reduce((a: number, b) => a + (b as number), 0)).toBe(day.calls);
      }
      for (const label of labels) expect(Object.hasOwn(day.by_endpoint, label)).toBe(true);
    }
    const org = await gw.admin("GET", `/orgs/${orgId}`);
    expect(typeof org.body.org.used).toBe("number");
  });

  it("lists installations named after them with their status, whether or not Redis still holds them", async () => {
    const wanted = new Set(NAMES);
    const listed = async () =>
      (await gw.admin("GET", `/keys/${client.id}/installations`)).body.installations as { install: string; status: unknown }[];
    await waitFor(async () => {
      const { rows } = await gw.ctx.db.query<{ install: string }>("SELECT install FROM installations WHERE key_id = $1", [client.id]);
      return NAMES.every((n) => rows.some((r) => r.install === n));
    }, 20_000);
    // In PostgreSQL and no longer in Redis (a snapshot rebuilt, a hash expired): PostgreSQL's status stands.
    await gw.ctx.redis.hdel(gw.ctx.keys.installations(orgId, client.id), ...NAMES);
    const installations = (await listed()).filter((i) => wanted.has(i.install));
    expect(installations.map((i) => i.install).sort()).toEqual([...NAMES].sort());
    for (const i of installations) expect(["approved", "pending", "blocked"]).toContain(i.status);
  });
});

// ---- Admin API ----------------------------------------------------------------------------

/** Valid bodies, so a field's odd value is judged by the code behind the validator too. */
const BASES: Record<string, () => Record<string, unknown>> = {
  "POST /orgs": () => ({ name: "P" }),
  "POST /orgs/:org/members": () => ({ name: "M", email: "m@example.com" }),
  "POST /orgs/:org/domains": () => ({ domain: "proto.example.com" }),
  "POST /orgs/:org/keys": () => ({ name: "K", kind: "server" }),
  "PUT /orgs/:org/content/:content_key": () => ({ type: "text", value: "x" }),
  "PUT /orgs/:org/secrets/:name": () => ({ value: "s" }),
  "POST /orgs/:org/risks": () => ({ domain: DOMAIN, finding_key: "email:spf" }),
  "POST /orgs/:org/siem": () => ({ kind: "http", url: "https://siem.example.com/in" }),
  "POST /orgs/:org/webhooks": () => ({ url: "https://hooks.example.com/in", secret: "whsec-0123456789abcdef" }),
  "POST /orgs/:org/assignments/:domain/:finding_key/notes": () => ({ who: "w", body: "b" }),
  "PUT /status/services/:service": () => ({ name: "Site", url: "https://status.example.com/" }),
  "POST /status/incidents": () => ({ title: "t", impact: "minor", affects: [], status: "investigating", body: "b" }),
  "POST /status/incidents/:id/updates": () => ({ status: "identified", body: "b" }),
  "PATCH /status/incidents/:id": () => ({ title: "t2" }),
  "POST /status/maintenance": () => ({ title: "m", body: "b", affects: [], ...window() }),
  "PATCH /status/maintenance/:id": () => ({ title: "m2" }),
};

/** Routes that wait for an actor this test does not run (a SIEM pusher): only their path parameters are varied. */
const WAITS_FOR_AN_ACTOR = new Set(["POST /orgs/:org/siem/:id/test"]);

/** Last: they consume the key they are given. */
const CONSUMING = new Set(["POST /keys/:id/revoke", "POST /keys/:id/rotate"]);

function pathValue(pattern: string, parameter: string): string {
  switch (parameter) {
    case "org":
      return String(orgId);
    case "id":
      if (pattern.startsWith("/keys/")) return String(ids.key);
      if (pattern.includes("/siem/")) return String(ids.siem);
      if (pattern.includes("/webhooks/")) return String(ids.webhook);
      if (pattern.includes("/incidents/")) return String(ids.incident);
      return String(ids.maintenance);
    case "domain":
      return DOMAIN;
    case "finding_key":
      return "email:spf";
    case "content_key":
      return "banner";
    case "name":
      return "api_token";
    case "install":
      return "inst-1";
    case "service":
      return "website";
    default:
      throw new Error(`no value for :${parameter} in ${pattern}`);
  }
}

describe("prototype names on the admin API", () => {
  it("answers every field, path parameter and query of every route set to each name without a 5xx", async () => {
    const spec = adminFields();
    const routes = table((add) => registerAdminRoutes(add)).map((r) => ({ ...r, pattern: r.path.replace(/^\/admin\/v1/, "") }));
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const attempts: (() => Promise<Problem | null>)[] = [];
    const consuming: (() => Promise<Problem | null>)[] = [];
    let covered = 0;
    for (const { method, pattern } of routes) {
      const id = `${method} ${pattern}`;
      const fields = new Set(spec.get(id) ?? []);
      if (fields.size > 0) covered++;
      if (method === "GET") for (const query of ["from", "to", "limit", "page"]) fields.add(query);
      const parameters = [...pattern.matchAll(/:(\w+)/g)].map((m) => m[1]);
      const path = (odd?: { parameter: string; value: string }) =>
        `/admin/v1${pattern.replace(/:(\w+)/g, (_, p: string) => encodeURIComponent(p === odd?.parameter ? odd.value : pathValue(pattern, p)))}`;
      const to = CONSUMING.has(id) ? consuming : attempts;
      const send = (what: string, url: string, body: Record<string, unknown> | null) => () =>
        check(
          `${id} ${what}`,
          `${gw.url}${url}`,
          method === "GET" || (method === "DELETE" && body === null)
            ? { method, headers: auth }
            : { method, headers: auth, body: JSON.stringify(body ?? {}) },
        );
      for (const value of NAMES) {
        for (const parameter of parameters) to.push(send(`:${parameter}=${value}`, path({ parameter, value }), BASES[id]?.() ?? null));
        if (WAITS_FOR_AN_ACTOR.has(id)) continue;
        for (const field of fields) {
          if (method === "GET") to.push(send(`?${field}=${value}`, `${path()}?${new URLSearchParams({ [field]: value })}`, null));
          else to.push(send(`${field}=${value}`, path(), { ...(BASES[id]?.() ?? {}), [field]: value }));
        }
        if (method !== "GET") to.push(send(`{${value}}`, path(), { ...(BASES[id]?.() ?? {}), [value]: "1" }));
      }
    }
    // The contract's tables were found (a renamed heading would silently send nothing).
    expect(covered).toBeGreaterThan(15);
    expect(await run(attempts)).toEqual([]);
    expect(await run(consuming, 1)).toEqual([]);
  }, 180_000);

  it("leaves Object.prototype as it was", () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
