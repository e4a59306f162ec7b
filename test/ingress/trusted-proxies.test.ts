import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../shared/platform/config.js";
import { createClientAddressResolver } from "../../ingress/client-address.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { postFrom } from "../helpers/from-address.js";
import { putSecret } from "./routes/content-fixtures.js";
import { makeKey, makeOrg, verifyDomain } from "./routes/verify-fixtures.js";

/**
 * TRUSTED_PROXIES (docs/security.md, item 7): the proxy at 127.0.0.1 is trusted, a caller
 * connecting from 127.0.0.2 is not. Behind the proxy the client is the rightmost untrusted
 * hop of X-Forwarded-For; a forwarding header from anyone else is ignored.
 */

let gw: TestGateway;
let orgId: number;
beforeAll(async () => {
  gw = await startTestGateway("proxies", { TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8" });
  orgId = await makeOrg(gw, { plan: "enterprise" });
  await verifyDomain(gw, orgId, "example.com");
  await putSecret(gw, orgId, "db_password", "hunter2");
});
afterAll(async () => {
  await gw?.stop();
});

const VISITOR = "203.0.113.7";

async function verifyFrom(source: string, key: string, xff?: string) {
  const answer = await postFrom(
    gw.url,
    source,
    "/api/v1/verify.php",
    { key, domain: "example.com" },
    xff === undefined ? {} : { "x-forwarded-for": xff },
  );
  return answer.body.reason as string;
}

describe("the client behind a trusted proxy", () => {
  it("is the rightmost untrusted X-Forwarded-For hop; hops the client wrote itself are ignored", async () => {
    const made = await makeKey(gw, orgId, { ip_allow: [VISITOR] });
    expect(await verifyFrom("127.0.0.1", made.key, VISITOR)).toBe("ok");
    // The proxy appended the visitor; a further trusted proxy (10.1.2.3) sits between.
    expect(await verifyFrom("127.0.0.1", made.key, `${VISITOR}, 10.1.2.3`)).toBe("ok");
    // The client claims the allowed address, the proxy appends the real one.
    expect(await verifyFrom("127.0.0.1", made.key, `${VISITOR}, 198.51.100.9`)).toBe("ip_not_allowed");
    // No header: the proxy itself is the caller.
    expect(await verifyFrom("127.0.0.1", made.key)).toBe("ip_not_allowed");
  });

  it("is never taken from the header of a caller that is not a trusted proxy", async () => {
    const made = await makeKey(gw, orgId, { ip_allow: [VISITOR] });
    expect(await verifyFrom("127.0.0.2", made.key, VISITOR)).toBe("ip_not_allowed");
    const denied = await makeKey(gw, orgId, { ip_deny: ["127.0.0.2"] });
    expect(await verifyFrom("127.0.0.2", denied.key, "8.8.8.8")).toBe("ip_blocked");
  });

  it("is the connecting address secret.php judges: the first untrusted hop", async () => {
    const server = await makeKey(gw, orgId, { kind: "server", domain: undefined, name: "Backend", ip_allow: [VISITOR] });
    const ask = (source: string, xff: string) =>
      postFrom(gw.url, source, "/api/v1/secret.php", { key: server.key, name: "db_password" }, { "x-forwarded-for": xff });
    const behind = await ask("127.0.0.1", VISITOR);
    expect([behind.status, behind.body.value]).toEqual([200, "hunter2"]);
    expect((await ask("127.0.0.2", VISITOR)).body.reason).toBe("ip_not_allowed");
    expect((await ask("127.0.0.1", `${VISITOR}, 198.51.100.9`)).body.reason).toBe("ip_not_allowed");
  });
});

describe("the resolver", () => {
  const trusted = ["10.0.0.0/8", "2001:db8::/32"];
  const xff = createClientAddressResolver({ trustedProxies: trusted, header: "x-forwarded-for" });
  const fwd = createClientAddressResolver({ trustedProxies: trusted, header: "forwarded" });

  it("by default trusts no one", () => {
    const none = createClientAddressResolver({ trustedProxies: [], header: "x-forwarded-for" });
    expect(none("10.0.0.1", { "x-forwarded-for": VISITOR })).toBe("10.0.0.1");
    expect(loadConfig({}).trustedProxies).toEqual([]);
  });

  it("walks X-Forwarded-For from the right, with ports and mapped forms", () => {
    expect(xff("10.0.0.1", { "x-forwarded-for": `1.1.1.1, ${VISITOR}:5555, 10.9.9.9` })).toBe(VISITOR);
    expect(xff("10.0.0.1", { "x-forwarded-for": "::ffff:198.51.100.1" })).toBe("198.51.100.1");
    expect(xff("10.0.0.1", { "x-forwarded-for": "[2001:db9::1]:80, 2001:db8::5" })).toBe("2001:db9::1");
    // Every hop trusted: the leftmost; a hop that is no address: the last trusted one reached.
    expect(xff("10.0.0.1", { "x-forwarded-for": "10.0.0.7, 10.0.0.8" })).toBe("10.0.0.7");
    expect(xff("10.0.0.1", { "x-forwarded-for": `${VISITOR}, unknown, 10.0.0.8` })).toBe("10.0.0.8");
    expect(xff("10.0.0.1", { forwarded: `for=${VISITOR}` })).toBe("10.0.0.1");
  });

  it("reads RFC 7239 Forwarded when told to, and only it", () => {
    const header = `for=1.1.1.1, for="[2001:db9::17]:4711";proto=https, for=10.2.3.4;by=10.0.0.1`;
    expect(fwd("10.0.0.1", { forwarded: header })).toBe("2001:db9::17");
    expect(fwd("10.0.0.1", { forwarded: `for="${VISITOR}:8080"` })).toBe(VISITOR);
    expect(fwd("10.0.0.1", { forwarded: "for=_hidden, for=10.0.0.3" })).toBe("10.0.0.3");
    expect(fwd("10.0.0.1", { "x-forwarded-for": VISITOR })).toBe("10.0.0.1");
  });

  it("refuses a bad TRUSTED_PROXIES or header at start, naming the variable", () => {
    for (const bad of ["10.0.0.0/33", "proxy.local", "10.0.0.1/8/8", "::1/129"]) {
      expect(() => loadConfig({ TRUSTED_PROXIES: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TRUSTED_PROXY_HEADER: "x-real-ip" })).toThrow(/TRUSTED_PROXY_HEADER/);
    expect(loadConfig({ TRUSTED_PROXIES: "10.0.0.0/8 ::1" }).trustedProxies).toEqual(["10.0.0.0/8", "::1"]);
  });
});
