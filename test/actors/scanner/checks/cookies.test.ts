import { describe, expect, test } from "vitest";
import { cookieHttpOnly } from "../../../../actors/scanner/checks/cookie-httponly.js";
import { cookiePrefix } from "../../../../actors/scanner/checks/cookie-prefix.js";
import { cookieSameSite } from "../../../../actors/scanner/checks/cookie-samesite.js";
import { cookieSecure } from "../../../../actors/scanner/checks/cookie-secure.js";
import { sri } from "../../../../actors/scanner/checks/sri.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { webWith, webWithPage } from "../builders.js";

const withCookies = (...lines: string[]) => webWithPage(lines.map((line) => ["set-cookie", line] as const));

describe("cookies:secure", () => {
  test("pass when every cookie is Secure", () => {
    const f = evaluate(cookieSecure, withCookies("sid=1; Secure; HttpOnly", "theme=dark; Secure"));
    expect([f.status, f.result]).toEqual(["pass", "cookies-secure"]);
  });
  test("info for empty evidence", () => {
    expect(evaluate(cookieSecure, webWith({})).result).toBe("cookies-none");
  });
  test("fail for a session cookie without Secure", () => {
    const f = evaluate(cookieSecure, withCookies("sessionid=abc; Path=/"));
    expect([f.status, f.result]).toEqual(["fail", "cookies-session-insecure"]);
    expect(f.evidence).toBe("set-cookie: sessionid=abc; Path=/");
  });
  test("warn for another cookie without Secure", () => {
    expect(evaluate(cookieSecure, withCookies("theme=dark")).result).toBe("cookies-insecure");
  });
});

describe("cookies:secure with HSTS", () => {
  const HSTS = ["strict-transport-security", "max-age=31536000"] as const;
  test("HSTS of six months or more softens a missing Secure", () => {
    expect(evaluate(cookieSecure, webWithPage([HSTS, ["set-cookie", "theme=dark"]])).result).toBe("cookies-insecure-hsts");
    expect(evaluate(cookieSecure, webWithPage([HSTS, ["set-cookie", "sessionid=1; HttpOnly"]])).result).toBe(
      "cookies-session-insecure-hsts",
    );
  });
  test("a short HSTS does not", () => {
    expect(
      evaluate(
        cookieSecure,
        webWithPage([
          ["strict-transport-security", "max-age=300"],
          ["set-cookie", "sessionid=1"],
        ]),
      ).result,
    ).toBe("cookies-session-insecure");
  });
});

describe("cookies:samesite for anti-CSRF tokens", () => {
  test("a csrf cookie without SameSite fails; another cookie without it only warns", () => {
    expect(evaluate(cookieSameSite, withCookies("csrftoken=1; Secure")).result).toBe("samesite-csrf-missing");
    expect(evaluate(cookieSameSite, withCookies("theme=1; Secure")).result).toBe("samesite-missing");
  });
});

describe("cookies:httponly", () => {
  test("pass when session cookies are HttpOnly", () => {
    expect(evaluate(cookieHttpOnly, withCookies("auth_token=x; Secure; HttpOnly")).result).toBe("httponly-ok");
  });
  test("fail when a session cookie is readable by script", () => {
    expect(evaluate(cookieHttpOnly, withCookies("PHPSESSID=x; Secure")).status).toBe("fail");
  });
  test("CSRF tokens and non-session cookies are not judged", () => {
    expect(evaluate(cookieHttpOnly, withCookies("XSRF-TOKEN=x; Secure", "theme=dark")).result).toBe("httponly-not-applicable");
  });
});

describe("cookies:samesite", () => {
  test("pass when every cookie is Lax or Strict", () => {
    expect(evaluate(cookieSameSite, withCookies("a=1; Secure; SameSite=Strict", "b=2; SameSite=lax")).result).toBe("samesite-ok");
  });
  test("warn when missing", () => {
    expect(evaluate(cookieSameSite, withCookies("a=1; Secure")).result).toBe("samesite-missing");
  });
  test("fail for None without Secure and for unknown values", () => {
    expect(evaluate(cookieSameSite, withCookies("a=1; SameSite=None")).result).toBe("samesite-none-insecure");
    expect(evaluate(cookieSameSite, withCookies("a=1; Secure; SameSite=Sometimes")).result).toBe("samesite-invalid");
  });
});

describe("cookies:prefix", () => {
  test("pass for a correct __Host- cookie", () => {
    expect(evaluate(cookiePrefix, withCookies("__Host-sid=1; Path=/; Secure; HttpOnly")).result).toBe("prefix-ok");
  });
  test("fail for __Host- with Domain and __Secure- without Secure", () => {
    expect(evaluate(cookiePrefix, withCookies("__Host-sid=1; Path=/; Secure; Domain=example.test")).status).toBe("fail");
    expect(evaluate(cookiePrefix, withCookies("__Secure-id=1")).result).toBe("prefix-violation");
  });
  test("info when no cookie uses a prefix", () => {
    expect(evaluate(cookiePrefix, withCookies("a=1")).result).toBe("prefix-unused");
  });
});

describe("content:sri", () => {
  const html = (body: string) => webWithPage([["content-type", "text/html"]], { body });
  test("pass when cross-origin scripts carry integrity", () => {
    const f = evaluate(sri, html('<script src="https://cdn.test/a.js" integrity="sha384-abc" crossorigin="anonymous"></script>'));
    expect([f.status, f.result]).toEqual(["pass", "sri-ok"]);
  });
  test("pass when every script is same-origin", () => {
    expect(evaluate(sri, html('<script src="/app.js"></script><script>inline()</script>')).result).toBe("sri-same-origin");
  });
  test("warn for a cross-origin script without integrity", () => {
    const f = evaluate(sri, html("<script src='https://cdn.test/a.js'></script><!-- <script src='https://old.test/x.js'></script> -->"));
    expect([f.status, f.result]).toEqual(["warn", "sri-missing"]);
    expect(f.detail).not.toContain("old.test");
  });
  test("fail for a script over plain http on an https page", () => {
    expect(evaluate(sri, html('<script src="http://cdn.test/a.js" integrity="sha384-abc"></script>')).result).toBe("sri-insecure-scripts");
  });
  test("info for non-HTML and for empty evidence", () => {
    expect(evaluate(sri, webWithPage([["content-type", "application/json"]], { body: "{}" })).result).toBe("sri-not-html");
    expect(evaluate(sri, webWith({})).result).toBe("sri-no-response");
  });
});
