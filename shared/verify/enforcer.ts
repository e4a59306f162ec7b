import type { Redis } from "../platform/redis/client.js";
import type { Counter } from "prom-client";
import type { Clock } from "../platform/clock.js";
import { sha256Hex } from "../platform/crypto/hash.js";
import { wellFormedKey } from "../platform/crypto/key-format.js";
import { memoize } from "../platform/memo.js";
import { deriveSigningKey, type SigningKey } from "../platform/crypto/entitlement.js";
import { openCountryDb, type CountryDb } from "../platform/geo/country.js";
import type { Logger } from "../platform/log.js";
import type { Reason } from "../platform/reasons.js";
import type { Keys } from "../platform/redis/keys.js";
import { loadScript } from "../platform/redis/scripts.js";
import type { Lookup, Resolved, SnapshotCache } from "./snapshots/cache.js";
import { countingCall, createCountingBatcher, type CountingBatcher, type CountingCall } from "./batch.js";
import { evaluate } from "./chain.js";
import { isRetired } from "./existence.js";
import type { ScriptOutcome } from "./counting.js";
import { createEntitlementCache, type EntitlementCache } from "./entitlements.js";
import { createPreparer, type Prepared } from "./prepared.js";
import { sourceId } from "./source.js";
import type { Ask, CountryOf } from "./types.js";

/**
 * The enforcement engine of every gated endpoint, built once per ingress process and
 * handed to routes in IngressDeps: the snapshot cache, the per-version memo of the
 * rules, the country database, the counting batcher and the token signing key. One
 * loop (`enforce`) judges a call: snapshot, prepare, the endpoint's requirement of the
 * key, the pure chain (docs/verify.md), the endpoint's last check, then the counting
 * script, with one retry when the script says the cached snapshot is stale.
 */

/** Counters the engine feeds; created (and registered) by whoever exports them. */
export interface EnforcerMetrics {
  /** Counting script runs (Redis round trips). */
  scriptRuns: Pick<Counter, "inc">;
  /** Calls judged by the counting script. */
  countedCalls: Pick<Counter, "inc">;
  /** Snapshot lookups that read Redis (a key not in the cache, a reload after `stale`). */
  snapshotLoads: Pick<Counter, "inc">;
}

export interface EnforcerOptions {
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  snapshots: SnapshotCache;
  masterSecret: Buffer;
  /** Country database path (null = the packaged one). */
  geoipDb: string | null;
  /** RATE_SOURCE_IPV6_PREFIX: the IPv6 network one source of the per-source limit is; 64 when absent. */
  rateSourceIpv6Prefix?: number;
  metrics: EnforcerMetrics;
}

/** One call to judge, already read from the request by its route. */
export interface EnforceRequest {
  /** The key as sent, already checked by checkKeySent. */
  apiKey: string;
  ask: Ask;
  /** Usage label of the endpoint (`verify`, `content`, `secret`, `botcheck`, `scan`, ...). */
  endpoint: string;
  /** The installation named by the call (verify only); recorded when the outcome is `ok`. */
  install?: string;
}

export interface EnforceOptions {
  /** Refuse client keys with server_key_required. */
  serverOnly?: boolean;
  /** Refuse keys without an IP allowlist with ip_binding_required (secret.php). */
  ipAllowlistRequired?: boolean;
  /**
   * A last check after the chain, e.g. origin_mismatch; null passes. It may read Redis
   * (content.php's not_found, secret.php's unknown_secret, botcheck's verdict), so the
   * reason it gives is counted and recorded as the call's outcome. It runs again if the
   * snapshot was stale: make whatever it consumes idempotent.
   */
  after?: (prepared: Prepared) => Reason | null | Promise<Reason | null>;
}

/** The engine's answer: a pass, a refusal (a value of the reasons table), or a fault that is no refusal. */
export type Enforced =
  /** `call`: what the counting script counted (a refund after a later fault needs it). */
  | { ok: true; prepared: Prepared; snapshot: Resolved; call: CountingCall }
  | { ok: false; reason: Reason; prepared: Prepared | null; fault?: "unavailable" };

export interface Enforcer {
  enforce(request: EnforceRequest, options?: EnforceOptions): Promise<Enforced>;
  /** enforce() answering through callbacks; `resolve` is called once, or `reject` with a fault (a thrown error is not caught for it). */
  judgeCall(
    request: EnforceRequest,
    options: EnforceOptions,
    resolve: (enforced: Enforced) => void,
    reject: (error: unknown) => void,
  ): void;
  prepare(snapshot: Resolved): Prepared;
  /** What the rules of this key need to place an address: nothing unless it has country rules. */
  countriesFor(prepared: Prepared): CountryOf | Promise<CountryOf>;
  batcher: CountingBatcher;
  signingKey: SigningKey;
  entitlement: EntitlementCache;
}

const NO_OPTIONS: EnforceOptions = Object.freeze({});
const noCountry: CountryOf = () => null;
const UNAVAILABLE: Enforced = Object.freeze({ ok: false, reason: "unavailable", prepared: null, fault: "unavailable" });
const INVALID_KEY: Enforced = Object.freeze({ ok: false, reason: "invalid_key", prepared: null });

type Outcome = Reason | "ok";

function requirement(prepared: Prepared, options: EnforceOptions): Reason | null {
  if (options.serverOnly && prepared.key.kind !== "server") return "server_key_required";
  if (options.ipAllowlistRequired && prepared.key.ip_allow.length === 0) return "ip_binding_required";
  return null;
}

/** The country database, loaded in the background and awaited only by keys with country rules. */
function countrySource(path: string | null, logger: Logger): () => CountryOf | Promise<CountryOf> {
  let db: CountryDb | null = null;
  const countryOf: CountryOf = (address) => (db as CountryDb).countryOf(address);
  const loading = openCountryDb(path).then(
    (opened) => {
      db = opened;
      return countryOf;
    },
    (error: unknown) => {
      logger.error({ err: error, path }, "country database cannot be read: keys with country rules answer 503");
      throw error;
    },
  );
  loading.catch(() => {});
  return () => (db ? countryOf : loading);
}

export function createEnforcer(options: EnforcerOptions): Enforcer {
  const { snapshots, metrics } = options;
  const batcher = createCountingBatcher({
    redis: options.redis,
    keys: options.keys,
    clock: options.clock,
    script: loadScript("verify-batch-n.lua"),
    onRun: (n) => {
      metrics.scriptRuns.inc();
      metrics.countedCalls.inc(n);
    },
  });
  const signingKey = deriveSigningKey(options.masterSecret);
  const preparer = createPreparer();
  const countries = countrySource(options.geoipDb, options.logger);
  // A verify repeats its key: its format check and its SHA-256 (the snapshot id) are made
  // once per key. Null: a key no format issued (not held, so junk keys cannot crowd out the
  // site's own).
  const keyHash = memoize((apiKey) => (wellFormedKey(apiKey) ? sha256Hex(apiKey) : null), { keep: (hash) => hash !== null });
  const ipv6Prefix = options.rateSourceIpv6Prefix;
  const sourceOf = memoize((address) => sourceId(address, ipv6Prefix));
  const prepare = (snapshot: Resolved) => preparer(snapshot.key.value, snapshot.org.value);
  const countriesFor = (prepared: Prepared) =>
    prepared.key.countries_allow.length + prepared.key.countries_block.length > 0 ? countries() : noCountry;

  /** The outcome of everything but the counting rules; a promise only when something must be awaited. */
  function judge(prepared: Prepared, ask: Ask, options: EnforceOptions): Outcome | Promise<Outcome> {
    const required = requirement(prepared, options);
    if (required !== null) return required;
    const places = countriesFor(prepared);
    if (places instanceof Promise) return places.then((countryOf) => chainThenLast(prepared, ask, options, countryOf));
    return chainThenLast(prepared, ask, options, places);
  }

  function chainThenLast(prepared: Prepared, ask: Ask, options: EnforceOptions, countryOf: CountryOf): Outcome | Promise<Outcome> {
    const verdict = evaluate(prepared, ask, countryOf);
    if (!verdict.ok) return verdict.reason;
    if (!options.after) return "ok";
    const last = options.after(prepared);
    return last instanceof Promise ? last.then((reason) => reason ?? "ok") : (last ?? "ok");
  }

  /**
   * One promise per call: the steps in between are plain callbacks (the batch answers
   * every call of a script run in one loop), so the common case (a cached snapshot, no
   * country rules, no last check) allocates no intermediate promise.
   */
  function enforce(request: EnforceRequest, options: EnforceOptions = NO_OPTIONS): Promise<Enforced> {
    return new Promise<Enforced>((resolve, reject) => judgeCall(request, options, resolve, reject));
  }

  /** enforce() with callbacks: a route that makes its answer in `resolve` spares a promise and a turn of the microtask queue. */
  function judgeCall(
    request: EnforceRequest,
    options: EnforceOptions,
    resolve: (enforced: Enforced) => void,
    reject: (error: unknown) => void,
  ): void {
    // A key no format issued, or a checksummed key with a wrong checksum: refused with no lookup.
    const hash = keyHash(request.apiKey);
    if (hash === null) {
      resolve(INVALID_KEY);
      return;
    }
    const { ask } = request;
    const attempt = (lookup: Lookup, retried: boolean): void => {
      try {
        if (!lookup.found) {
          resolve(lookup.loading ? UNAVAILABLE : INVALID_KEY);
          return;
        }
        const snapshot = lookup.snapshot;
        if (isRetired(snapshot.key.value, ask.now)) {
          resolve(INVALID_KEY);
          return;
        }
        const prepared = prepare(snapshot);
        let call: CountingCall;
        const counted = (error: unknown, result: ScriptOutcome | null): void => {
          if (result === null) {
            reject(error);
            return;
          }
          if (result.kind === "stale") {
            // The snapshot changed (or Redis lost it) since it was cached: reload and judge once more.
            if (retried) {
              resolve(UNAVAILABLE);
              return;
            }
            metrics.snapshotLoads.inc();
            snapshots.reload(hash).then((fresh) => attempt(fresh, true), reject);
            return;
          }
          resolve(result.reason === "ok" ? { ok: true, prepared, snapshot, call } : { ok: false, reason: result.reason, prepared });
        };
        const count = (outcome: Outcome): void => {
          const install = outcome === "ok" ? (request.install ?? "") : "";
          call = countingCall(snapshot, outcome, { install, endpoint: request.endpoint, nowMs: ask.now, caller: ask, sourceOf });
          batcher.enqueue(call, counted);
        };
        const outcome = judge(prepared, ask, options);
        if (outcome instanceof Promise) outcome.then(count, reject);
        else count(outcome);
      } catch (error) {
        reject(error);
      }
    };
    const first = snapshots.lookup(hash);
    if (first instanceof Promise) {
      metrics.snapshotLoads.inc();
      first.then((lookup) => attempt(lookup, false), reject);
    } else attempt(first, false);
  }

  return { enforce, judgeCall, prepare, countriesFor, batcher, signingKey, entitlement: createEntitlementCache(signingKey) };
}
