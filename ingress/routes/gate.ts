import { sha256Hex } from "../../shared/crypto/hash.js";
import { checkKeySent, evaluate, type Ask, type Prepared } from "../../shared/enforcement/index.js";
import type { Reason } from "../../shared/reasons.js";
import type { Lookup } from "../../shared/snapshots/cache.js";
import type { IngressDeps } from "../deps.js";
import { str, type Params } from "../params.js";
import type { HttpRequest } from "../types.js";
import { countingCall } from "./verify/batch.js";
import { verifyState } from "./verify/state.js";

/**
 * The enforcement chain for the endpoints other than verify (content, secret, botcheck,
 * scan and the security-data reads): the same snapshot lookup, the same pure rules and
 * the same counting script (one usage event per call, counted by the rules of
 * interface.md section 8), plus what an endpoint requires of the key. Order:
 * missing_key, invalid_key, the endpoint's requirement of the key kind
 * (server_key_required, ip_binding_required), the verify chain (docs/verify.md), the
 * endpoint's own last check (origin_mismatch), then rate and allowance in the script.
 */

export interface GateOptions {
  /** Usage label of the endpoint (`content`, `secret`, `botcheck`, `scan`, ...). */
  endpoint: string;
  /** Refuse client keys with server_key_required. */
  serverOnly?: boolean;
  /** Refuse keys without an IP allowlist with ip_binding_required (secret.php). */
  ipAllowlistRequired?: boolean;
  /** The domain the call is for, when it does not come from the `domain` parameter (botcheck: the page's origin). */
  domain?: string;
  /** The address the IP rules judge, when the `ip` parameter must not count (secret.php: always the connecting address). */
  ignoreIpParam?: boolean;
  /**
   * A last check after the chain, e.g. origin_mismatch; null passes. It may read Redis
   * (content.php's not_found, secret.php's unknown_secret, botcheck's verdict), so the
   * reason it gives is counted and recorded as the call's outcome. It runs again if the
   * snapshot was stale: make whatever it consumes idempotent.
   */
  after?: (prepared: Prepared) => Reason | null | Promise<Reason | null>;
}

export type Gate =
  | { ok: true; prepared: Prepared; apiKey: string; ask: Ask }
  | { ok: false; reason: Reason; prepared: Prepared | null; fault?: "unavailable" };

function requirement(prepared: Prepared, options: GateOptions): Reason | null {
  if (options.serverOnly && prepared.key.kind !== "server") return "server_key_required";
  if (options.ipAllowlistRequired && prepared.key.ip_allow.length === 0) return "ip_binding_required";
  return null;
}

export async function passGate(request: HttpRequest, deps: IngressDeps, params: Params, options: GateOptions): Promise<Gate> {
  const apiKey = str(params, "key");
  const sent = checkKeySent(apiKey);
  if (!sent.ok || apiKey === undefined) return { ok: false, reason: sent.ok ? "missing_key" : sent.reason, prepared: null };
  const now = deps.clock.now();
  const domainParam = options.domain ?? str(params, "domain");
  const ipParam = options.ignoreIpParam ? undefined : str(params, "ip");
  const ask: Ask = {
    domain: domainParam === "" ? undefined : domainParam?.slice(0, 2048),
    scope: str(params, "scope") || undefined,
    visitorIp: ipParam === "" ? undefined : ipParam?.slice(0, 64),
    remoteAddress: request.remoteAddress,
    now,
  };
  const state = verifyState(deps);
  const hash = sha256Hex(apiKey);
  const first = deps.snapshots.lookup(hash);
  let lookup: Lookup = first instanceof Promise ? await first : first;
  for (let attempt = 0; ; attempt++) {
    if (!lookup.found) {
      return lookup.loading ? { ok: false, reason: "unavailable", prepared: null, fault: "unavailable" } : { ok: false, reason: "invalid_key", prepared: null };
    }
    const { key, org } = lookup.snapshot;
    const prepared = state.prepare(key.value, org.value);
    let outcome: Reason | "ok" = requirement(prepared, options) ?? "ok";
    if (outcome === "ok") {
      const countries = state.countriesFor(prepared);
      const countryOf = countries instanceof Promise ? await countries : countries;
      const verdict = evaluate(prepared, ask, countryOf);
      if (!verdict.ok) outcome = verdict.reason;
      else if (options.after) {
        const last = options.after(prepared);
        outcome = (last instanceof Promise ? await last : last) ?? "ok";
      }
    }
    const result = await state.batcher.submit(countingCall(lookup.snapshot, outcome, { install: "", endpoint: options.endpoint, nowMs: now }));
    if (result.kind === "stale") {
      if (attempt > 0) return { ok: false, reason: "unavailable", prepared: null, fault: "unavailable" };
      lookup = await deps.snapshots.reload(hash);
      continue;
    }
    if (result.reason === "ok") return { ok: true, prepared, apiKey, ask };
    return { ok: false, reason: result.reason, prepared };
  }
}
