import { sha256Hex } from "../../shared/crypto/hash.js";
import {
  checkKeySent,
  evaluate,
  hostOf,
  scopesText,
  type Ask,
  type Prepared,
} from "../../shared/enforcement/index.js";
import type { Lookup } from "../../shared/snapshots/cache.js";
import { isStorableText } from "../../shared/validation.js";
import type { IngressDeps } from "../deps.js";
import { readParams, str, type Params } from "../params.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { publicKey, refusal, successReply, unavailable, verifySignature } from "./verify/answer.js";
import { clientNotice } from "./verify/notice.js";
import { countingCall } from "./verify/batch.js";
import { verifyState, type VerifyState } from "./verify/state.js";
import { verifyParams } from "./schemas.js";

/**
 * verify.php (interface.md 4.1): may this key, from this place, do this thing, now.
 * Answered from the snapshot cache and one counting-script run shared with the other
 * calls of the same event-loop turn; never PostgreSQL. Order of the rules: docs/verify.md.
 */

interface VerifyParams {
  apiKey: string;
  ask: Ask;
  nonce: string | undefined;
  install: string | undefined;
  endpoint: string;
  notice: string | undefined;
}

/** A parameter as a string, undefined when absent or empty (lengths are bounded by schemas.ts). */
function optional(params: Params, name: string): string | undefined {
  const value = str(params, name);
  return value === undefined || value === "" ? undefined : value;
}

function endpointLabel(value: string | undefined): string {
  const label = value?.trim().toLowerCase();
  return label && /^[a-z0-9][a-z0-9_.-]{0,39}$/.test(label) ? label : "verify";
}

function readVerifyParams(request: HttpRequest, params: Params, apiKey: string, now: number): VerifyParams | null {
  const domain = optional(params, "domain");
  const scope = optional(params, "scope");
  const ip = optional(params, "ip");
  const install = optional(params, "install");
  const nonce = optional(params, "nonce");
  // The installation id is stored (Redis, PostgreSQL): refuse what PostgreSQL text cannot hold.
  if (install !== undefined && !isStorableText(install)) return null;
  return {
    apiKey,
    ask: { domain, scope, visitorIp: ip, remoteAddress: request.remoteAddress, now },
    nonce,
    install,
    endpoint: endpointLabel(str(params, "endpoint")),
    notice: clientNotice(str(params, "client") ?? request.headers["x-gateway-client"], str(params, "sdk_version")),
  };
}

function success(request: HttpRequest, deps: IngressDeps, state: VerifyState, prepared: Prepared, versions: string, p: VerifyParams): HttpReply {
  const now = deps.clock.now();
  const ts = Math.floor(now / 1000);
  const { key } = prepared;
  const domain = p.ask.domain ?? "";
  const tokens = state.entitlement(`${versions}|${p.install ?? ""}|${domain}`, ts, () => ({
    iss: deps.baseUrl(),
    keyId: key.id,
    orgId: key.org_id,
    domain: p.ask.domain === undefined ? "" : hostOf(p.ask.domain) ?? "",
    scopes: scopesText(key.scopes),
    environment: key.environment,
    trial: key.is_trial,
    install: p.install,
    nowS: ts,
  }));
  return successReply({
    prepared,
    nowMs: now,
    domain,
    ts,
    signature: verifySignature(p.apiKey, ts, key.id, domain, p.nonce),
    nonce: p.nonce,
    latencyMs: Number((process.hrtime.bigint() - request.startedNs) / 1_000_000n),
    tokensJson: tokens.json,
    notice: p.notice,
  });
}

async function judge(request: HttpRequest, deps: IngressDeps, state: VerifyState, p: VerifyParams): Promise<HttpReply> {
  const hash = sha256Hex(p.apiKey);
  const first = deps.snapshots.lookup(hash);
  let lookup: Lookup = first instanceof Promise ? await first : first;
  for (let attempt = 0; ; attempt++) {
    if (!lookup.found) return lookup.loading ? unavailable(request.requestId) : refusal("invalid_key");
    const { key, org } = lookup.snapshot;
    const prepared = state.prepare(key.value, org.value);
    const countries = state.countriesFor(prepared);
    const countryOf = countries instanceof Promise ? await countries : countries;
    const verdict = evaluate(prepared, p.ask, countryOf);
    const outcome = verdict.ok ? "ok" : verdict.reason;
    const result = await state.batcher.submit(
      countingCall(lookup.snapshot, outcome, { install: outcome === "ok" ? p.install ?? "" : "", endpoint: p.endpoint, nowMs: p.ask.now }),
    );
    if (result.kind === "stale") {
      // The snapshot changed (or Redis lost it) since it was cached: reload and judge once more.
      if (attempt > 0) return unavailable(request.requestId);
      lookup = await deps.snapshots.reload(hash);
      continue;
    }
    if (result.reason === "ok") return success(request, deps, state, prepared, `${key.v}|${org.v}`, p);
    return refusal(result.reason, publicKey(prepared, p.ask.now));
  }
}

export async function verify(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const params = readParams(request);
  if (params === null || !verifyParams(params)) return refusal("bad_request");
  const apiKey = str(params, "key");
  const sent = checkKeySent(apiKey);
  if (!sent.ok || apiKey === undefined) return refusal(sent.ok ? "missing_key" : sent.reason);
  const p = readVerifyParams(request, params, apiKey, deps.clock.now());
  if (p === null) return refusal("bad_request");
  const state = verifyState(deps);
  try {
    return await judge(request, deps, state, p);
  } catch (error) {
    // Redis down, a script fault: the caller must treat the service as unreachable.
    deps.logger.error({ err: error, requestId: request.requestId }, "verify fault");
    return unavailable(request.requestId);
  }
}
