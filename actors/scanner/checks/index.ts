/**
 * The check registry, in report order. A check joins a section by being listed here;
 * grading.ts must then give every one of its results a modifier (the compiler enforces it).
 */
import type { Check } from "../finding.js";
import type { DnsEvidence, WebEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { address } from "./address.js";
import { caa } from "./caa.js";
import { certificate } from "./certificate.js";
import { contentTypeOptions } from "./content-type-options.js";
import { cookieHttpOnly } from "./cookie-httponly.js";
import { cookiePrefix } from "./cookie-prefix.js";
import { cookieSameSite } from "./cookie-samesite.js";
import { cookieSecure } from "./cookie-secure.js";
import { corp } from "./corp.js";
import { cors } from "./cors.js";
import { csp } from "./csp.js";
import { danglingCname } from "./dangling-cname.js";
import { dkim } from "./dkim.js";
import { dmarc } from "./dmarc.js";
import { dnssec } from "./dnssec.js";
import { frameOptions } from "./frame-options.js";
import { hsts } from "./hsts.js";
import { httpsRedirect } from "./https-redirect.js";
import { mtaSts } from "./mta-sts.js";
import { mx } from "./mx.js";
import { ns } from "./ns.js";
import { referrerPolicy } from "./referrer-policy.js";
import { serverBanner } from "./server-banner.js";
import { spf } from "./spf.js";
import { spfLookups } from "./spf-lookups.js";
import { sri } from "./sri.js";
import { tlsRpt } from "./tls-rpt.js";
import { tlsVersion } from "./tls-version.js";

export const DNS_CHECKS = [address, ns, caa, dnssec, danglingCname, mx, spf, spfLookups, dmarc, dkim, mtaSts, tlsRpt] as const;

export const WEB_CHECKS = [
  httpsRedirect,
  certificate,
  tlsVersion,
  hsts,
  csp,
  frameOptions,
  contentTypeOptions,
  referrerPolicy,
  corp,
  serverBanner,
  cors,
  cookieSecure,
  cookieHttpOnly,
  cookieSameSite,
  cookiePrefix,
  sri,
] as const;

type ResultOf<C> = C extends Check<infer R, infer _E> ? R : never;
/** Every result name any check can produce. */
export type ResultName = ResultOf<(typeof DNS_CHECKS)[number]> | ResultOf<(typeof WEB_CHECKS)[number]>;

export type DnsCheck = Check<string, DnsEvidence>;
export type WebCheck = Check<string, WebEvidence>;

const dnsChecks: readonly DnsCheck[] = DNS_CHECKS;
const webChecks: readonly WebCheck[] = WEB_CHECKS;

export type CheckLookup = { readonly section: "dns"; readonly check: DnsCheck } | { readonly section: "web"; readonly check: WebCheck };

export function findCheck(id: string): CheckLookup | null {
  const dnsCheck = dnsChecks.find((c) => c.id === id);
  if (dnsCheck) return { section: "dns", check: dnsCheck };
  const webCheck = webChecks.find((c) => c.id === id);
  return webCheck ? { section: "web", check: webCheck } : null;
}

export function allChecks(): readonly (DnsCheck | WebCheck)[] {
  return [...dnsChecks, ...webChecks];
}
