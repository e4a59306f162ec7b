import type { ContentAnswer, ContentResult, VerifyAnswer, VerifyResult } from "./answer.js";
import { attestedHost, checkAttestation, contentText } from "./attestation.js";
import { randomHex, sha256Hex } from "./encoding.js";
import { createSignatureChecker, freshness, verifyMessage } from "./signature.js";
import { memoryStore, type CacheStore } from "./store.js";
import { checkPair, decode, type EntitlementClaims, hasKid, type KeySet, type Jwk } from "./tokens.js";

/**
 * The verify client (docs/client.md): calls verify.php, believes an answer only when its
 * HMAC signature and `ts` hold and the entitlement and lifeline it carried check against
 * keys.json (Ed25519), keeps those, and applies interface.md 5.2: a refusal closes at once
 * (and forgets the cache); no answer (network error, timeout, 5xx) serves on the cached
 * entitlement, checked offline against keys.json, until it expires. `content()` reads
 * content.php and believes an answer only when its Ed25519 `attestation` checks (the HMAC
 * of a client key proves nothing). Node 20+ and browsers; WebCrypto and fetch only.
 */

export const CLIENT_NAME = "gateway-js";
export const CLIENT_VERSION = "2.0.0";

export interface ClientOptions {
  /** `{base_url}`, e.g. `https://gateway.example/api/v1`. */
  baseUrl: string;
  /** Default key of `verify()` and `content()` calls. */
  key?: string;
  /**
   * The id of `key` (a verify answer's `key.id`), which content attestations must name.
   * Without it, `content()` uses the id of the last checked verify answer for the key.
   */
  keyId?: number;
  /** This installation's id (sent as `install`; the lifeline is bound to it). */
  install?: string;
  store?: CacheStore;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** Give up on the service after this long and treat it as unreachable (default 5000 ms). */
  timeoutMs?: number;
  /** Called once per distinct `notice` (default: console.warn). */
  onNotice?: (notice: string) => void;
  /** `<library>/<version>` sent as `client` (default gateway-js/2.0.0). */
  client?: string;
}

export interface VerifyParams {
  key?: string;
  domain?: string;
  /** Default: 16 random bytes of hex per call. Pass "" to send none. */
  nonce?: string;
  scope?: string;
  ip?: string;
}

export interface ContentParams {
  key?: string;
  /** Sent, and checked against the answer's `domain` and the attestation's `dom`. */
  domain?: string;
  /** One value; every value when omitted. */
  contentKey?: string;
  /** The key's id (default: `keyId` of the options for their key, or learned from `verify()`). */
  keyId?: number;
}

interface Cached {
  entitlement: string;
  lifeline: string;
  keyId: number;
  expires: number;
}

const KEYS_FRESH_S = 300;

/** The host an entitlement names for a `domain` parameter: lower case, no scheme, port, path or trailing dot. */
export function hostOfDomain(domain: string | undefined): string {
  if (!domain) return "";
  let host = domain.trim().toLowerCase();
  host = host
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/^[^@]*@/, "");
  host = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "");
  return host.replace(/\.+$/, "");
}

function maxAge(header: string | null): number {
  const match = header ? /max-age=(\d+)/.exec(header) : null;
  return match ? Number(match[1]) : KEYS_FRESH_S;
}

export interface VerifyClient {
  verify(params?: VerifyParams): Promise<VerifyResult>;
  /** content.php, its HMAC and its attestation checked (docs/client.md, "Content"). */
  content(params?: ContentParams): Promise<ContentResult>;
  /** keys.json as cached (fetched when missing or stale). */
  keys(options?: { refresh?: boolean }): Promise<KeySet | null>;
}

export function createVerifyClient(options: ClientOptions): VerifyClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const store = options.store ?? memoryStore();
  const http = options.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));
  const now = options.now ?? (() => Date.now());
  const timeoutMs = options.timeoutMs ?? 5000;
  const onNotice = options.onNotice ?? ((notice: string) => console.warn(`[gateway] ${notice}`));
  const signatureOk = createSignatureChecker();
  const noticed = new Set<string>();
  const install = options.install ?? "";
  const nowS = () => Math.floor(now() / 1000);
  /** Key ids of checked verify answers (and the options' own): what a content attestation must name. */
  const keyIds = new Map<string, number>();
  if (options.key !== undefined && options.keyId !== undefined) keyIds.set(options.key, options.keyId);

  const request = async (path: string, init: RequestInit): Promise<Response> => {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      return await http(`${base}${path}`, { ...init, signal: abort.signal });
    } finally {
      clearTimeout(timer);
    }
  };

  const readKeys = async (): Promise<KeySet | null> => {
    const raw = await store.get("keys.json");
    if (!raw) return null;
    try {
      return JSON.parse(raw) as KeySet;
    } catch {
      return null;
    }
  };

  const fetchKeys = async (): Promise<KeySet | null> => {
    try {
      const response = await request("/keys.json", { method: "GET" });
      if (!response.ok) return null;
      const body = (await response.json()) as { keys?: Jwk[] };
      if (!Array.isArray(body.keys)) return null;
      const at = now();
      const set: KeySet = { keys: body.keys, fetchedAt: at, freshUntil: at + maxAge(response.headers.get("cache-control")) * 1000 };
      await store.set("keys.json", JSON.stringify(set));
      return set;
    } catch {
      return null;
    }
  };

  /** keys.json, fetched when missing, stale, asked to refresh, or when it lacks `kid`. */
  const keys = async (opts: { refresh?: boolean; kid?: string } = {}): Promise<KeySet | null> => {
    const cached = await readKeys();
    const usable = cached !== null && cached.freshUntil > now() && hasKid(cached, opts.kid);
    if (usable && !opts.refresh) return cached;
    // Offline, the last keys stay good for checking the cached entitlement: they only age.
    return (await fetchKeys()) ?? cached;
  };

  const slot = async (key: string, host: string) => `entitlement:${(await sha256Hex(`${key}|${host}|${install}`)).slice(0, 32)}`;

  const offline = async (key: string, host: string, fault: string): Promise<VerifyResult> => {
    const unreachable: VerifyResult = {
      authorized: false,
      source: "client",
      reason: "unreachable",
      message: "The service did not answer and no valid entitlement is cached.",
      fault,
    };
    const raw = await store.get(await slot(key, host));
    if (!raw) return unreachable;
    let cached: Cached;
    try {
      cached = JSON.parse(raw) as Cached;
    } catch {
      return unreachable;
    }
    const set = await readKeys();
    if (set === null) return unreachable;
    const checked = await checkPair(cached.entitlement, cached.lifeline, set, {
      iss: base,
      keyId: cached.keyId,
      dom: host,
      ins: install ? await sha256Hex(install) : "",
      nowS: nowS(),
    });
    if (!checked.ok) return { ...unreachable, fault: `${fault}; cached entitlement: ${checked.why}` };
    return { authorized: true, source: "entitlement", reason: "ok", entitlement: checked.claims, fault };
  };

  /**
   * Checks the answer's entitlement and lifeline against keys.json and caches them. The
   * HMAC proves nothing about who answered when the key is a client key (it is public), so
   * this Ed25519 check is what makes a success believable: when it fails, the answer is not.
   */
  const keep = async (
    key: string,
    host: string,
    answer: VerifyAnswer,
  ): Promise<{ ok: true; claims: EntitlementClaims } | { ok: false; why: string }> => {
    const kid = decode(answer.entitlement)?.kid;
    const set = await keys({ kid });
    if (set === null) return { ok: false, why: "keys.json unavailable" };
    const checked = await checkPair(answer.entitlement, answer.lifeline, set, {
      iss: base,
      keyId: answer.key.id,
      dom: host,
      ins: install ? await sha256Hex(install) : "",
      nowS: nowS(),
    });
    if (!checked.ok) return checked;
    const cached: Cached = {
      entitlement: answer.entitlement,
      lifeline: answer.lifeline,
      keyId: answer.key.id,
      expires: checked.claims.exp,
    };
    await store.set(await slot(key, host), JSON.stringify(cached));
    keyIds.set(key, checked.claims.key);
    return checked;
  };

  const verify = async (params: VerifyParams = {}): Promise<VerifyResult> => {
    const key = params.key ?? options.key;
    if (!key) throw new Error("verify: no key (pass it to createVerifyClient or verify)");
    const domain = params.domain ?? "";
    const host = hostOfDomain(domain);
    const nonce = params.nonce ?? randomHex(16);
    const body: Record<string, string> = { key, client: options.client ?? `${CLIENT_NAME}/${CLIENT_VERSION}` };
    if (domain) body.domain = domain;
    if (nonce) body.nonce = nonce;
    if (params.scope) body.scope = params.scope;
    if (params.ip) body.ip = params.ip;
    if (install) body.install = install;

    let status: number;
    let answer: Record<string, unknown>;
    try {
      const response = await request("/verify.php", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      status = response.status;
      if (status >= 500) return offline(key, host, `HTTP ${status}`);
      const parsed: unknown = await response.json();
      if (parsed === null || typeof parsed !== "object") return offline(key, host, `HTTP ${status}: not a JSON object`);
      answer = parsed as Record<string, unknown>;
    } catch (error) {
      return offline(key, host, error instanceof Error ? error.message : String(error));
    }

    if (answer.authorized !== true) {
      // A refusal (interface.md 5.2): close at once, and forget what the cache held.
      await store.delete(await slot(key, host));
      const reason = typeof answer.reason === "string" ? answer.reason : "refused";
      const message = typeof answer.message === "string" ? answer.message : reason;
      const refusal: VerifyResult = { authorized: false, source: "service", reason, message, status };
      if (answer.key && typeof answer.key === "object") refusal.key = answer.key as VerifyAnswer["key"];
      return refusal;
    }
    const success = answer as VerifyAnswer;
    const keyId = success.key && typeof success.key.id === "number" ? success.key.id : -1;
    // The signature covers what we asked (domain, nonce), so an answer for another call cannot pass.
    const forThisCall = success.domain === domain;
    if (!forThisCall || !(await signatureOk(key, verifyMessage(success.ts, keyId, domain, nonce || undefined), success.signature))) {
      return {
        authorized: false,
        source: "client",
        reason: "bad_signature",
        message: "The answer's signature does not match: it was not sent by the service for this call.",
      };
    }
    if (freshness(success.ts, success.expires_in, nowS()) === "stale") {
      return {
        authorized: false,
        source: "client",
        reason: "stale_answer",
        message: "The answer's ts is outside its freshness window (check this machine's clock).",
      };
    }
    if (typeof success.notice === "string" && !noticed.has(success.notice)) {
      noticed.add(success.notice);
      onNotice(success.notice);
    }
    const entitlement = await keep(key, host, success);
    if (!entitlement.ok) {
      return {
        authorized: false,
        source: "client",
        reason: "bad_entitlement",
        message: `The answer's entitlement does not check against keys.json (${entitlement.why}): it cannot be told from a forgery.`,
      };
    }
    return { authorized: true, source: "service", reason: "ok", answer: success, entitlement: entitlement.claims };
  };

  /** The id a content attestation must name: given, learned, or that of a cached entitlement. */
  const keyIdOf = async (key: string, host: string, given: number | undefined): Promise<number | undefined> => {
    const known = given ?? keyIds.get(key);
    if (known !== undefined) return known;
    try {
      const raw = await store.get(await slot(key, host));
      return raw ? (JSON.parse(raw) as Cached).keyId : undefined;
    } catch {
      return undefined;
    }
  };

  const content = async (params: ContentParams = {}): Promise<ContentResult> => {
    const key = params.key ?? options.key;
    if (!key) throw new Error("content: no key (pass it to createVerifyClient or content)");
    const domain = params.domain ?? "";
    const body: Record<string, string> = { key };
    if (domain) body.domain = domain;
    if (params.contentKey) body.content_key = params.contentKey;
    const refused = (reason: "bad_signature" | "stale_answer" | "bad_attestation" | "unreachable", message: string, fault?: string) =>
      ({ ok: false, source: "client", reason, message, ...(fault === undefined ? {} : { fault }) }) as const;
    const noAnswer = (fault: string) => refused("unreachable", "The service did not answer.", fault);

    let status: number;
    let raw: string;
    let answer: Record<string, unknown>;
    try {
      const response = await request("/content.php", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      status = response.status;
      if (status >= 500) return noAnswer(`HTTP ${status}`);
      raw = await response.text();
      const parsed: unknown = JSON.parse(raw);
      if (parsed === null || typeof parsed !== "object") return noAnswer(`HTTP ${status}: not a JSON object`);
      answer = parsed as Record<string, unknown>;
    } catch (error) {
      return noAnswer(error instanceof Error ? error.message : String(error));
    }
    if (answer.ok !== true) {
      const reason = typeof answer.reason === "string" ? answer.reason : "refused";
      return { ok: false, source: "service", reason, message: typeof answer.message === "string" ? answer.message : reason, status };
    }
    const success = answer as ContentAnswer;
    // The signed text is the body's own, never a re-serialization (docs/content.md); null when
    // the parsed body's `content` is not that text's value (a second `content` field).
    const text = contentText(raw);
    const signed = text !== null && success.domain === domain;
    if (!signed || !(await signatureOk(key, `${success.ts}.${domain}.${text}`, success.signature))) {
      return refused("bad_signature", "The answer's signature does not match: it was not sent by the service for this call.");
    }
    const keyId = await keyIdOf(key, hostOfDomain(domain), params.keyId);
    if (keyId === undefined) {
      return refused("bad_attestation", "The key's id is unknown: pass keyId, or verify() with this key first.");
    }
    const set = await keys({ kid: decode(success.attestation)?.kid });
    const checked = set
      ? await checkAttestation(success.attestation, set, {
          typ: "content",
          iss: base,
          keyId,
          dom: attestedHost(domain),
          ck: params.contentKey || null,
          text,
          nowS: nowS(),
        })
      : ({ ok: false, why: "keys.json unavailable", stale: false } as const);
    if (!checked.ok && checked.stale) {
      return refused("stale_answer", "The answer's attestation is outside its validity (check this machine's clock).");
    }
    if (!checked.ok) {
      return refused(
        "bad_attestation",
        `The answer's attestation does not check against keys.json (${checked.why}): it cannot be told from a forgery.`,
      );
    }
    // The values are read from the text checked, never from anything else in the body.
    const values = JSON.parse(text) as ContentAnswer["content"];
    return { ok: true, source: "service", content: values, answer: { ...success, content: values }, attestation: checked.claims };
  };

  return { verify, content, keys: (opts) => keys(opts) };
}
