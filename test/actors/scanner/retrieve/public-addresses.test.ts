/**
 * Scan evidence never shows an address the scan policy refuses: a customer's MX, CNAME or
 * SPF `a:` name pointing into the service's network must not tell the customer what the
 * internal name resolves to.
 */
import { describe, expect, test } from "vitest";
import { retrieveDns } from "../../../../actors/scanner/retrieve/dns-evidence.js";
import { evaluateDns } from "../../../../actors/scanner/scan.js";
import { outboundPolicy } from "../../../../shared/platform/net/address-policy.js";
import type { DnsQuery } from "../../../../shared/platform/net/outbound/dns-client.js";
import { type DnsRecord, NON_PUBLIC_ADDRESS, noData } from "../../../../shared/platform/net/outbound/evidence.js";
import { defaultScanOptions } from "../../../../shared/platform/net/outbound/options.js";
import { answer, NOW } from "../builders.js";

const DOMAIN = "customer.test";
const INTERNAL_MX = "redis.default.svc.cluster.local";
const INTERNAL = ["10.96.0.12", "fd00::12", "127.0.0.1", "192.168.1.5", "169.254.169.254"];

const ZONE: Record<string, DnsRecord[]> = {
  [`${DOMAIN}/A`]: [
    { type: "A", name: DOMAIN, address: "8.8.8.8" },
    { type: "A", name: DOMAIN, address: "169.254.169.254" },
  ],
  [`${DOMAIN}/MX`]: [{ type: "MX", name: DOMAIN, priority: 10, exchange: INTERNAL_MX }],
  [`${DOMAIN}/TXT`]: [{ type: "TXT", name: DOMAIN, strings: ["v=spf1 a:db.customer.test -all"] }],
  [`${INTERNAL_MX}/A`]: [{ type: "A", name: INTERNAL_MX, address: "10.96.0.12" }],
  [`${INTERNAL_MX}/AAAA`]: [{ type: "AAAA", name: INTERNAL_MX, address: "fd00::12" }],
  [`www.${DOMAIN}/CNAME`]: [{ type: "CNAME", name: `www.${DOMAIN}`, target: "internal.customer.test" }],
  "internal.customer.test/A": [{ type: "A", name: "internal.customer.test", address: "127.0.0.1" }],
  "db.customer.test/A": [{ type: "A", name: "db.customer.test", address: "192.168.1.5" }],
};

const query: DnsQuery = async (name, type) => {
  const records = ZONE[`${name}/${type}`];
  return records ? answer(name, type, records) : noData(name, type);
};

const scanWith = (reach: "none" | "all") =>
  retrieveDns(DOMAIN, defaultScanOptions({ outbound: outboundPolicy("scan", reach) }), NOW, query);

describe("addresses in DNS evidence", () => {
  test("an address the scan policy refuses is written as a non-public address, in the evidence and every finding", async () => {
    const evidence = await scanWith("none");
    const stored = JSON.stringify({ evidence, findings: evaluateDns(evidence).findings });
    for (const address of INTERNAL) expect(stored).not.toContain(address);
    expect(stored).toContain(NON_PUBLIC_ADDRESS);
    // Public addresses are kept, next to a refused one of the same name.
    expect(evidence.a.records).toEqual([
      { type: "A", name: DOMAIN, address: "8.8.8.8" },
      { type: "A", name: DOMAIN, address: NON_PUBLIC_ADDRESS },
    ]);
    expect(evidence.mxHosts[0].a.records).toEqual([{ type: "A", name: INTERNAL_MX, address: NON_PUBLIC_ADDRESS }]);
    expect(evidence.cnames.find((c) => c.name === `www.${DOMAIN}`)?.target?.records).toEqual([
      { type: "A", name: "internal.customer.test", address: NON_PUBLIC_ADDRESS },
    ]);
    expect(evidence.spf["a:db.customer.test"].records).toEqual([{ type: "A", name: "db.customer.test", address: NON_PUBLIC_ADDRESS }]);
    expect(evidence.dnssec.answers[1].answer.records).toEqual(evidence.a.records);
  });

  test("an MX host with only non-public addresses fails mail:mx: mail from the internet cannot reach it", async () => {
    const mx = evaluateDns(await scanWith("none")).findings.find((f) => f.id === "mail:mx");
    expect([mx?.status, mx?.result]).toEqual(["fail", "mx-not-public"]);
    expect(mx?.detail).toContain(INTERNAL_MX);
    expect(mx?.evidence).toContain(`${INTERNAL_MX}. A ${NON_PUBLIC_ADDRESS}`);
  });

  test("a policy that reaches private space (SCAN_ALLOW_PRIVATE, tests) shows the addresses as they are", async () => {
    const evidence = await scanWith("all");
    expect(evidence.mxHosts[0].a.records).toEqual([{ type: "A", name: INTERNAL_MX, address: "10.96.0.12" }]);
    expect(evaluateDns(evidence).findings.find((f) => f.id === "mail:mx")?.result).toBe("mx-ok");
  });
});
