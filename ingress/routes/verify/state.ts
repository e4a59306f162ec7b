import { Counter, type Registry } from "prom-client";
import { deriveSigningKey, issueEntitlement, type IssueInput, type Issued, type SigningKey } from "../../../shared/crypto/entitlement.js";
import { createPreparer, type CountryOf, type Prepared } from "../../../shared/enforcement/index.js";
import { openCountryDb, type CountryDb } from "../../../shared/geo/country.js";
import type { KeySnapshot, OrgSnapshot } from "../../../shared/snapshots/types.js";
import { loadScript } from "../../../shared/redis/scripts.js";
import type { IngressDeps } from "../../deps.js";
import { createCountingBatcher, type CountingBatcher } from "./batch.js";

/**
 * What verify keeps between calls, one per ingress (keyed by its deps): the counting
 * batcher, the per-version memo of the rules, the token signing key, the short cache
 * of signed entitlements and the country database. Built on the first call.
 */
export interface VerifyState {
  prepare(key: KeySnapshot, org: OrgSnapshot): Prepared;
  batcher: CountingBatcher;
  signingKey: SigningKey;
  /** Signed tokens per (versions, install, domain), reused for ENTITLEMENT_REUSE_S. */
  entitlement(cacheKey: string, nowS: number, input: () => IssueInput): SignedTokens;
  /** The country database; loaded in the background, awaited only by keys with country rules. */
  countries(): CountryOf | Promise<CountryOf>;
  /** What the rules of this key need to place an address: nothing unless it has country rules. */
  countriesFor(prepared: Prepared): CountryOf | Promise<CountryOf>;
}

/** Signing is not per call: a signed pair is reused this long (entitlement_expires stays within it of ts + 7 days). */
export const ENTITLEMENT_REUSE_S = 60;

/** A signed pair, with its answer fields already serialized. */
export interface SignedTokens extends Issued {
  at: number;
  json: string;
}
const MAX_CACHED_ENTITLEMENTS = 50_000;

const states = new WeakMap<IngressDeps, VerifyState>();

const noCountry: CountryOf = () => null;

function counter(registry: Registry, name: string, help: string): Counter {
  const existing = registry.getSingleMetric(name);
  return existing instanceof Counter ? existing : new Counter({ name, help, registers: [registry] });
}

function createState(deps: IngressDeps): VerifyState {
  const runs = counter(deps.metrics, "gateway_verify_script_runs_total", "Counting script runs (Redis round trips) made by verify");
  const calls = counter(deps.metrics, "gateway_verify_counted_calls_total", "Verify calls judged by the counting script");
  const batcher = createCountingBatcher({
    redis: deps.redis,
    keys: deps.keys,
    clock: deps.clock,
    script: loadScript("verify-batch-n.lua"),
    onRun: (n) => {
      runs.inc();
      calls.inc(n);
    },
  });
  const signingKey = deriveSigningKey(deps.masterSecret);
  const signed = new Map<string, SignedTokens>();

  let db: CountryDb | null = null;
  const loading = openCountryDb(deps.config.geoipDb).then(
    (opened) => {
      db = opened;
      return opened;
    },
    (error: unknown) => {
      deps.logger.error({ err: error, path: deps.config.geoipDb }, "country database cannot be read: keys with country rules answer 503");
      throw error;
    },
  );
  loading.catch(() => {});
  const countryOf = (address: string) => (db as CountryDb).countryOf(address);

  return {
    prepare: createPreparer(),
    batcher,
    signingKey,
    entitlement(cacheKey, nowS, input) {
      const hit = signed.get(cacheKey);
      if (hit && nowS - hit.at < ENTITLEMENT_REUSE_S && nowS >= hit.at) return hit;
      if (signed.size >= MAX_CACHED_ENTITLEMENTS) signed.clear();
      const tokens = issueEntitlement(signingKey, { ...input(), nowS });
      const json = `"entitlement":${JSON.stringify(tokens.entitlement)},"entitlement_expires":${tokens.expires},"lifeline":${JSON.stringify(tokens.lifeline)}`;
      const issued = { ...tokens, at: nowS, json };
      signed.set(cacheKey, issued);
      return issued;
    },
    countries() {
      return db ? countryOf : loading.then(() => countryOf);
    },
    countriesFor(prepared) {
      return prepared.key.countries_allow.length + prepared.key.countries_block.length > 0 ? this.countries() : noCountry;
    },
  };
}

export function verifyState(deps: IngressDeps): VerifyState {
  let state = states.get(deps);
  if (!state) {
    state = createState(deps);
    states.set(deps, state);
  }
  return state;
}
