import { hmacHex, hmacHexPadded, hmacPads } from "../../../shared/platform/crypto/hash.js";
import { memoize } from "../../../shared/platform/memo.js";
import { ENTITLEMENT_REUSE_S, effectiveEnd, scopesText, type Prepared, type SignedTokens } from "../../../shared/verify/index.js";
import { REASONS, type Reason } from "../../../shared/platform/reasons.js";
import { ByteParts, type HttpReply } from "../../types.js";

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

/**
 * What the verify route derives once per snapshot version (one Prepared: one key and org
 * version), so a success writes only ts, nonce, latency_ms and the signature: the public
 * key object, the kind-specific fields, and the answer's head and signed tokens for the
 * last (domain, installation) answered, which under load is nearly every call's.
 */
interface AnswerMemo {
  key: CachedKey | null;
  browserGuard: string | null;
  kindFields: string | null;
  /** The domain and installation `head` and `tokens` were made for; `head` is null until then. */
  domain: string;
  install: string | undefined;
  /** `{"authorized":true,"reason":"ok","key":…,"domain":…,"ts":` for that domain and `key`, as UTF-8. */
  head: Buffer | null;
  headKey: CachedKey | null;
  tokens: SignedTokens | null;
  /** `tokens` and the kind-specific fields, as UTF-8: what follows `"latency_ms":N,`. */
  tail: Buffer | null;
}

const memos = new WeakMap<Prepared, AnswerMemo>();

function memoOf(prepared: Prepared): AnswerMemo {
  let memo = memos.get(prepared);
  if (memo === undefined) {
    memo = {
      key: null,
      browserGuard: null,
      kindFields: null,
      domain: "",
      install: undefined,
      head: null,
      headKey: null,
      tokens: null,
      tail: null,
    };
    memos.set(prepared, memo);
  }
  return memo;
}

function cachedKey(prepared: Prepared, nowMs: number, memo = memoOf(prepared)): CachedKey {
  const end = effectiveEnd(prepared.key, prepared.org, nowMs);
  const cached = memo.key;
  if (cached !== null && cached.end === end) return cached;
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
  memo.key = fresh;
  return fresh;
}

/** The public key object (2.1), memoized per snapshot version and effective end. */
export function publicKey(prepared: Prepared, nowMs: number): PublicKey {
  return cachedKey(prepared, nowMs).value;
}

/** A key signs every one of its calls: its HMAC pads are made once (bounded, like the enforcer's key hashes). */
const padsOf = memoize(hmacPads);

/** interface.md 5.3: ts, key id, the literal 1, domain, and the nonce only when sent and non-empty. */
export function verifySignature(apiKey: string, ts: number, keyId: number, domain: string, nonce: string | undefined): string {
  const message = nonce ? `${ts}.${keyId}.1.${domain}.${nonce}` : `${ts}.${keyId}.1.${domain}`;
  const pads = padsOf(apiKey);
  return pads === null ? hmacHex(apiKey, message) : hmacHexPadded(pads, message);
}

/**
 * The page snippet of a client key: it blanks the page when it is served from a host
 * outside the key's lock (a copied page) or framed by another site. Client keys only.
 */
export function browserGuard(prepared: Prepared): string {
  const memo = memoOf(prepared);
  if (memo.browserGuard !== null) return memo.browserGuard;
  const lock = JSON.stringify(prepared.lock ?? "");
  const snippet =
    `<script data-gateway-guard="${prepared.key.id}">(function(w,d){var l=${lock},h=w.location.hostname.toLowerCase().replace(/\\.$/,"");` +
    `var off=l&&h!==l&&h.slice(-l.length-1)!=="."+l,framed=false;try{framed=w.top!==w.self&&w.top.location.hostname!==w.location.hostname}catch(e){framed=true}` +
    `if(off||framed){d.documentElement.style.display="none"}})(window,document)</script>`;
  memo.browserGuard = snippet;
  return snippet;
}

/** The kind-specific part of a success: browser_guard for client keys, firewall for server keys that have one. */
function kindFields(prepared: Prepared, memo: AnswerMemo): string {
  if (memo.kindFields !== null) return memo.kindFields;
  const { key } = prepared;
  const json =
    key.kind === "client"
      ? `,"browser_guard":${JSON.stringify(browserGuard(prepared))}`
      : key.firewall !== null
        ? `,"firewall":${JSON.stringify(key.firewall)}`
        : "";
  memo.kindFields = json;
  return json;
}

export interface Success {
  prepared: Prepared;
  nowMs: number;
  /** The `domain` parameter ("" when absent). */
  domain: string;
  /** The installation named by the call (undefined: none), which the tokens carry. */
  install: string | undefined;
  ts: number;
  signature: string;
  nonce: string | undefined;
  latencyMs: number;
  notice: string | undefined;
}

/**
 * The success answer of 2.2, serialized by hand: the parts that stay the same across calls
 * (key object, tokens, guard) are UTF-8 bytes already, so each call only writes what
 * changes, and the HTTP layer copies the parts into its buffer (ByteParts). A string answer
 * was flattened, measured and encoded again by uWS on every call: about 1.5 µs of a 1.7 KB
 * answer (perf, 2026-11-26).
 * `sign(s)` gives the signed tokens (`"entitlement":…,"entitlement_expires":…,"lifeline":…`)
 * when the memo holds none for this domain and installation, or holds some past
 * ENTITLEMENT_REUSE_S. Field order: authorized, reason, key, domain, ts, expires_in,
 * signature, nonce, latency_ms, entitlement, entitlement_expires, lifeline,
 * browser_guard | firewall, notice.
 */
export function successReply<S extends Success>(s: S, sign: (s: S) => SignedTokens): HttpReply {
  const memo = memoOf(s.prepared);
  const key = cachedKey(s.prepared, s.nowMs, memo);
  let { head, tail } = memo;
  const tokens = memo.tokens;
  if (
    head === null ||
    tail === null ||
    tokens === null ||
    memo.domain !== s.domain ||
    memo.install !== s.install ||
    memo.headKey !== key ||
    s.ts - tokens.at >= ENTITLEMENT_REUSE_S ||
    s.ts < tokens.at
  ) {
    const fresh = sign(s);
    head = Buffer.from(`{"authorized":true,"reason":"ok","key":${key.json},"domain":${JSON.stringify(s.domain)},"ts":`);
    tail = Buffer.from(`${fresh.json}${kindFields(s.prepared, memo)}`);
    memo.head = head;
    memo.tail = tail;
    memo.domain = s.domain;
    memo.install = s.install;
    memo.headKey = key;
    memo.tokens = fresh;
  }
  const middle =
    s.nonce === undefined
      ? `${s.ts},"expires_in":${EXPIRES_IN_S},"signature":"${s.signature}","latency_ms":${s.latencyMs},`
      : `${s.ts},"expires_in":${EXPIRES_IN_S},"signature":"${s.signature}","nonce":${JSON.stringify(s.nonce)},"latency_ms":${s.latencyMs},`;
  const end = s.notice === undefined ? "}" : `,"notice":${JSON.stringify(s.notice)}}`;
  return { status: 200, headers: SUCCESS_HEADERS as Record<string, string>, body: new ByteParts([head, middle, tail, end]) };
}

export function refusal(reason: Reason, key?: PublicKey): HttpReply {
  const body: Record<string, unknown> = { authorized: false, reason, message: REASONS[reason].message };
  if (key) body.key = key;
  return { status: REASONS[reason].status, headers: VERIFY_HEADERS as Record<string, string>, body };
}
