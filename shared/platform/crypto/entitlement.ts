import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { deriveKey } from "./seal.js";

/**
 * The service's offline tokens: `entitlement` (7 days, "this key may be used on this
 * domain") and `lifeline` (its companion bound to one installation). Both are JWTs
 * signed with Ed25519 (JWS alg EdDSA, RFC 8037), so a client verifies them with only
 * the public key published at /api/v1/keys.json and any JWT library (docs/entitlement.md).
 *
 * The key pair is derived from the master secret with HKDF (purpose
 * "entitlement:ed25519:v1"): every process of a deployment signs with the same key
 * without storing it, and the key changes only with the master secret.
 */

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export const ENTITLEMENT_TTL_S = 7 * 24 * 3600;

export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  use: "sig";
  alg: "EdDSA";
}

export interface SigningKey {
  readonly kid: string;
  readonly jwk: PublicJwk;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export function deriveSigningKey(master: Buffer): SigningKey {
  const seed = deriveKey(master, "entitlement:ed25519:v1");
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
  const publicKey = createPublicKey(privateKey);
  const { x } = publicKey.export({ format: "jwk" }) as { x: string };
  const kid = createHash("sha256").update(Buffer.from(x, "base64url")).digest("base64url").slice(0, 16);
  return { kid, privateKey, publicKey, jwk: { kty: "OKP", crv: "Ed25519", x, kid, use: "sig", alg: "EdDSA" } };
}

/** Claims of an entitlement: who may do what where, until when. Times are Unix seconds. */
export interface EntitlementClaims {
  typ: "entitlement";
  iss: string;
  /** Key id and organization id. */
  key: number;
  org: number;
  /** The domain the verify answer was for ("" for a server key without one). */
  dom: string;
  /** The key's scopes as in the public key object: a comma list or `full_access`. */
  scp: string;
  env: string;
  trial: boolean;
  iat: number;
  exp: number;
  jti: string;
}

/** Claims of a lifeline: ties one entitlement (`ent` = its jti) to one installation. */
export interface LifelineClaims {
  typ: "lifeline";
  iss: string;
  key: number;
  dom: string;
  /** SHA-256 hex of the installation id; "" when the call named none. */
  ins: string;
  ent: string;
  iat: number;
  exp: number;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function signToken(key: SigningKey, claims: object): string {
  const input = `${b64({ alg: "EdDSA", typ: "JWT", kid: key.kid })}.${b64(claims)}`;
  return `${input}.${sign(null, Buffer.from(input), key.privateKey).toString("base64url")}`;
}

export function installHash(install: string | undefined): string {
  return install ? createHash("sha256").update(install).digest("hex") : "";
}

export interface IssueInput {
  iss: string;
  keyId: number;
  orgId: number;
  domain: string;
  scopes: string;
  environment: string;
  trial: boolean;
  install: string | undefined;
  nowS: number;
}

export interface Issued {
  entitlement: string;
  lifeline: string;
  expires: number;
}

export function issueEntitlement(key: SigningKey, input: IssueInput): Issued {
  const exp = input.nowS + ENTITLEMENT_TTL_S;
  // Deterministic id (time and randomness are inputs): unique per key, domain and second.
  const jti = createHash("sha256")
    .update(`${input.keyId}|${input.domain}|${input.install ?? ""}|${input.nowS}`)
    .digest("base64url")
    .slice(0, 22);
  const entitlement: EntitlementClaims = {
    typ: "entitlement",
    iss: input.iss,
    key: input.keyId,
    org: input.orgId,
    dom: input.domain,
    scp: input.scopes,
    env: input.environment,
    trial: input.trial,
    iat: input.nowS,
    exp,
    jti,
  };
  const lifeline: LifelineClaims = {
    typ: "lifeline",
    iss: input.iss,
    key: input.keyId,
    dom: input.domain,
    ins: installHash(input.install),
    ent: jti,
    iat: input.nowS,
    exp,
  };
  return { entitlement: signToken(key, entitlement), lifeline: signToken(key, lifeline), expires: exp };
}

/**
 * The offline check a client makes (docs/entitlement.md), given only the published JWK:
 * signature, algorithm, and expiry. Returns the claims, or null when the token fails.
 */
export function verifyToken<T extends { exp: number }>(
  token: string,
  jwk: Omit<PublicJwk, "kid" | "use" | "alg"> & object,
  nowS: number,
): T | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], "base64url").toString("utf8")) as { alg?: string };
    if (header.alg !== "EdDSA") return null;
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" });
    if (!verify(null, Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], "base64url"))) return null;
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as T;
    return typeof claims.exp === "number" && claims.exp > nowS ? claims : null;
  } catch {
    return null;
  }
}
