import { hmacHex } from "../../../shared/platform/crypto/hash.js";
import { effectiveEnd, scopesText, type Prepared } from "../../../shared/verify/index.js";
import { REASONS, type Reason } from "../../../shared/platform/reasons.js";
import type { HttpReply } from "../../types.js";

/** Verify answers are read by browsers from any page. */
export const VERIFY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "cache-control": "no-store",
});

/** Success answers are serialized here (a string body), so they name their content type. */
const SUCCESS_HEADERS: Readonly<Record<string, string>> = Object.freeze({ ...VERIFY_HEADERS, "content-type": "application/json" });

export const EXPIRES_IN_S = 120;

/** `YYYY-MM-DD HH:MM:SS`, UTC (interface.md 2.1). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

export interface PublicKey {
  id: number;
  name: string;
  prefix: string;
  environment: string;
  industry: string;
  scopes: string;
  domain: string;
  is_trial: boolean;
  expires_at: string;
}

interface CachedKey {
  end: number;
  value: PublicKey;
  json: string;
}

function cachedKey(prepared: Prepared, nowMs: number): CachedKey {
  const end = effectiveEnd(prepared.key, prepared.org, nowMs);
  const cached = prepared.extras.get("public-key") as CachedKey | undefined;
  if (cached && cached.end === end) return cached;
  const { key } = prepared;
  const value: PublicKey = {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    environment: key.environment,
    industry: key.industry,
    scopes: scopesText(key.scopes),
    domain: key.domain ?? "",
    is_trial: key.is_trial,
    expires_at: formatTime(end),
  };
  const fresh = { end, value, json: JSON.stringify(value) };
  prepared.extras.set("public-key", fresh);
  return fresh;
}

/** The public key object (2.1), memoized per snapshot version and effective end. */
export function publicKey(prepared: Prepared, nowMs: number): PublicKey {
  return cachedKey(prepared, nowMs).value;
}

/** interface.md 5.3: ts, key id, the literal 1, domain, and the nonce only when sent and non-empty. */
export function verifySignature(apiKey: string, ts: number, keyId: number, domain: string, nonce: string | undefined): string {
  const message = nonce ? `${ts}.${keyId}.1.${domain}.${nonce}` : `${ts}.${keyId}.1.${domain}`;
  return hmacHex(apiKey, message);
}

/**
 * The page snippet of a client key: it blanks the page when it is served from a host
 * outside the key's lock (a copied page) or framed by another site. Client keys only.
 */
export function browserGuard(prepared: Prepared): string {
  const cached = prepared.extras.get("browser-guard");
  if (typeof cached === "string") return cached;
  const lock = JSON.stringify(prepared.lock ?? "");
  const snippet =
    `<script data-gateway-guard="${prepared.key.id}">(function(w,d){var l=${lock},h=w.location.hostname.toLowerCase().replace(/\\.$/,"");` +
    `var off=l&&h!==l&&h.slice(-l.length-1)!=="."+l,framed=false;try{framed=w.top!==w.self&&w.top.location.hostname!==w.location.hostname}catch(e){framed=true}` +
    `if(off||framed){d.documentElement.style.display="none"}})(window,document)</script>`;
  prepared.extras.set("browser-guard", snippet);
  return snippet;
}

/** The kind-specific part of a success: browser_guard for client keys, firewall for server keys that have one. */
function kindFields(prepared: Prepared): string {
  const cached = prepared.extras.get("kind-fields");
  if (typeof cached === "string") return cached;
  const { key } = prepared;
  const json = key.kind === "client"
    ? `,"browser_guard":${JSON.stringify(browserGuard(prepared))}`
    : key.firewall !== null ? `,"firewall":${JSON.stringify(key.firewall)}` : "";
  prepared.extras.set("kind-fields", json);
  return json;
}

export interface Success {
  prepared: Prepared;
  nowMs: number;
  domain: string;
  ts: number;
  signature: string;
  nonce: string | undefined;
  latencyMs: number;
  /** `"entitlement":…,"entitlement_expires":…,"lifeline":…`, serialized once per signed pair. */
  tokensJson: string;
  notice: string | undefined;
}

/**
 * The success answer of 2.2, serialized by hand: the parts that stay the same across
 * calls (key object, tokens, guard) are JSON already, so each call only writes what
 * changes. Field order: authorized, reason, key, domain, ts, expires_in, signature,
 * nonce, latency_ms, entitlement, entitlement_expires, lifeline, browser_guard |
 * firewall, notice.
 */
export function successReply(s: Success): HttpReply {
  let body = `{"authorized":true,"reason":"ok","key":${cachedKey(s.prepared, s.nowMs).json},"domain":${JSON.stringify(s.domain)}`;
  body += `,"ts":${s.ts},"expires_in":${EXPIRES_IN_S},"signature":"${s.signature}"`;
  if (s.nonce !== undefined) body += `,"nonce":${JSON.stringify(s.nonce)}`;
  body += `,"latency_ms":${s.latencyMs},${s.tokensJson}${kindFields(s.prepared)}`;
  if (s.notice !== undefined) body += `,"notice":${JSON.stringify(s.notice)}`;
  return { status: 200, headers: SUCCESS_HEADERS as Record<string, string>, body: `${body}}` };
}

export function refusal(reason: Reason, key?: PublicKey): HttpReply {
  const body: Record<string, unknown> = { authorized: false, reason, message: REASONS[reason].message };
  if (key) body.key = key;
  return { status: REASONS[reason].status, headers: VERIFY_HEADERS as Record<string, string>, body };
}
