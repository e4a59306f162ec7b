import { issueEntitlement, type IssueInput, type Issued, type SigningKey } from "../platform/crypto/entitlement.js";

/** Signing is not per call: a signed pair is reused this long (entitlement_expires stays within it of ts + 7 days). */
export const ENTITLEMENT_REUSE_S = 60;

const MAX_CACHED_ENTITLEMENTS = 50_000;

/** A signed pair, with its answer fields already serialized. */
export interface SignedTokens extends Issued {
  at: number;
  json: string;
}

/** Signed tokens per (versions, install, host of the domain), reused for ENTITLEMENT_REUSE_S. */
export type EntitlementCache = (cacheKey: string, nowS: number, input: () => IssueInput) => SignedTokens;

export function createEntitlementCache(signingKey: SigningKey): EntitlementCache {
  const signed = new Map<string, SignedTokens>();
  return (cacheKey, nowS, input) => {
    const hit = signed.get(cacheKey);
    if (hit && nowS - hit.at < ENTITLEMENT_REUSE_S && nowS >= hit.at) return hit;
    if (signed.size >= MAX_CACHED_ENTITLEMENTS) signed.clear();
    const tokens = issueEntitlement(signingKey, { ...input(), nowS });
    const json = `"entitlement":${JSON.stringify(tokens.entitlement)},"entitlement_expires":${tokens.expires},"lifeline":${JSON.stringify(tokens.lifeline)}`;
    const issued = { ...tokens, at: nowS, json };
    signed.set(cacheKey, issued);
    return issued;
  };
}
