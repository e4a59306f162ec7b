import { getDomain, parse } from "tldts";
import { PASS, refuse, type Verdict } from "./types.js";

/**
 * Domain lock and domain verification, with tldts doing the host-name work.
 *
 * Lock comparison: case- and trailing-dot-insensitive; a URL or `host:port` sent as
 * `domain` is reduced to its host. The call matches when its host equals the lock or
 * is a subdomain of it (lock `example.com` admits `www.example.com` and
 * `a.b.example.com`, never `example.com.evil.net` or `notexample.com`); a lock on a
 * subdomain does not admit its parent. A locked key called without a domain is
 * refused; a key without a lock (server keys may have none) skips the rule.
 *
 * Verification: the organization must have proved ownership of the lock or of one of
 * its parents down to the registrable domain (verifying `example.com` covers a lock on
 * `shop.example.com`; a public suffix never counts).
 */

const OPTIONS = { allowPrivateDomains: true } as const;

/** A `domain` value → lower-case host without trailing dots; null when there is no host. */
export function hostOf(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  const host = parse(trimmed, OPTIONS).hostname;
  if (!host) return null;
  const clean = host.toLowerCase().replace(/\.+$/, "");
  return clean === "" ? null : clean;
}

export function hostMatchesLock(host: string, lock: string): boolean {
  return host === lock || (host.length > lock.length && host.endsWith(lock) && host[host.length - lock.length - 1] === ".");
}

/**
 * `lock` is the key's lock already passed through hostOf (prepared.ts), or null; `host` is
 * hostOf(requested), passed when the caller has it already.
 */
export function checkDomainLock(
  lock: string | null,
  requested: string | undefined,
  host = requested === undefined ? null : hostOf(requested),
): Verdict {
  if (lock === null) return PASS;
  if (requested === undefined) return refuse("domain_mismatch");
  return host !== null && hostMatchesLock(host, lock) ? PASS : refuse("domain_mismatch");
}

/** The lock and its parents down to the registrable domain, most specific first. */
export function verificationCandidates(lock: string): string[] {
  const registrable = getDomain(lock, OPTIONS);
  const out = [lock];
  if (!registrable || registrable === lock || !lock.endsWith(`.${registrable}`)) return out;
  let current = lock;
  while (current !== registrable) {
    current = current.slice(current.indexOf(".") + 1);
    out.push(current);
  }
  return out;
}

export function isLockVerified(lock: string | null, verifiedDomains: readonly string[]): boolean {
  if (lock === null) return true;
  const verified = new Set(verifiedDomains.map((d) => hostOf(d) ?? d));
  return verificationCandidates(lock).some((candidate) => verified.has(candidate));
}

export function checkDomainVerified(lockVerified: boolean): Verdict {
  return lockVerified ? PASS : refuse("domain_not_verified");
}
