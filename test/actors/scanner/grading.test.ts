import { describe, expect, test } from "vitest";
import type { Finding } from "../../../actors/scanner/finding.js";
import { ALGORITHM_VERSION, GRADES, gradeFor, gradeSection, MAX_SCORE, scoreFindings } from "../../../actors/scanner/grading.js";
import { evaluateDns, evaluateWeb } from "../../../actors/scanner/scan.js";
import { DOMAIN, dnsWith, txt, webWithPage } from "./builders.js";

function finding(result: string, status: Finding["status"] = "pass"): Finding {
  return { id: "x:y", group: "x", label: "y", status, summary: "", detail: "", evidence: "", result };
}

describe("grading", () => {
  test("the algorithm version is a non-empty string", () => {
    expect(ALGORITHM_VERSION).toMatch(/\S/);
  });

  test("same evidence, same section, every time and in any finding order", () => {
    const web = webWithPage([
      ["strict-transport-security", "max-age=300"],
      ["set-cookie", "sid=1"],
    ]);
    const first = evaluateWeb(web);
    expect(evaluateWeb(web)).toEqual(first);
    expect(gradeSection([...first.findings].reverse()).score).toBe(first.score);
    const dns = dnsWith({ txt: txt(DOMAIN, "v=spf1 -all") });
    expect(evaluateDns(dns)).toEqual(evaluateDns(dns));
  });

  test("starts at 100 and adds penalties", () => {
    expect(scoreFindings([])).toBe(100);
    expect(scoreFindings([finding("hsts-missing", "fail"), finding("nosniff-missing", "fail")])).toBe(75);
  });

  test("bonuses count only from 90 up, and the score stays within 0..135", () => {
    expect(scoreFindings([finding("csp-strict"), finding("hsts-short", "warn")])).toBe(100);
    expect(scoreFindings([finding("csp-strict"), finding("hsts-missing", "fail")])).toBe(80);
    const bonuses = [
      "csp-strict",
      "hsts-preload-ready",
      "frame-ancestors",
      "referrer-private",
      "samesite-ok",
      "sri-ok",
      "dmarc-reject",
      "mta-sts-enforce",
      "dnssec-validated",
    ];
    expect(scoreFindings(bonuses.map((r) => finding(r)))).toBe(MAX_SCORE);
    expect(scoreFindings(Array.from({ length: 5 }, () => finding("cors-reflected-credentials", "fail")))).toBe(0);
  });

  test("the cookie findings count as one test: only the worst penalty, bonuses only without one", () => {
    const cookie = (result: string, status: Finding["status"] = "pass"): Finding => ({
      ...finding(result, status),
      id: "cookies:x",
      group: "cookies",
    });
    expect(
      scoreFindings([cookie("cookies-session-insecure", "fail"), cookie("httponly-missing", "fail"), cookie("samesite-missing", "warn")]),
    ).toBe(60);
    expect(scoreFindings([cookie("cookies-secure"), cookie("httponly-ok"), cookie("samesite-ok"), cookie("prefix-ok")])).toBe(105);
    expect(scoreFindings([cookie("cookies-insecure-hsts", "warn"), cookie("samesite-ok")])).toBe(95);
    // Outside the group penalties still add up.
    expect(scoreFindings([finding("hsts-missing", "fail"), finding("nosniff-missing", "fail"), cookie("httponly-missing", "fail")])).toBe(
      45,
    );
  });

  test("grade table boundaries", () => {
    expect(gradeFor(135)).toBe("A+");
    expect(gradeFor(100)).toBe("A+");
    expect(gradeFor(99)).toBe("A");
    expect(gradeFor(85)).toBe("A-");
    expect(gradeFor(84)).toBe("B+");
    expect(gradeFor(25)).toBe("D-");
    expect(gradeFor(24)).toBe("F");
    expect(gradeFor(0)).toBe("F");
    expect(GRADES.map(([, g]) => g)).toEqual(["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F"]);
  });

  test("counts fails and warnings", () => {
    const section = gradeSection([
      finding("hsts-missing", "fail"),
      finding("hsts-short", "warn"),
      finding("csp-ok"),
      finding("corp-missing", "info"),
    ]);
    expect([section.fail_count, section.warn_count]).toEqual([1, 1]);
  });

  test("a result without a modifier is a bug and throws", () => {
    expect(() => scoreFindings([finding("no-such-result")])).toThrow(/no score modifier/);
  });
});
