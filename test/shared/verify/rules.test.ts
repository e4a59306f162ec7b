import { describe, expect, it } from "vitest";
import { checkCountries } from "../../../shared/verify/country.js";
import { checkDomainLock, hostOf, isLockVerified, verificationCandidates } from "../../../shared/verify/domain.js";
import { checkKeyKnown, checkKeySent } from "../../../shared/verify/existence.js";
import { allowanceCycle, checkExpiry, effectiveEnd } from "../../../shared/verify/expiry.js";
import { callerAddress, checkIpAllow, checkIpDeny, compileList, parseAddress } from "../../../shared/verify/ip.js";
import { checkScope, scopesText } from "../../../shared/verify/scope.js";
import { checkSuspension } from "../../../shared/verify/suspension.js";
import { CYCLE_MS } from "../../../shared/accounts/plans.js";
import { ask, DAY, NOW, orgSnapshot } from "./fixtures.js";

const refused = (reason: string) => ({ ok: false, reason });
const PASS = { ok: true };

describe("existence and suspension", () => {
  it("needs a key, and a known one", () => {
    expect(checkKeySent(undefined)).toEqual(refused("missing_key"));
    expect(checkKeySent("  ")).toEqual(refused("missing_key"));
    expect(checkKeySent("ak_live_x")).toEqual(PASS);
    expect(checkKeyKnown(false)).toEqual(refused("invalid_key"));
  });
  it("refuses a suspended key", () => {
    expect(checkSuspension({ status: "suspended" })).toEqual(refused("key_suspended"));
    expect(checkSuspension({ status: "active" })).toEqual(PASS);
  });
});

describe("expiry", () => {
  const org = orgSnapshot();
  it("rolls on while the subscription is active", () => {
    expect(checkExpiry({ expires_at_ms: null }, org, NOW + 400 * DAY)).toEqual(PASS);
    const end = effectiveEnd({ expires_at_ms: null }, org, NOW);
    expect(end).toBe(org.cycle_anchor_ms + CYCLE_MS);
  });
  it("stops at the end of the window the subscription lapsed in", () => {
    const lapsed = orgSnapshot({ subscription: "lapsed", lapsed_at_ms: NOW });
    const end = org.cycle_anchor_ms + CYCLE_MS;
    expect(checkExpiry({ expires_at_ms: null }, lapsed, end - 1)).toEqual(PASS);
    expect(checkExpiry({ expires_at_ms: null }, lapsed, end)).toEqual(refused("expired"));
  });
  it("honours a hard end whatever the subscription", () => {
    expect(checkExpiry({ expires_at_ms: NOW }, org, NOW)).toEqual(refused("expired"));
    expect(checkExpiry({ expires_at_ms: NOW + 1 }, org, NOW)).toEqual(PASS);
    expect(effectiveEnd({ expires_at_ms: NOW + 1 }, org, NOW)).toBe(NOW + 1);
  });
  it("names the allowance cycle like the projector does", () => {
    expect(allowanceCycle(org, NOW)).toEqual({ startMs: org.cycle_anchor_ms, endMs: org.cycle_anchor_ms + CYCLE_MS });
    expect(allowanceCycle(org, NOW + 25 * DAY).startMs).toBe(org.cycle_anchor_ms + CYCLE_MS);
  });
});

describe("IP lists", () => {
  const list = compileList(["10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::ffff:198.51.100.0/120"]);
  it.each([
    ["10.1.2.3", true],
    ["11.0.0.1", false],
    ["192.0.2.7", true],
    ["192.0.2.8", false],
    ["2001:db8:1::5", true],
    ["2001:db9::1", false],
    ["::ffff:10.9.9.9", true],
    ["198.51.100.20", true],
  ])("%s in list: %s", (address, expected) => {
    expect(checkIpDeny(list, parseAddress(address))).toEqual(expected ? refused("ip_blocked") : PASS);
    expect(checkIpAllow(list, parseAddress(address))).toEqual(expected ? PASS : refused("ip_not_allowed"));
  });
  it("an empty allowlist allows everything, an unreadable address matches nothing", () => {
    expect(checkIpAllow(compileList([]), parseAddress("1.2.3.4"))).toEqual(PASS);
    expect(checkIpAllow(list, parseAddress("not-an-ip"))).toEqual(refused("ip_not_allowed"));
    expect(checkIpDeny(list, null)).toEqual(PASS);
  });
  it("judges the visitor address of a server key unless IP binding is on; never a client key's claim", () => {
    const a = ask({ visitorIp: "198.51.100.1", remoteAddress: "203.0.113.9" });
    expect(callerAddress({ kind: "server", ip_binding: false }, a)?.toString()).toBe("198.51.100.1");
    expect(callerAddress({ kind: "server", ip_binding: true }, a)?.toString()).toBe("203.0.113.9");
    expect(callerAddress({ kind: "server", ip_binding: false }, ask())?.toString()).toBe("203.0.113.9");
    expect(callerAddress({ kind: "client", ip_binding: false }, a)?.toString()).toBe("203.0.113.9");
  });
});

describe("countries", () => {
  const countryOf = (address: string) => ({ "1.1.1.1": "US", "2.2.2.2": "DE" })[address] ?? null;
  it("blocks, allows, and lets an unplaced address through", () => {
    const block = { countries_block: ["US"], countries_allow: [] };
    const allow = { countries_block: [], countries_allow: ["DE"] };
    expect(checkCountries(block, "1.1.1.1", countryOf)).toEqual(refused("geo_blocked"));
    expect(checkCountries(block, "2.2.2.2", countryOf)).toEqual(PASS);
    expect(checkCountries(allow, "1.1.1.1", countryOf)).toEqual(refused("geo_not_allowed"));
    expect(checkCountries(allow, "2.2.2.2", countryOf)).toEqual(PASS);
    expect(checkCountries(allow, "10.0.0.1", countryOf)).toEqual(PASS);
    expect(checkCountries(allow, null, countryOf)).toEqual(PASS);
  });
});

describe("scope", () => {
  it("no scopes = full access; otherwise every asked scope must be held", () => {
    expect(checkScope({ scopes: [] }, "admin")).toEqual(PASS);
    expect(checkScope({ scopes: ["read"] }, undefined)).toEqual(PASS);
    expect(checkScope({ scopes: ["read"] }, "read")).toEqual(PASS);
    expect(checkScope({ scopes: ["read"] }, "write")).toEqual(refused("insufficient_scope"));
    expect(checkScope({ scopes: ["read", "write"] }, "read,write")).toEqual(PASS);
    expect(checkScope({ scopes: ["read"] }, "read write")).toEqual(refused("insufficient_scope"));
    expect(scopesText([])).toBe("full_access");
    expect(scopesText(["read", "write"])).toBe("read,write");
  });
});

describe("domain lock", () => {
  it.each([
    ["example.com", true],
    ["EXAMPLE.com.", true],
    ["www.example.com", true],
    ["a.b.example.com", true],
    ["https://www.example.com/page?x=1", true],
    ["example.com:8443", true],
    ["notexample.com", false],
    ["example.com.evil.net", false],
    ["example.org", false],
    ["", false],
  ])("lock example.com, domain %j → %s", (domain, expected) => {
    expect(checkDomainLock("example.com", domain === "" ? undefined : domain)).toEqual(expected ? PASS : refused("domain_mismatch"));
  });
  it("a subdomain lock does not admit its parent; no lock skips", () => {
    expect(checkDomainLock("shop.example.com", "example.com")).toEqual(refused("domain_mismatch"));
    expect(checkDomainLock(null, undefined)).toEqual(PASS);
    expect(hostOf("  Shop.Example.COM. ")).toBe("shop.example.com");
  });
  it("is verified through the lock or a parent down to the registrable domain", () => {
    expect(verificationCandidates("a.shop.example.co.uk")).toEqual(["a.shop.example.co.uk", "shop.example.co.uk", "example.co.uk"]);
    expect(isLockVerified("shop.example.com", ["example.com"])).toBe(true);
    expect(isLockVerified("shop.example.com", ["shop.example.com"])).toBe(true);
    expect(isLockVerified("example.com", ["shop.example.com"])).toBe(false);
    expect(isLockVerified("example.co.uk", ["co.uk"])).toBe(false);
    expect(isLockVerified(null, [])).toBe(true);
  });
});
