import { decodeUtf8, fromBase64Url, subtle, utf8 } from "./encoding.js";

/**
 * Offline check of `entitlement` and `lifeline` (docs/entitlement.md): Ed25519 JWTs whose
 * public keys are published at `{base_url}/keys.json`, picked by the header's `kid`.
 */

export interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid?: string;
}

/** keys.json as cached by the client: the keys, when they were fetched, until when they are fresh. */
export interface KeySet {
  keys: Jwk[];
  fetchedAt: number;
  freshUntil: number;
}

export interface EntitlementClaims {
  typ: "entitlement";
  iss: string;
  key: number;
  org: number;
  dom: string;
  scp: string;
  env: string;
  trial: boolean;
  iat: number;
  exp: number;
  jti: string;
}

export interface LifelineClaims {
  typ: "lifeline";
  iss: string;
  key: number;
  dom: string;
  ins: string;
  ent: string;
  iat: number;
  exp: number;
}

export interface Decoded {
  kid: string | undefined;
  claims: Record<string, unknown>;
  signed: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
}

function json(part: string): Record<string, unknown> | null {
  const bytes = fromBase64Url(part);
  if (bytes === null) return null;
  try {
    const value: unknown = JSON.parse(decodeUtf8(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Splits a JWS compact token; null unless it is three parts with an EdDSA header. */
export function decode(token: unknown): Decoded | null {
  if (typeof token !== "string") return null;
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const header = json(parts[0]);
  const claims = json(parts[1]);
  const signature = fromBase64Url(parts[2]);
  if (!header || !claims || !signature || header.alg !== "EdDSA") return null;
  return { kid: typeof header.kid === "string" ? header.kid : undefined, claims, signed: utf8(`${parts[0]}.${parts[1]}`), signature };
}

export function hasKid(keys: KeySet | null, kid: string | undefined): boolean {
  return keys?.keys.some((k) => kid === undefined || k.kid === kid) ?? false;
}

/** The Ed25519 signature against the key named by `kid` (any key when the token names none). */
export async function signatureValid(decoded: Decoded, keys: KeySet): Promise<boolean> {
  const candidates = keys.keys.filter(
    (k) => k.kty === "OKP" && k.crv === "Ed25519" && (decoded.kid === undefined || k.kid === decoded.kid),
  );
  for (const jwk of candidates) {
    try {
      const key = await subtle().importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
      if (await subtle().verify({ name: "Ed25519" }, key, decoded.signature, decoded.signed)) return true;
    } catch {
      /* a key this runtime cannot import is no match */
    }
  }
  return false;
}

export interface Expected {
  iss: string;
  keyId: number;
  /** The host the entitlement must name. */
  dom: string;
  /** SHA-256 hex of the installation id, "" when none. */
  ins: string;
  nowS: number;
}

function isEntitlement(c: Record<string, unknown>): c is Record<string, unknown> & EntitlementClaims {
  return c.typ === "entitlement" && typeof c.exp === "number" && typeof c.jti === "string" && typeof c.key === "number";
}

function isLifeline(c: Record<string, unknown>): c is Record<string, unknown> & LifelineClaims {
  return c.typ === "lifeline" && typeof c.exp === "number" && typeof c.ent === "string" && typeof c.ins === "string";
}

/**
 * Steps 1 to 4 of docs/entitlement.md "Checking offline": both signatures, `typ`, `exp`,
 * `iss`, `key`, `dom`, and the lifeline naming this entitlement and this installation.
 * Returns the entitlement's claims, or the first thing that failed.
 */
export async function checkPair(
  entitlement: unknown,
  lifeline: unknown,
  keys: KeySet,
  expected: Expected,
): Promise<{ ok: true; claims: EntitlementClaims } | { ok: false; why: string }> {
  const ent = decode(entitlement);
  const life = decode(lifeline);
  if (!ent || !life) return { ok: false, why: "malformed token" };
  if (!(await signatureValid(ent, keys)) || !(await signatureValid(life, keys))) return { ok: false, why: "bad signature or unknown kid" };
  const e = ent.claims;
  const l = life.claims;
  if (!isEntitlement(e) || !isLifeline(l)) return { ok: false, why: "wrong token type" };
  if (e.exp <= expected.nowS || l.exp <= expected.nowS) return { ok: false, why: "expired" };
  if (e.iss !== expected.iss || l.iss !== expected.iss) return { ok: false, why: "another issuer" };
  if (e.key !== expected.keyId || l.key !== expected.keyId) return { ok: false, why: "another key" };
  if (e.dom !== expected.dom || l.dom !== expected.dom) return { ok: false, why: "another domain" };
  if (l.ent !== e.jti || l.ins !== expected.ins) return { ok: false, why: "lifeline of another entitlement or installation" };
  return { ok: true, claims: e };
}
