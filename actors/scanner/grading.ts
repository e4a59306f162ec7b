/**
 * Scoring as data, after Mozilla HTTP Observatory's scorecard: each section starts at
 * 100, every check result adds its modifier, bonuses (positive modifiers) count only when
 * the score without them is at least 90, and the total is clamped to 0..135. The grade
 * is read off the score table. Same findings in, same section out: nothing here reads a
 * clock or a random source.
 *
 * Changing a modifier, a threshold or a check's logic changes what a grade means:
 * bump ALGORITHM_VERSION, which is stored with every scan.
 */
import type { ResultName } from "./checks/index.js";
import type { Finding, Section } from "./finding.js";

export const ALGORITHM_VERSION = "scan-2026.11.3";

/**
 * Groups the Observatory scores as ONE test: its cookie test reports the single worst
 * problem, so our four cookie findings must not add up four penalties for one cookie.
 * In such a group only the most negative modifier counts; bonuses only when none is negative.
 */
export const SINGLE_TEST_GROUPS: ReadonlySet<string> = new Set(["cookies"]);

export const START_SCORE = 100;
export const MAX_SCORE = 135;
export const BONUS_THRESHOLD = 90;

export const MODIFIERS = {
  // dns
  "address-dual-stack": 0,
  "address-ipv4-only": 0,
  "address-ipv6-only": 0,
  "address-none": 0,
  "address-lookup-failed": 0,
  "ns-ok": 0,
  "ns-single": -5,
  "ns-missing": -10,
  "ns-lookup-failed": -5,
  "caa-ok": 0,
  "caa-no-issue": -5,
  "caa-missing": -5,
  "caa-invalid": -10,
  "caa-lookup-failed": -5,
  "dnssec-validated": 5,
  "dnssec-signed-unconfirmed": 0,
  "dnssec-unsigned": -10,
  "dnssec-bogus": -30,
  "dnssec-lookup-failed": -5,
  "dangling-none": 0,
  "dangling-found": -30,
  // mail
  "mx-ok": 0,
  "mx-null": 0,
  "mx-missing": -10,
  "mx-cname": -10,
  "mx-unresolvable": -15,
  "mx-not-public": -15,
  "mx-invalid": -15,
  "mx-lookup-failed": -5,
  "spf-hardfail": 0,
  "spf-softfail": 0,
  "spf-ptr": -5,
  "spf-neutral": -10,
  "spf-pass-all": -40,
  "spf-syntax": -25,
  "spf-multiple": -25,
  "spf-missing": -25,
  "spf-lookup-failed": -5,
  "spf-lookups-ok": 0,
  "spf-lookups-exceeded": -20,
  "spf-void-exceeded": -10,
  "spf-include-broken": -15,
  "spf-lookups-not-applicable": 0,
  "dmarc-reject": 5,
  "dmarc-quarantine": 0,
  "dmarc-no-rua": -5,
  "dmarc-partial": -5,
  "dmarc-none": -10,
  "dmarc-syntax": -25,
  "dmarc-multiple": -25,
  "dmarc-missing": -25,
  "dmarc-lookup-failed": -5,
  "dkim-found": 0,
  "dkim-revoked": -5,
  "dkim-invalid": -10,
  "dkim-not-found": -5,
  "dkim-not-applicable": 0,
  "dkim-lookup-failed": -5,
  "mta-sts-enforce": 5,
  "mta-sts-testing": -5,
  "mta-sts-mode-none": -5,
  "mta-sts-mx-mismatch": -15,
  "mta-sts-policy-invalid": -15,
  "mta-sts-policy-unavailable": -15,
  "mta-sts-missing": -5,
  "mta-sts-not-applicable": 0,
  "mta-sts-lookup-failed": -5,
  "tls-rpt-ok": 0,
  "tls-rpt-invalid": -5,
  "tls-rpt-missing": -5,
  "tls-rpt-not-applicable": 0,
  "tls-rpt-lookup-failed": -5,
  // tls
  "redirect-ok": 0,
  "redirect-off-host": -5,
  "redirect-not-initial": -10,
  "redirect-not-to-https": -20,
  "redirect-missing": -20,
  "redirect-invalid": -20,
  "redirect-no-http": 0,
  "cert-valid": 0,
  "cert-expiring": -10,
  "cert-expired": -40,
  "cert-not-yet-valid": -40,
  "cert-name-mismatch": -40,
  "cert-untrusted": -40,
  "cert-no-https": -40,
  "tls-modern": 0,
  "tls-legacy-enabled": -10,
  "tls-obsolete": -30,
  "tls-not-applicable": 0,
  "hsts-preload-ready": 0,
  "hsts-ok": 0,
  "hsts-short": -10,
  "hsts-invalid": -20,
  "hsts-missing": -20,
  "hsts-no-https": -20,
  // headers
  "csp-strict": 10,
  "csp-ok": 5,
  "csp-unsafe-style": 0,
  "csp-insecure-passive": -10,
  "csp-object-src-open": -20,
  "csp-insecure-scheme": -20,
  "csp-unsafe-eval": -10,
  "csp-insecure-source": -20,
  "csp-unsafe-inline": -20,
  "csp-no-script-policy": -20,
  "csp-report-only": -25,
  "csp-invalid": -25,
  "csp-missing": -25,
  "csp-no-response": 0,
  "frame-ancestors": 5,
  "xfo-ok": 0,
  "frame-ancestors-open": -20,
  "xfo-invalid": -20,
  "frame-missing": -20,
  "frame-no-response": 0,
  "nosniff-ok": 0,
  "nosniff-invalid": -5,
  "nosniff-missing": -5,
  "nosniff-no-response": 0,
  "referrer-private": 5,
  "referrer-ok": -5,
  "referrer-unsafe": -5,
  "referrer-invalid": -5,
  "referrer-missing": 0,
  "referrer-no-response": 0,
  "corp-ok": 10,
  "corp-cross-origin": 0,
  "corp-invalid": -5,
  "corp-missing": 0,
  "corp-no-response": 0,
  "banner-ok": 0,
  "banner-version": -5,
  "banner-no-response": 0,
  "cors-none": 0,
  "cors-public": 0,
  "cors-reflected": -10,
  "cors-wildcard-credentials": -20,
  "cors-reflected-credentials": -50,
  "cors-not-probed": 0,
  // cookies
  "cookies-secure": 0,
  "cookies-insecure-hsts": -5,
  "cookies-insecure": -20,
  "cookies-session-insecure-hsts": -10,
  "cookies-session-insecure": -40,
  "cookies-none": 0,
  "httponly-ok": 0,
  "httponly-missing": -30,
  "httponly-not-applicable": 0,
  "samesite-ok": 5,
  "samesite-cross-site": 0,
  "samesite-missing": 0,
  "samesite-csrf-missing": -20,
  "samesite-none-insecure": -20,
  "samesite-invalid": -20,
  "samesite-not-applicable": 0,
  "prefix-ok": 0,
  "prefix-violation": -20,
  "prefix-unused": 0,
  // content
  "sri-ok": 5,
  "sri-same-origin": 0,
  "sri-missing": -5,
  "sri-insecure-scripts": -50,
  "sri-not-html": 0,
  "sri-no-response": 0,
} as const satisfies Record<ResultName, number>;

/** Lowest score of each grade, best first; the first threshold the score reaches wins. */
export const GRADES: readonly (readonly [number, string])[] = [
  [100, "A+"],
  [90, "A"],
  [85, "A-"],
  [80, "B+"],
  [70, "B"],
  [65, "B-"],
  [60, "C+"],
  [50, "C"],
  [45, "C-"],
  [40, "D+"],
  [30, "D"],
  [25, "D-"],
  [0, "F"],
];

const modifiers: Readonly<Record<string, number>> = MODIFIERS;

export function modifierOf(result: string): number {
  const modifier = modifiers[result];
  // A result without a modifier is a bug in a check or this table, never a scan condition.
  if (modifier === undefined) throw new Error(`no score modifier for result ${JSON.stringify(result)}`);
  return modifier;
}

export function gradeFor(score: number): string {
  return GRADES.find(([min]) => score >= min)?.[1] ?? "F";
}

export function scoreFindings(findings: readonly Finding[]): number {
  let penalties = 0;
  let bonuses = 0;
  const grouped = new Map<string, number[]>();
  for (const finding of findings) {
    const modifier = modifierOf(finding.result);
    if (SINGLE_TEST_GROUPS.has(finding.group)) grouped.set(finding.group, [...(grouped.get(finding.group) ?? []), modifier]);
    else if (modifier < 0) penalties += modifier;
    else bonuses += modifier;
  }
  for (const modifiers of grouped.values()) {
    const worst = Math.min(...modifiers);
    if (worst < 0) penalties += worst;
    else bonuses += modifiers.reduce((sum, m) => sum + m, 0);
  }
  const base = START_SCORE + penalties;
  // Observatory's rule: extra credit cannot lift a site with real problems.
  const score = base >= BONUS_THRESHOLD ? base + bonuses : base;
  return Math.min(MAX_SCORE, Math.max(0, score));
}

export function gradeSection(findings: readonly Finding[]): Section {
  const score = scoreFindings(findings);
  return {
    grade: gradeFor(score),
    score,
    fail_count: findings.filter((f) => f.status === "fail").length,
    warn_count: findings.filter((f) => f.status === "warn").length,
    findings,
  };
}
