import { describe, expect, test } from "vitest";
import { contentTypeOptions } from "../../../../actors/scanner/checks/content-type-options.js";
import { corp } from "../../../../actors/scanner/checks/corp.js";
import { cors } from "../../../../actors/scanner/checks/cors.js";
import { csp } from "../../../../actors/scanner/checks/csp.js";
import { frameOptions } from "../../../../actors/scanner/checks/frame-options.js";
import { referrerPolicy } from "../../../../actors/scanner/checks/referrer-policy.js";
import { serverBanner } from "../../../../actors/scanner/checks/server-banner.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { CORS_PROBE_ORIGIN } from "../../../../shared/platform/net/outbound/evidence.js";
import { DOMAIN, response, webWith, webWithPage } from "../builders.js";

const withCsp = (...values: string[]) => evaluate(csp, webWithPage(values.map((v) => ["content-security-policy", v] as const)));

describe("headers:csp", () => {
  test("pass (strict) for default-src 'none'", () => {
    const f = withCsp("default-src 'none'; script-src 'self'; object-src 'none'");
    expect([f.status, f.result]).toEqual(["pass", "csp-strict"]);
    expect(f.evidence).toBe("content-security-policy: default-src 'none'; script-src 'self'; object-src 'none'");
  });
  test("pass for a restrictive policy", () => {
    expect(withCsp("default-src 'self'").result).toBe("csp-ok");
  });
  test("fail when missing", () => {
    expect(evaluate(csp, webWithPage([])).result).toBe("csp-missing");
  });
  test("info for empty evidence", () => {
    expect(evaluate(csp, webWith({})).result).toBe("csp-no-response");
  });
  test("fail for unsafe-inline, unless a nonce disables it", () => {
    expect(withCsp("default-src 'self'; script-src 'self' 'unsafe-inline'").result).toBe("csp-unsafe-inline");
    expect(withCsp("default-src 'self'; script-src 'self' 'unsafe-inline' 'nonce-abc'").result).toBe("csp-ok");
  });
  test("fail for wildcard and scheme sources in script-src", () => {
    expect(withCsp("default-src 'self'; script-src *").result).toBe("csp-insecure-source");
    expect(withCsp("default-src 'self'; script-src https:").result).toBe("csp-insecure-source");
    // Scripts are locked down; with no style-src or default-src, styles are open (Observatory: 0, not +5).
    expect(withCsp("script-src 'nonce-x' 'strict-dynamic' https:; object-src 'none'").result).toBe("csp-unsafe-style");
    expect(withCsp("script-src 'nonce-x' 'strict-dynamic' https:; object-src 'none'; style-src 'self'").result).toBe("csp-ok");
  });
  test("warn for unsafe-eval and open object-src", () => {
    expect(withCsp("default-src 'self'; script-src 'self' 'unsafe-eval'").result).toBe("csp-unsafe-eval");
    expect(withCsp("script-src 'self'").result).toBe("csp-object-src-open");
  });
  test("fail when only report-only is sent, or scripts are not covered", () => {
    expect(evaluate(csp, webWithPage([["content-security-policy-report-only", "default-src 'none'"]])).result).toBe("csp-report-only");
    expect(withCsp("img-src 'self'").result).toBe("csp-no-script-policy");
    expect(withCsp("nonsense").result).toBe("csp-invalid");
  });
  test("the strictest of several policies is judged", () => {
    expect(withCsp("script-src *", "default-src 'none'").result).toBe("csp-strict");
  });
});

describe("headers:csp, Observatory buckets", () => {
  test("plain-HTTP sources: active content fails, images and media warn", () => {
    expect(withCsp("default-src 'self'; script-src 'self' http://cdn.example.net").result).toBe("csp-insecure-scheme");
    expect(withCsp("default-src 'self'; connect-src http://api.example.net").result).toBe("csp-insecure-scheme");
    const passive = withCsp("default-src 'self'; img-src 'self' http://img.example.net");
    expect([passive.status, passive.result]).toEqual(["warn", "csp-insecure-passive"]);
  });
  test("unsafe style sources cost the bonus only", () => {
    expect(withCsp("default-src 'self'; style-src 'self' 'unsafe-inline'").result).toBe("csp-unsafe-style");
  });
  test("a policy in <meta http-equiv> counts; frame-ancestors there does not", () => {
    const body = `<html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; frame-ancestors 'none'"></head></html>`;
    const page = webWithPage([["content-type", "text/html"]], { body });
    const f = evaluate(csp, page);
    expect(f.result).toBe("csp-strict");
    expect(f.evidence).toContain('<meta http-equiv="Content-Security-Policy"');
    expect(evaluate(frameOptions, page).result).toBe("frame-missing");
  });
  test("a <meta> policy on a non-HTML response is not a policy", () => {
    const body = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'">`;
    expect(evaluate(csp, webWithPage([["content-type", "application/json"]], { body })).result).toBe("csp-missing");
  });
});

describe("headers:frame-options", () => {
  test("pass via frame-ancestors", () => {
    const f = evaluate(frameOptions, webWithPage([["content-security-policy", "default-src 'self'; frame-ancestors 'none'"]]));
    expect([f.status, f.result]).toEqual(["pass", "frame-ancestors"]);
  });
  test("pass via X-Frame-Options DENY", () => {
    expect(evaluate(frameOptions, webWithPage([["x-frame-options", "DENY"]])).result).toBe("xfo-ok");
  });
  test("fail when missing", () => {
    expect(evaluate(frameOptions, webWithPage([])).result).toBe("frame-missing");
  });
  test("fail for ALLOW-FROM and open frame-ancestors", () => {
    expect(evaluate(frameOptions, webWithPage([["x-frame-options", "ALLOW-FROM https://a.test"]])).result).toBe("xfo-invalid");
    expect(evaluate(frameOptions, webWithPage([["content-security-policy", "frame-ancestors *"]])).result).toBe("frame-ancestors-open");
  });
});

describe("headers:frame-options, repeated", () => {
  test("two different X-Frame-Options values cancel out; the same value twice does not", () => {
    expect(
      evaluate(
        frameOptions,
        webWithPage([
          ["x-frame-options", "DENY"],
          ["x-frame-options", "SAMEORIGIN"],
        ]),
      ).result,
    ).toBe("xfo-invalid");
    expect(
      evaluate(
        frameOptions,
        webWithPage([
          ["x-frame-options", "DENY"],
          ["x-frame-options", "deny"],
        ]),
      ).result,
    ).toBe("xfo-ok");
  });
});

describe("headers:content-type-options", () => {
  test("pass for nosniff", () => {
    const f = evaluate(contentTypeOptions, webWithPage([["x-content-type-options", "nosniff"]]));
    expect([f.status, f.evidence]).toEqual(["pass", "x-content-type-options: nosniff"]);
  });
  test("fail when missing or wrong", () => {
    expect(evaluate(contentTypeOptions, webWithPage([])).result).toBe("nosniff-missing");
    expect(evaluate(contentTypeOptions, webWithPage([["x-content-type-options", "sniff"]])).result).toBe("nosniff-invalid");
  });
});

describe("headers:referrer-policy", () => {
  test("pass for a private policy; the last known token wins", () => {
    expect(evaluate(referrerPolicy, webWithPage([["referrer-policy", "no-referrer"]])).result).toBe("referrer-private");
    expect(evaluate(referrerPolicy, webWithPage([["referrer-policy", "unsafe-url, strict-origin-when-cross-origin"]])).result).toBe(
      "referrer-private",
    );
  });
  test("fail for unsafe-url", () => {
    const f = evaluate(referrerPolicy, webWithPage([["referrer-policy", "unsafe-url"]]));
    expect([f.status, f.result]).toEqual(["fail", "referrer-unsafe"]);
  });
  test("info when missing", () => {
    expect(evaluate(referrerPolicy, webWithPage([])).status).toBe("info");
  });
});

describe("headers:referrer-policy, <meta>", () => {
  test("<meta name=referrer> sets the policy and is applied after the header", () => {
    const body = `<html><head><meta name="referrer" content="no-referrer"></head></html>`;
    expect(evaluate(referrerPolicy, webWithPage([["content-type", "text/html"]], { body })).result).toBe("referrer-private");
    expect(
      evaluate(
        referrerPolicy,
        webWithPage(
          [
            ["content-type", "text/html"],
            ["referrer-policy", "no-referrer"],
          ],
          { body: body.replace("no-referrer", "unsafe-url") },
        ),
      ).result,
    ).toBe("referrer-unsafe");
  });
  test("origin-only policies warn: the origin reaches plain-HTTP sites too", () => {
    expect(evaluate(referrerPolicy, webWithPage([["referrer-policy", "origin"]])).result).toBe("referrer-ok");
    expect(evaluate(referrerPolicy, webWithPage([["referrer-policy", "origin"]])).status).toBe("warn");
  });
});

describe("headers:corp", () => {
  test("pass for same-origin", () => {
    expect(evaluate(corp, webWithPage([["cross-origin-resource-policy", "same-origin"]])).status).toBe("pass");
  });
  test("warn for an unknown value, info when missing", () => {
    expect(evaluate(corp, webWithPage([["cross-origin-resource-policy", "everyone"]])).result).toBe("corp-invalid");
    expect(evaluate(corp, webWithPage([])).result).toBe("corp-missing");
  });
});

describe("headers:server-banner", () => {
  test("pass for a product name without version", () => {
    expect(evaluate(serverBanner, webWithPage([["server", "nginx"]])).result).toBe("banner-ok");
  });
  test("warn for versions", () => {
    const f = evaluate(
      serverBanner,
      webWithPage([
        ["server", "Apache/2.2.3 (CentOS)"],
        ["x-powered-by", "PHP/5.2.17"],
      ]),
    );
    expect([f.status, f.result]).toEqual(["warn", "banner-version"]);
    expect(f.evidence).toBe("server: Apache/2.2.3 (CentOS)\nx-powered-by: PHP/5.2.17");
  });
});

describe("headers:cors", () => {
  const probe = (...headers: [string, string][]) => webWith({ cors: response(`https://${DOMAIN}/`, headers) });
  test("pass when no origin is granted", () => {
    expect(evaluate(cors, probe()).result).toBe("cors-none");
  });
  test("info for empty evidence", () => {
    expect(evaluate(cors, webWith({})).result).toBe("cors-not-probed");
  });
  test("fail for a reflected origin with credentials", () => {
    const f = evaluate(cors, probe(["access-control-allow-origin", CORS_PROBE_ORIGIN], ["access-control-allow-credentials", "true"]));
    expect([f.status, f.result]).toEqual(["fail", "cors-reflected-credentials"]);
  });
  test("fail for * with credentials; info for * alone", () => {
    expect(evaluate(cors, probe(["access-control-allow-origin", "*"], ["access-control-allow-credentials", "true"])).result).toBe(
      "cors-wildcard-credentials",
    );
    expect(evaluate(cors, probe(["access-control-allow-origin", "*"])).result).toBe("cors-public");
  });
});
