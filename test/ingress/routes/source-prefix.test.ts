import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../shared/platform/config.js";
import { DEFAULT_SOURCE_IPV6_PREFIX, sourceId } from "../../../shared/verify/source.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { advance, clientSetup, patchKey } from "./verify-fixtures.js";

/**
 * What one source of the per-source limit is for IPv6 (docs/security.md, "Input handling"):
 * a /64 by default, RATE_SOURCE_IPV6_PREFIX otherwise. Behind the trusted proxy at
 * 127.0.0.1 the client is the address its X-Forwarded-For names, so calls come from any
 * IPv6 address the test chooses.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("sourceprefix", { TRUSTED_PROXIES: "127.0.0.1", RATE_SOURCE_IPV6_PREFIX: "48" });
});
afterAll(async () => {
  await gw?.stop();
});

describe("RATE_SOURCE_IPV6_PREFIX", () => {
  it("is 64 by default, a whole number 32-128 otherwise, and stops start-up naming itself when bad", () => {
    expect(loadConfig({}).rateSourceIpv6Prefix).toBe(DEFAULT_SOURCE_IPV6_PREFIX);
    expect(DEFAULT_SOURCE_IPV6_PREFIX).toBe(64);
    expect(loadConfig({ RATE_SOURCE_IPV6_PREFIX: "48" }).rateSourceIpv6Prefix).toBe(48);
    expect(loadConfig({ RATE_SOURCE_IPV6_PREFIX: "128" }).rateSourceIpv6Prefix).toBe(128);
    for (const bad of ["31", "129", "/48", "48.5", "-64", "sixty-four"]) {
      expect(() => loadConfig({ RATE_SOURCE_IPV6_PREFIX: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ RATE_SOURCE_IPV6_PREFIX: bad })).toThrow(/^RATE_SOURCE_IPV6_PREFIX:/);
    }
  });

  it("groups IPv6 addresses by that many leading bits; an IPv4 address is its own source", () => {
    const same = (a: string, b: string, prefix?: number) => sourceId(a, prefix) === sourceId(b, prefix);
    expect(same("2001:db8:1:1::1", "2001:db8:1:1:ffff::2")).toBe(true);
    expect(same("2001:db8:1:1::1", "2001:db8:1:2::1")).toBe(false);
    expect(same("2001:db8:1:1::1", "2001:db8:1:ff00::1", 48)).toBe(true);
    expect(same("2001:db8:1::1", "2001:db8:2::1", 48)).toBe(false);
    expect(same("2001:db8:1:80::1", "2001:db8:1:7f::1", 57)).toBe(false);
    expect(same("2001:db8:1:80::1", "2001:db8:1:ff::1", 57)).toBe(true);
    expect(same("2001:db8::1", "2001:db8::2", 128)).toBe(false);
    expect(same("10.0.0.1", "10.0.0.2", 32)).toBe(false);
    expect(sourceId("not an address")).toBe("");
  });

  it("counts every address of a /48 as one source when set to 48", async () => {
    const made = await clientSetup(gw, { rate_per_minute: 100 });
    await patchKey(gw, made.id, { rate_per_source_per_minute: 2 });
    const now = (await gw.admin("GET", "/clock")).body.now as number;
    await advance(gw, 60 - (now % 60));
    const from = async (client: string) =>
      (
        await gw.call("/api/v1/verify.php", {
          method: "POST",
          body: { key: made.key, domain: "example.com" },
          headers: { "x-forwarded-for": client },
        })
      ).body.reason;
    // Three /64s of one routed /48: one source.
    expect([await from("2001:db8:aa:1::1"), await from("2001:db8:aa:2::1"), await from("2001:db8:aa:ffff::9")]).toEqual([
      "ok",
      "ok",
      "rate_limited",
    ]);
    // Another /48 is another source.
    expect(await from("2001:db8:bb:1::1")).toBe("ok");
  });
});
