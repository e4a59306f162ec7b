import { describe, expect, test } from "vitest";
import { address } from "../../../../actors/scanner/checks/address.js";
import { caa } from "../../../../actors/scanner/checks/caa.js";
import { danglingCname } from "../../../../actors/scanner/checks/dangling-cname.js";
import { dnssec } from "../../../../actors/scanner/checks/dnssec.js";
import { ns } from "../../../../actors/scanner/checks/ns.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { noData } from "../../../../shared/platform/net/outbound/evidence.js";
import { answer, DOMAIN, dnsWith, nxdomain, timedOut } from "../builders.js";

describe("dns:address", () => {
  test("pass with A and AAAA", () => {
    const f = evaluate(
      address,
      dnsWith({
        a: answer(DOMAIN, "A", [{ type: "A", name: DOMAIN, address: "192.0.2.1" }]),
        aaaa: answer(DOMAIN, "AAAA", [{ type: "AAAA", name: DOMAIN, address: "2001:db8::1" }]),
      }),
    );
    expect([f.status, f.result]).toEqual(["pass", "address-dual-stack"]);
    expect(f.evidence).toContain("example.test. AAAA 2001:db8::1");
  });
  test("info for empty evidence", () => {
    expect(evaluate(address, dnsWith({})).result).toBe("address-none");
  });
});

describe("dns:ns", () => {
  const nsAnswer = (...hosts: string[]) =>
    answer(
      DOMAIN,
      "NS",
      hosts.map((host) => ({ type: "NS", name: DOMAIN, host })),
    );
  test("pass with two name servers", () => {
    expect(evaluate(ns, dnsWith({ ns: nsAnswer("a.ns.test", "b.ns.test") })).result).toBe("ns-ok");
  });
  test("warn with one", () => {
    const f = evaluate(ns, dnsWith({ ns: nsAnswer("a.ns.test") }));
    expect([f.status, f.result]).toEqual(["warn", "ns-single"]);
  });
  test("fail with none", () => {
    expect(evaluate(ns, dnsWith({})).status).toBe("fail");
  });
  test("a time-out is recorded, not thrown", () => {
    expect(evaluate(ns, dnsWith({ ns: timedOut(DOMAIN, "NS") })).result).toBe("ns-lookup-failed");
  });
});

describe("dns:caa", () => {
  const caaAt = (name: string, ...records: [number, string, string][]) =>
    answer(
      name,
      "CAA",
      records.map(([flags, tag, value]) => ({ type: "CAA", name, flags, tag, value })),
    );
  test("pass when an issue tag restricts issuance", () => {
    const f = evaluate(caa, dnsWith({ caa: [caaAt(DOMAIN, [0, "issue", "letsencrypt.org"])] }));
    expect([f.status, f.result]).toEqual(["pass", "caa-ok"]);
    expect(f.evidence).toBe('example.test. CAA 0 issue "letsencrypt.org"');
  });
  test("the nearest non-empty set is the relevant one (tree climbing)", () => {
    const f = evaluate(
      caa,
      dnsWith({ domain: `www.${DOMAIN}`, caa: [noData(`www.${DOMAIN}`, "CAA"), caaAt(DOMAIN, [0, "issue", "ca.test"])] }),
    );
    expect(f.result).toBe("caa-ok");
    expect(f.detail).toContain(`At ${DOMAIN}`);
  });
  test("warn when missing", () => {
    expect(evaluate(caa, dnsWith({})).result).toBe("caa-missing");
  });
  test("fail on a critical unknown tag", () => {
    const f = evaluate(caa, dnsWith({ caa: [caaAt(DOMAIN, [128, "tbs", "x"])] }));
    expect([f.status, f.result]).toEqual(["fail", "caa-invalid"]);
  });
  test("warn when only iodef is set", () => {
    expect(evaluate(caa, dnsWith({ caa: [caaAt(DOMAIN, [0, "iodef", "mailto:sec@example.test"])] })).result).toBe("caa-no-issue");
  });
});

describe("dns:dnssec", () => {
  const soa = (overrides = {}) => answer(DOMAIN, "SOA", [{ type: "SOA", name: DOMAIN, primary: "ns1.example.test", serial: 1 }], overrides);
  const servfail = (name: string, type: "SOA" | "A") => ({ ...noData(name, type), status: "servfail" as const, rcode: 2 });
  const noKeys = { answer: noData(DOMAIN, "DNSKEY"), unchecked: null };
  test("pass when the resolver sets AD on the domain's answer", () => {
    const f = evaluate(
      dnssec,
      dnsWith({ dnssec: { answers: [{ answer: soa({ authenticated: true }), unchecked: null }], dnskey: noKeys } }),
    );
    expect([f.status, f.result]).toEqual(["pass", "dnssec-validated"]);
    expect(f.evidence).toContain("(ad)");
  });
  test("warn when unsigned (empty evidence)", () => {
    expect(evaluate(dnssec, dnsWith({})).result).toBe("dnssec-unsigned");
  });
  test("fail when SERVFAIL goes away with CD (bogus)", () => {
    const f = evaluate(dnssec, dnsWith({ dnssec: { answers: [{ answer: servfail(DOMAIN, "SOA"), unchecked: soa() }], dnskey: noKeys } }));
    expect([f.status, f.result]).toEqual(["fail", "dnssec-bogus"]);
  });
  test("a bogus A record makes the domain bogus even when its SOA validates", () => {
    const a = answer(DOMAIN, "A", [{ type: "A", name: DOMAIN, address: "192.0.2.1" }]);
    const answers = [
      { answer: soa({ authenticated: true }), unchecked: null },
      { answer: servfail(DOMAIN, "A"), unchecked: a },
    ];
    const f = evaluate(dnssec, dnsWith({ dnssec: { answers, dnskey: noKeys } }));
    expect(f.result).toBe("dnssec-bogus");
    expect(f.detail).toContain(`${DOMAIN} A`);
  });
  test("SERVFAIL with and without CD is a failed lookup, not bogus", () => {
    const f = evaluate(
      dnssec,
      dnsWith({ dnssec: { answers: [{ answer: servfail(DOMAIN, "SOA"), unchecked: servfail(DOMAIN, "SOA") }], dnskey: noKeys } }),
    );
    expect(f.result).toBe("dnssec-lookup-failed");
  });
  test("info when keys exist but nothing confirms validation", () => {
    const dnskey = { answer: answer(DOMAIN, "DNSKEY", [{ type: "DNSKEY", name: DOMAIN, flags: 257, algorithm: 13 }]), unchecked: null };
    expect(evaluate(dnssec, dnsWith({ dnssec: { answers: [{ answer: soa(), unchecked: null }], dnskey } })).result).toBe(
      "dnssec-signed-unconfirmed",
    );
  });
});

describe("dns:dangling-cname", () => {
  const www = `www.${DOMAIN}`;
  const cname = answer(www, "CNAME", [{ type: "CNAME", name: www, target: "gone.cloud.test" }]);
  test("pass when the alias target resolves", () => {
    const target = answer("gone.cloud.test", "A", [{ type: "A", name: "gone.cloud.test", address: "192.0.2.7" }]);
    expect(evaluate(danglingCname, dnsWith({ cnames: [{ name: www, cname, target }] })).status).toBe("pass");
  });
  test("pass for empty evidence", () => {
    expect(evaluate(danglingCname, dnsWith({})).result).toBe("dangling-none");
  });
  test("fail when the target is NXDOMAIN", () => {
    const f = evaluate(danglingCname, dnsWith({ cnames: [{ name: www, cname, target: nxdomain("gone.cloud.test", "A") }] }));
    expect([f.status, f.result]).toEqual(["fail", "dangling-found"]);
    expect(f.detail).toContain("www.example.test -> gone.cloud.test");
    expect(f.evidence).toContain("www.example.test. CNAME gone.cloud.test.");
  });
});
