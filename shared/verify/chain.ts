import type { Reason } from "../platform/reasons.js";
import { checkCountries } from "./country.js";
import { checkDomainLock, checkDomainVerified, hostOf } from "./domain.js";
import { checkExpiry } from "./expiry.js";
import { callerAddress, checkIpAllow, checkIpDeny, checkIpParam, type Address } from "./ip.js";
import type { Prepared } from "./prepared.js";
import { checkScope } from "./scope.js";
import { checkSuspension } from "./suspension.js";
import { PASS, type Ask, type CountryOf, type Verdict } from "./types.js";

/**
 * The pure part of the enforcement chain, in the order it is applied (docs/verify.md).
 * Before it: missing_key, then invalid_key (the snapshot lookup). After it, in the
 * counting script: rate, allowance, installation (counting.ts). The first refusal wins.
 */
export interface RuleInput {
  prepared: Prepared;
  ask: Ask;
  address: Address | null;
  countryOf: CountryOf;
}

/** The domain's verdict against the lock, remembered with its host for the last domain seen of this snapshot version. */
function domainLock(prepared: Prepared, domain: string | undefined): Verdict {
  const memo = prepared.lockMemo;
  if (memo.verdict !== null && memo.input === domain) return memo.verdict;
  const host = domain === undefined ? null : hostOf(domain);
  const verdict = checkDomainLock(prepared.lock, domain, host);
  memo.input = domain;
  memo.host = host ?? "";
  memo.verdict = verdict;
  return verdict;
}

/**
 * The host of the call's `domain` ("" for none), as the domain lock judged it: what a signed
 * entitlement names, and so what its cache is keyed by (any path or query after the host
 * would make every call a new entry).
 */
export function requestHost(prepared: Prepared, domain: string | undefined): string {
  domainLock(prepared, domain);
  return prepared.lockMemo.host;
}

export interface Rule {
  readonly name: string;
  readonly reasons: readonly Reason[];
  readonly check: (input: RuleInput) => Verdict;
}

export const RULES: readonly Rule[] = [
  { name: "suspension", reasons: ["key_suspended"], check: ({ prepared }) => checkSuspension(prepared.key) },
  { name: "ip_param", reasons: ["bad_ip"], check: ({ ask }) => checkIpParam(ask.visitorIp) },
  { name: "expiry", reasons: ["expired"], check: ({ prepared, ask }) => checkExpiry(prepared.key, prepared.org, ask.now) },
  { name: "ip_deny", reasons: ["ip_blocked"], check: ({ prepared, address }) => checkIpDeny(prepared.deny, address) },
  { name: "ip_allow", reasons: ["ip_not_allowed"], check: ({ prepared, address }) => checkIpAllow(prepared.allow, address) },
  {
    name: "countries",
    reasons: ["geo_blocked", "geo_not_allowed"],
    check: ({ prepared, address, countryOf }) => checkCountries(prepared.key, address === null ? null : address.toString(), countryOf),
  },
  { name: "scope", reasons: ["insufficient_scope"], check: ({ prepared, ask }) => checkScope(prepared.key, ask.scope) },
  { name: "domain_lock", reasons: ["domain_mismatch"], check: ({ prepared, ask }) => domainLock(prepared, ask.domain) },
  { name: "domain_verification", reasons: ["domain_not_verified"], check: ({ prepared }) => checkDomainVerified(prepared.lockVerified) },
];

/** Runs the pure rules in order; the first refusal is the verdict. */
export function evaluate(prepared: Prepared, ask: Ask, countryOf: CountryOf): Verdict {
  const address = prepared.needsAddress ? callerAddress(prepared.key, ask) : null;
  const input: RuleInput = { prepared, ask, address, countryOf };
  for (const rule of RULES) {
    const verdict = rule.check(input);
    if (!verdict.ok) return verdict;
  }
  return PASS;
}
