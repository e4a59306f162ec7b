import { describe, expect, it } from "vitest";
import { parseDomain } from "../../../actors/scanner/scan.js";
import { hostOf, isLockVerified } from "../../../shared/verify/domain.js";
import { normalizeDomain } from "../../../shared/platform/validation.js";

/**
 * One domain rule: what the admin API accepts as a domain (normalizeDomain) the scanner
 * scans and enforcement takes as a lock and as a verified domain, unchanged.
 */
describe("domain syntax agrees across admin, scanner and enforcement", () => {
  const accepted = ["_x.example.com", "example.com", "www.example.co.uk", "a-b.example.test", "EXAMPLE.com."];

  it.each(accepted)("%s", (input) => {
    const name = normalizeDomain(input);
    expect(name).not.toBeNull();
    if (name === null) return;
    expect(parseDomain(name)).toEqual({ ok: true, domain: name });
    expect(hostOf(name)).toBe(name);
    expect(isLockVerified(hostOf(name), [name])).toBe(true);
  });

  it("a call naming the verified underscore host (as a URL or host:port too) matches its lock", () => {
    for (const sent of ["_x.example.com", "https://_x.example.com/page", "_x.example.com:8443", "_X.EXAMPLE.COM."]) {
      expect(hostOf(sent)).toBe("_x.example.com");
    }
  });
});
