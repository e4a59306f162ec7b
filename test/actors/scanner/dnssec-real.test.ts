/**
 * DNSSEC and NS on the real zone cut, against real DNS software: knotd serving zones
 * signed at test start by ldns-signzone, unbound validating with a local trust anchor
 * (test/fixtures/scanner/dnssec-lab.ts). The public suffix list maps every child below to
 * `signed.test`; each must get its own zone's verdict.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { dnssec } from "../../../actors/scanner/checks/dnssec.js";
import { ns } from "../../../actors/scanner/checks/ns.js";
import { evaluate } from "../../../actors/scanner/finding.js";
import { defaultScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { retrieveDns } from "../../../actors/scanner/retrieve/dns-evidence.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { LAB_TOOLS, labToolsPresent, startDnssecLab, type DnssecLab } from "../../fixtures/scanner/dnssec-lab.js";

let lab: DnssecLab;

beforeAll(async () => {
  // Never skipped: .ci/run installs these; a machine without them fails here, saying so.
  if (!(await labToolsPresent())) throw new Error(`DNSSEC tests need ${LAB_TOOLS.join(", ")}: apt-get install -y unbound knot ldnsutils`);
  lab = await startDnssecLab();
}, 20_000);
afterAll(async () => lab?.stop());

function retrieve(domain: string): Promise<DnsEvidence> {
  const options = defaultScanOptions({ resolver: lab.resolver, outbound: outboundPolicy("scan", "all"), httpsPort: 9, timeoutMs: 2000 });
  return retrieveDns(domain, options, Date.now());
}

describe("DNSSEC with a validating resolver", () => {
  const cases: readonly (readonly [string, string, string])[] = [
    // domain, expected zone, expected result
    ["signed.test", "signed.test", "dnssec-validated"],
    ["www.signed.test", "signed.test", "dnssec-validated"],
    ["deep.signed.test", "deep.signed.test", "dnssec-validated"],
    ["unsigned.signed.test", "unsigned.signed.test", "dnssec-unsigned"],
    ["www.unsigned.signed.test", "unsigned.signed.test", "dnssec-unsigned"],
    ["badsig.signed.test", "badsig.signed.test", "dnssec-bogus"],
    ["expired.signed.test", "expired.signed.test", "dnssec-bogus"],
    ["dsmismatch.signed.test", "dsmismatch.signed.test", "dnssec-bogus"],
    ["island.signed.test", "island.signed.test", "dnssec-signed-unconfirmed"],
  ];
  test.each(cases)("%s: zone %s, %s", async (domain, zone, result) => {
    const evidence = await retrieve(domain);
    expect(evidence.organizationalDomain).toBe("signed.test");
    expect([evidence.zone, evidence.zoneSource]).toEqual([zone, "soa"]);
    const finding = evaluate(dnssec, evidence);
    expect(finding.result, finding.detail).toBe(result);
  });

  test("NS is asked at the real zone cut", async () => {
    const evidence = await retrieve("www.unsigned.signed.test");
    expect(evidence.ns.name).toBe("unsigned.signed.test");
    const finding = evaluate(ns, evidence);
    expect(finding.result).toBe("ns-ok");
    expect(finding.evidence).toContain("unsigned.signed.test. NS ns1.unsigned.signed.test.");
  });

  test("bogus is reported with the SERVFAIL and the CD answer as evidence", async () => {
    const finding = evaluate(dnssec, await retrieve("expired.signed.test"));
    expect(finding.status).toBe("fail");
    expect(finding.evidence).toContain("SERVFAIL");
    expect(finding.evidence).toContain("(CD set)");
  });
});
