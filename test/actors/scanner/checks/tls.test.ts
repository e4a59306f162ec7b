import { describe, expect, test } from "vitest";
import { certificate as certificateCheck } from "../../../../actors/scanner/checks/certificate.js";
import { hsts } from "../../../../actors/scanner/checks/hsts.js";
import { httpsRedirect } from "../../../../actors/scanner/checks/https-redirect.js";
import { tlsVersion } from "../../../../actors/scanner/checks/tls-version.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { emptyExchange, type HttpExchange } from "../../../../shared/platform/net/outbound/evidence.js";
import { certificate, DAY_MS, DOMAIN, NOW, response, tlsInfo, webWith, webWithPage } from "../builders.js";

const redirectTo = (from: string, to: string): HttpExchange => response(from, [["location", to]], { status: 301 });
const httpChain = (hops: HttpExchange[], outcome: "complete" | "loop" | "error" = "complete") =>
  webWith({ http: { start: `http://${DOMAIN}/`, hops, outcome } });

describe("tls:https-redirect", () => {
  test("pass when http redirects straight to https on the same host", () => {
    const f = evaluate(httpsRedirect, httpChain([redirectTo(`http://${DOMAIN}/`, `https://${DOMAIN}/`), response(`https://${DOMAIN}/`)]));
    expect([f.status, f.result]).toEqual(["pass", "redirect-ok"]);
    expect(f.evidence).toContain(`GET http://${DOMAIN}/ -> 301 location: https://${DOMAIN}/`);
  });
  test("info for empty evidence (http not tried)", () => {
    expect(evaluate(httpsRedirect, webWith({})).result).toBe("redirect-no-http");
  });
  test("fail when http serves the page", () => {
    const f = evaluate(httpsRedirect, httpChain([response(`http://${DOMAIN}/`)]));
    expect([f.status, f.result]).toEqual(["fail", "redirect-missing"]);
  });
  test("fail on a loop", () => {
    expect(
      evaluate(
        httpsRedirect,
        httpChain([redirectTo(`http://${DOMAIN}/`, `http://${DOMAIN}/a`), redirectTo(`http://${DOMAIN}/a`, `http://${DOMAIN}/`)], "loop"),
      ).result,
    ).toBe("redirect-invalid");
  });
  test("fail when the chain ends on http", () => {
    expect(
      evaluate(
        httpsRedirect,
        httpChain([redirectTo(`http://${DOMAIN}/`, "http://www.example.test/"), response("http://www.example.test/")]),
      ).result,
    ).toBe("redirect-not-to-https");
  });
  test("warn when the first hop leaves for another host", () => {
    expect(
      evaluate(
        httpsRedirect,
        httpChain([redirectTo(`http://${DOMAIN}/`, "https://www.example.test/"), response("https://www.example.test/")]),
      ).result,
    ).toBe("redirect-off-host");
  });
});

describe("tls:certificate", () => {
  test("pass for a trusted certificate with time left", () => {
    const f = evaluate(certificateCheck, webWithPage([]));
    expect([f.status, f.result]).toEqual(["pass", "cert-valid"]);
    expect(f.evidence).toContain("issuer: CN=Test CA");
  });
  test("fail for empty evidence (no https)", () => {
    expect(evaluate(certificateCheck, webWith({})).result).toBe("cert-no-https");
  });
  test("fail when expired at the scan time", () => {
    const expired = tlsInfo({
      certificate: certificate({ validToMs: NOW - DAY_MS }),
      authorized: false,
      authorizationError: "CERT_HAS_EXPIRED",
    });
    const f = evaluate(certificateCheck, webWithPage([], { tls: expired }));
    expect([f.status, f.result]).toEqual(["fail", "cert-expired"]);
  });
  test("warn under 14 days left", () => {
    const f = evaluate(certificateCheck, webWithPage([], { tls: tlsInfo({ certificate: certificate({ validToMs: NOW + 5 * DAY_MS }) }) }));
    expect([f.status, f.result]).toEqual(["warn", "cert-expiring"]);
  });
  test("fail when untrusted or for another name", () => {
    expect(
      evaluate(certificateCheck, webWithPage([], { tls: tlsInfo({ authorized: false, authorizationError: "SELF_SIGNED_CERT_IN_CHAIN" }) }))
        .result,
    ).toBe("cert-untrusted");
    expect(
      evaluate(
        certificateCheck,
        webWithPage([], { tls: tlsInfo({ authorized: false, authorizationError: "ERR_TLS_CERT_ALTNAME_INVALID" }) }),
      ).result,
    ).toBe("cert-name-mismatch");
  });
});

describe("tls:version", () => {
  test("pass for TLS 1.3 with legacy refused", () => {
    expect(evaluate(tlsVersion, { ...webWithPage([]), legacyTls: false }).result).toBe("tls-modern");
  });
  test("info for empty evidence", () => {
    expect(evaluate(tlsVersion, webWith({})).status).toBe("info");
  });
  test("fail below TLS 1.2", () => {
    const f = evaluate(tlsVersion, webWithPage([], { tls: tlsInfo({ protocol: "TLSv1.1" }) }));
    expect([f.status, f.result]).toEqual(["fail", "tls-obsolete"]);
  });
  test("warn when TLS 1.1 is still accepted", () => {
    expect(evaluate(tlsVersion, { ...webWithPage([]), legacyTls: true }).result).toBe("tls-legacy-enabled");
  });
});

describe("tls:hsts", () => {
  const withHsts = (value: string) => evaluate(hsts, webWithPage([["strict-transport-security", value]]));
  test("pass, preload-ready, for a year with includeSubDomains and preload", () => {
    const f = withHsts("max-age=63072000; includeSubDomains; preload");
    expect([f.status, f.result]).toEqual(["pass", "hsts-preload-ready"]);
    expect(f.evidence).toBe("strict-transport-security: max-age=63072000; includeSubDomains; preload");
  });
  test("pass for six months", () => {
    expect(withHsts("max-age=15768000").result).toBe("hsts-ok");
  });
  test("fail when missing", () => {
    expect(evaluate(hsts, webWithPage([])).result).toBe("hsts-missing");
  });
  test("fail for empty evidence (no https)", () => {
    expect(evaluate(hsts, webWith({})).result).toBe("hsts-no-https");
  });
  test("warn under six months, fail when malformed", () => {
    expect(withHsts("max-age=300").result).toBe("hsts-short");
    expect(withHsts("max-age=abc").result).toBe("hsts-invalid");
    expect(withHsts("max-age=1; max-age=2").result).toBe("hsts-invalid");
  });
  test("only the domain's first https response counts", () => {
    const first = emptyExchange(`https://${DOMAIN}/`, {
      status: 301,
      tls: tlsInfo(),
      headers: [["location", "https://www.example.test/"]],
    });
    const second = response("https://www.example.test/", [["strict-transport-security", "max-age=63072000"]]);
    expect(evaluate(hsts, webWith({ https: { start: `https://${DOMAIN}/`, hops: [first, second], outcome: "complete" } })).result).toBe(
      "hsts-missing",
    );
  });
});
