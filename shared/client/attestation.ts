import { sha256Hex } from "./encoding.js";
import { decode, type KeySet, signatureValid } from "./tokens.js";

/**
 * The check of an answer's `attestation` (docs/content.md, docs/secret.md): an Ed25519 JWS
 * signed with the keys.json key over what a content or secret answer says. The contract's
 * HMAC is keyed with the API key, which a client key cannot keep secret, so whoever holds
 * the key can make a "signed" answer; only this signature is out of their reach.
 */

/** Validity of an attestation (interface.md section 8: verify answer freshness). */
export const ATTESTATION_TTL_S = 120;

/**
 * An attestation's `dom`: the host a `domain` parameter names, as the WHATWG URL parser reads
 * it (what browsers and Node share), lower case, without trailing dots; "" when there is none.
 * `example.com`, `https://EXAMPLE.com/a?b` and `example.com.` are all `example.com`. The
 * service signs this (so every path of one host shares one attestation, and varying the path
 * cannot force a signature per call) and the client recomputes it from the answer's `domain`
 * with this same function, so the two cannot disagree.
 */
export function attestedHost(domain: string | undefined): string {
  const text = (domain ?? "").trim();
  if (text === "") return "";
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    return url.hostname.toLowerCase().replace(/\.+$/, "");
  } catch {
    return "";
  }
}

export interface ContentClaims {
  typ: "content";
  iss: string;
  key: number;
  org: number;
  dom: string;
  /** The `content_key` the call sent, or null when it asked for every value. */
  ck: string | null;
  /** SHA-256 hex of the `content` JSON text exactly as in the body. */
  sha: string;
  iat: number;
  exp: number;
}

export interface SecretClaims {
  typ: "secret";
  iss: string;
  key: number;
  org: number;
  dom: string;
  name: string;
  /** SHA-256 hex of the `value` JSON text (quotes included) exactly as in the body. */
  sha: string;
  nonce?: string;
  iat: number;
  exp: number;
}

export type AttestationExpected = {
  /** `{base_url}`, the `iss` the service names itself by. */
  iss: string;
  keyId: number;
  /** attestedHost of the answer's `domain` ("" when none was sent). */
  dom: string;
  /** The JSON text the digest covers (see contentText, valueText). */
  text: string;
  /** Unix seconds. */
  nowS: number;
} & (
  | {
      typ: "content";
      /** The `content_key` sent; omitted, null or "" when the call asked for every value. */
      ck?: string | null;
    }
  | { typ: "secret"; name: string; nonce?: string }
);

export type AttestationCheck<C> = { ok: true; claims: C } | { ok: false; why: string; stale: boolean };

/**
 * Whether two parsed JSON values are the same value: leaves by `Object.is` (1e999, which
 * parses to Infinity, is not null; -0 is not 0), arrays and objects member by member, keys
 * in the same order.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  const others = Object.keys(y);
  return keys.length === others.length && keys.every((key, i) => key === others[i] && sameJson(x[key], y[key]));
}

/**
 * `text`, when the body's own `field` (what `JSON.parse(raw)[field]` gives: the LAST of
 * duplicate keys) is exactly the value `text` holds; null otherwise. The text is cut from
 * the first occurrence, so a body with a second `field` appended would have its checked
 * text differ from what a caller reads from the parsed body.
 */
function parsedAs(raw: string, field: string, text: string): string | null {
  try {
    const body: unknown = JSON.parse(raw);
    if (body === null || typeof body !== "object" || !Object.hasOwn(body, field)) return null;
    return sameJson((body as Record<string, unknown>)[field], JSON.parse(text)) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The `content` JSON text of a raw content answer: from the first `"content":` to the last
 * `,"ts":`. Null when there is none, or when `JSON.parse(raw).content` is not exactly the
 * value of that text (a duplicate `content` field): read the values as `JSON.parse(text)`.
 */
export function contentText(raw: string): string | null {
  const start = raw.indexOf('"content":');
  const end = raw.lastIndexOf(',"ts":');
  return start < 0 || end < start ? null : parsedAs(raw, "content", raw.slice(start + '"content":'.length, end));
}

/**
 * The `value` JSON text of a raw secret answer: from the first `"value":` to the next `,"ts":`
 * (`name` is `[A-Za-z0-9_.:-]`, and a JSON string cannot hold an unescaped `"`). Null when
 * there is none, or when `JSON.parse(raw).value` is not exactly the value of that text (a
 * duplicate `value` field): read the value as `JSON.parse(text)`.
 */
export function valueText(raw: string): string | null {
  const start = raw.indexOf('"value":');
  const end = start < 0 ? -1 : raw.indexOf(',"ts":', start);
  return end < 0 ? null : parsedAs(raw, "value", raw.slice(start + '"value":'.length, end));
}

const fail = <C>(why: string, stale = false): AttestationCheck<C> => ({ ok: false, why, stale });

/**
 * Signature against keys.json (by `kid`), `typ`, `iss`, `key`, `dom`, `sha` of `text`, for
 * content `ck`, for a secret `name` and `nonce`, and freshness: `exp > now` and `iat` at
 * most 120 s ahead of now (a clock far behind). Returns the claims, or the first thing that failed.
 */
export async function checkAttestation(
  token: unknown,
  keys: KeySet,
  expected: AttestationExpected & { typ: "content" },
): Promise<AttestationCheck<ContentClaims>>;
export async function checkAttestation(
  token: unknown,
  keys: KeySet,
  expected: AttestationExpected & { typ: "secret" },
): Promise<AttestationCheck<SecretClaims>>;
export async function checkAttestation(
  token: unknown,
  keys: KeySet,
  expected: AttestationExpected,
): Promise<AttestationCheck<ContentClaims | SecretClaims>> {
  const decoded = decode(token);
  if (!decoded) return fail("missing or malformed attestation");
  if (!(await signatureValid(decoded, keys))) return fail("bad signature or unknown kid");
  const c = decoded.claims;
  if (c.typ !== expected.typ || typeof c.exp !== "number" || typeof c.iat !== "number") return fail("wrong token type");
  if (c.iss !== expected.iss) return fail("another issuer");
  if (c.key !== expected.keyId) return fail("another key");
  if (c.dom !== expected.dom) return fail("another domain");
  if (expected.typ === "content" && c.ck !== (expected.ck || null)) return fail("another content key");
  if (expected.typ === "secret" && (c.name !== expected.name || c.nonce !== (expected.nonce || undefined))) {
    return fail("another secret or nonce");
  }
  if (c.sha !== (await sha256Hex(expected.text))) return fail(`${expected.typ === "content" ? "content" : "value"} changed`);
  if (c.exp <= expected.nowS || c.iat > expected.nowS + ATTESTATION_TTL_S) return fail("outside its validity", true);
  return { ok: true, claims: c as unknown as ContentClaims | SecretClaims };
}
