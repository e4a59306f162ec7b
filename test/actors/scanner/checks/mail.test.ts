import { describe, expect, test } from "vitest";
import { dkim } from "../../../../actors/scanner/checks/dkim.js";
import { dmarc } from "../../../../actors/scanner/checks/dmarc.js";
import { mtaSts } from "../../../../actors/scanner/checks/mta-sts.js";
import { mx } from "../../../../actors/scanner/checks/mx.js";
import { tlsRpt } from "../../../../actors/scanner/checks/tls-rpt.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { NON_PUBLIC_ADDRESS, noData } from "../../../../shared/platform/net/outbound/evidence.js";
import { answer, DOMAIN, dnsWith, mxAnswer, response, txt } from "../builders.js";

const MX_HOST = `mx.${DOMAIN}`;
const hostWithAddress = {
  exchange: MX_HOST,
  a: answer(MX_HOST, "A", [{ type: "A", name: MX_HOST, address: "192.0.2.25" }]),
  aaaa: noData(MX_HOST, "AAAA"),
};

describe("mail:mx", () => {
  test("pass when the exchange has addresses", () => {
    const f = evaluate(mx, dnsWith({ mx: mxAnswer(MX_HOST), mxHosts: [hostWithAddress] }));
    expect([f.status, f.result]).toEqual(["pass", "mx-ok"]);
    expect(f.evidence).toBe("example.test. MX 10 mx.example.test.");
  });
  test("warn when there is no MX (empty evidence)", () => {
    expect(evaluate(mx, dnsWith({})).result).toBe("mx-missing");
  });
  test("info for a null MX (RFC 7505)", () => {
    expect(evaluate(mx, dnsWith({ mx: mxAnswer("") })).result).toBe("mx-null");
  });
  test("fail when the exchange is a CNAME", () => {
    const aliased = { ...hostWithAddress, a: { ...hostWithAddress.a, aliases: ["mailhost.example.test"] } };
    const f = evaluate(mx, dnsWith({ mx: mxAnswer(MX_HOST), mxHosts: [aliased] }));
    expect([f.status, f.result]).toEqual(["fail", "mx-cname"]);
  });
  test("fail when the exchange has no address", () => {
    const dead = { exchange: MX_HOST, a: noData(MX_HOST, "A"), aaaa: noData(MX_HOST, "AAAA") };
    expect(evaluate(mx, dnsWith({ mx: mxAnswer(MX_HOST), mxHosts: [dead] })).result).toBe("mx-unresolvable");
  });
  test("fail when the exchange resolves only to addresses the scan may not reach", () => {
    const internal = {
      exchange: MX_HOST,
      a: answer(MX_HOST, "A", [{ type: "A", name: MX_HOST, address: NON_PUBLIC_ADDRESS }]),
      aaaa: answer(MX_HOST, "AAAA", [{ type: "AAAA", name: MX_HOST, address: NON_PUBLIC_ADDRESS }]),
    };
    const f = evaluate(mx, dnsWith({ mx: mxAnswer(MX_HOST), mxHosts: [internal] }));
    expect([f.status, f.result]).toEqual(["fail", "mx-not-public"]);
    // One public address is enough to receive mail.
    const mixed = { ...internal, aaaa: hostWithAddress.a };
    expect(evaluate(mx, dnsWith({ mx: mxAnswer(MX_HOST), mxHosts: [mixed] })).result).toBe("mx-ok");
  });
});

describe("mail:dmarc", () => {
  const at = `_dmarc.${DOMAIN}`;
  const withRecord = (...texts: string[]) => evaluate(dmarc, dnsWith({ dmarc: txt(at, ...texts) }));
  test("pass with p=reject and rua", () => {
    const f = withRecord("v=DMARC1; p=reject; rua=mailto:d@example.test");
    expect([f.status, f.result]).toEqual(["pass", "dmarc-reject"]);
    expect(f.evidence).toBe('_dmarc.example.test. TXT "v=DMARC1; p=reject; rua=mailto:d@example.test"');
  });
  test("fail when missing (empty evidence)", () => {
    expect(evaluate(dmarc, dnsWith({})).result).toBe("dmarc-missing");
  });
  test("fail with two records", () => {
    expect(withRecord("v=DMARC1; p=reject", "v=DMARC1; p=none").result).toBe("dmarc-multiple");
  });
  test("fail on syntax errors", () => {
    expect(withRecord("v=DMARC1; p=block; pct=150").result).toBe("dmarc-syntax");
  });
  test("warn for p=none, pct below 100 and no rua", () => {
    expect(withRecord("v=DMARC1; p=none; rua=mailto:d@example.test").result).toBe("dmarc-none");
    expect(withRecord("v=DMARC1; p=quarantine; pct=50; rua=mailto:d@example.test").result).toBe("dmarc-partial");
    expect(withRecord("v=DMARC1; p=quarantine").result).toBe("dmarc-no-rua");
  });
  test("a subdomain inherits the organisational record's sp=", () => {
    const sub = `shop.${DOMAIN}`;
    const f = evaluate(
      dmarc,
      dnsWith({
        domain: sub,
        zone: DOMAIN,
        dmarc: noData(`_dmarc.${sub}`, "TXT"),
        dmarcZone: txt(at, "v=DMARC1; p=reject; sp=none; rua=mailto:d@example.test"),
      }),
    );
    expect(f.result).toBe("dmarc-none");
    expect(f.detail).toContain("inherited");
  });
});

describe("mail:dkim", () => {
  const at = (selector: string) => `${selector}._domainkey.${DOMAIN}`;
  test("pass when a selector has a key", () => {
    const f = evaluate(
      dkim,
      dnsWith({ dkim: [{ selector: "selector1", answer: txt(at("selector1"), "v=DKIM1; k=rsa; p=MIIBIjANBgkq") }] }),
    );
    expect([f.status, f.result]).toEqual(["pass", "dkim-found"]);
  });
  test("warn when no selector has a key (empty evidence)", () => {
    expect(evaluate(dkim, dnsWith({})).result).toBe("dkim-not-found");
  });
  test("warn when the only key is revoked (empty p=)", () => {
    expect(evaluate(dkim, dnsWith({ dkim: [{ selector: "s1", answer: txt(at("s1"), "v=DKIM1; p=") }] })).result).toBe("dkim-revoked");
  });
  test("fail on a malformed key record", () => {
    expect(evaluate(dkim, dnsWith({ dkim: [{ selector: "s1", answer: txt(at("s1"), "v=DKIM1; k=dsa; p=abc") }] })).status).toBe("fail");
  });
});

describe("mail:mta-sts", () => {
  const sts = txt(`_mta-sts.${DOMAIN}`, "v=STSv1; id=2026");
  const policy = (body: string, overrides = {}) =>
    response(`https://mta-sts.${DOMAIN}/.well-known/mta-sts.txt`, [["content-type", "text/plain"]], { body, ...overrides });
  const enforce = "version: STSv1\nmode: enforce\nmx: mx.example.test\nmax_age: 604800\n";
  test("pass for an enforced policy covering the MX", () => {
    const f = evaluate(mtaSts, dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy(enforce) }));
    expect([f.status, f.result]).toEqual(["pass", "mta-sts-enforce"]);
  });
  test("wildcard patterns match one label", () => {
    const f = evaluate(
      mtaSts,
      dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy(enforce.replace("mx.example.test", "*.example.test")) }),
    );
    expect(f.result).toBe("mta-sts-enforce");
  });
  test("warn when missing for a domain with MX", () => {
    expect(evaluate(mtaSts, dnsWith({ mx: mxAnswer(MX_HOST) })).result).toBe("mta-sts-missing");
  });
  test("fail when the policy cannot be fetched", () => {
    const f = evaluate(
      mtaSts,
      dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy("", { status: null, error: "ECONNREFUSED" }) }),
    );
    expect([f.status, f.result]).toEqual(["fail", "mta-sts-policy-unavailable"]);
  });
  test("fail when an MX is not covered", () => {
    expect(evaluate(mtaSts, dnsWith({ mx: mxAnswer("other.mail.test"), mtaStsTxt: sts, mtaStsPolicy: policy(enforce) })).result).toBe(
      "mta-sts-mx-mismatch",
    );
  });
  test("fail on an invalid policy file", () => {
    expect(
      evaluate(mtaSts, dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy("version: STSv1\nmode: strict\n") })).result,
    ).toBe("mta-sts-policy-invalid");
  });
  test("values are trimmed; a value with a megabyte of spaces inside is read, not backtracked over", () => {
    const f = evaluate(
      mtaSts,
      dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy(`${enforce}mx:  \t${MX_HOST}${" ".repeat(1 << 20)}x  \n`) }),
    );
    expect(f.result).toBe("mta-sts-enforce");
    expect(
      evaluate(mtaSts, dnsWith({ mx: mxAnswer(MX_HOST), mtaStsTxt: sts, mtaStsPolicy: policy(": enforce\nmode : enforce\n") })).result,
    ).toBe("mta-sts-policy-invalid");
  });
});

describe("mail:tls-rpt", () => {
  test("pass with a record and rua", () => {
    const f = evaluate(
      tlsRpt,
      dnsWith({ mx: mxAnswer(MX_HOST), tlsRpt: txt(`_smtp._tls.${DOMAIN}`, "v=TLSRPTv1; rua=mailto:tls@example.test") }),
    );
    expect([f.status, f.result]).toEqual(["pass", "tls-rpt-ok"]);
  });
  test("warn when missing", () => {
    expect(evaluate(tlsRpt, dnsWith({ mx: mxAnswer(MX_HOST) })).result).toBe("tls-rpt-missing");
  });
  test("fail without rua", () => {
    expect(evaluate(tlsRpt, dnsWith({ mx: mxAnswer(MX_HOST), tlsRpt: txt(`_smtp._tls.${DOMAIN}`, "v=TLSRPTv1;") })).status).toBe("fail");
  });
  test("info for empty evidence (no mail)", () => {
    expect(evaluate(tlsRpt, dnsWith({})).status).toBe("info");
  });
});
