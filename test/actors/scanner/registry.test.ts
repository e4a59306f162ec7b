import { describe, expect, test } from "vitest";
import { allChecks, DNS_CHECKS, type DnsCheck, findCheck, WEB_CHECKS, type WebCheck } from "../../../actors/scanner/checks/index.js";
import { evaluate, STATUSES } from "../../../actors/scanner/finding.js";
import { MODIFIERS } from "../../../actors/scanner/grading.js";
import { emptyDnsEvidence, emptyWebEvidence } from "../../../shared/platform/net/outbound/evidence.js";

describe("check registry", () => {
  test("ids are unique, <group>:<name>, and each section has its checks", () => {
    const ids = allChecks().map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const check of allChecks()) {
      expect(check.id).toMatch(/^[a-z]+:[a-z0-9-]+$/);
      expect(check.id.startsWith(`${check.group}:`)).toBe(true);
      expect(check.label.length).toBeGreaterThan(0);
    }
    expect(DNS_CHECKS.every((c) => c.section === "dns")).toBe(true);
    expect(WEB_CHECKS.every((c) => c.section === "web")).toBe(true);
  });

  test("every result has a status, a summary and exactly one score modifier", () => {
    const declared = allChecks().flatMap((c) => Object.keys(c.results));
    expect(new Set(declared).size).toBe(declared.length);
    expect(new Set(declared)).toEqual(new Set(Object.keys(MODIFIERS)));
    for (const check of allChecks()) {
      const specs = Object.values(check.results);
      expect(specs.every((s) => STATUSES.includes(s.status) && s.summary.length > 0)).toBe(true);
      expect(
        specs.some((s) => s.status === "pass"),
        `${check.id} has a pass result`,
      ).toBe(true);
      expect(
        specs.some((s) => s.status !== "pass"),
        `${check.id} has a non-pass result`,
      ).toBe(true);
    }
  });

  test("every check runs on empty evidence", () => {
    const dnsChecks: readonly DnsCheck[] = DNS_CHECKS;
    const webChecks: readonly WebCheck[] = WEB_CHECKS;
    for (const check of dnsChecks) expect(evaluate(check, emptyDnsEvidence("example.test")).id).toBe(check.id);
    for (const check of webChecks) expect(evaluate(check, emptyWebEvidence("example.test")).id).toBe(check.id);
  });

  test("findCheck maps a finding id to its section", () => {
    expect(findCheck("mail:spf")?.section).toBe("dns");
    expect(findCheck("tls:hsts")?.section).toBe("web");
    expect(findCheck("web:nothing")).toBeNull();
  });
});
