import { checkKeySent, type Ask, type EnforceOptions, type Prepared, type Resolved, type RouteLabel } from "../../shared/verify/index.js";
import type { Attester } from "../../shared/platform/crypto/attestation.js";
import type { Reason } from "../../shared/platform/reasons.js";
import type { IngressDeps } from "../deps.js";
import { str, type Params } from "../params.js";
import type { HttpRequest } from "../types.js";
import { chargeOf } from "./refund.js";

/**
 * The gate of the endpoints other than verify (content, secret, botcheck, scan and the
 * security-data reads): reads the key and the ask from the parameters and hands them to
 * the one Enforcer (shared/verify/enforcer.ts), which verify uses too. Order:
 * missing_key, invalid_key, the endpoint's requirement of the key kind
 * (server_key_required, ip_binding_required), the verify chain (docs/verify.md), the
 * endpoint's own last check (origin_mismatch), then rate and allowance in the script.
 */

export interface GateOptions extends EnforceOptions {
  /** Usage label of the endpoint (`content`, `secret`, `botcheck`, `scan`, ...): one of the uncapped labels. */
  endpoint: RouteLabel;
  /** The domain the call is for, when it does not come from the `domain` parameter (botcheck: the page's origin). */
  domain?: string;
}

export type Gate =
  /**
   * Counted: `request.charged` holds what, for a refund if the answer then faults (refund.ts).
   * `snapshot`: the versions the call was judged at (what an attestation is reused for).
   */
  | { ok: true; prepared: Prepared; snapshot: Resolved; apiKey: string; ask: Ask }
  | { ok: false; reason: Reason; prepared: Prepared | null; fault?: "unavailable" };

/**
 * A call's Ask. The address is read from the request only if a rule of the key (or the
 * route) asks for it: reading it costs a call into uWS (ingress/http.ts says why). A class,
 * so the getter sits on one prototype (an object-literal getter measured slower).
 */
export class RequestAsk implements Ask {
  constructor(
    readonly domain: string | undefined,
    readonly scope: string | undefined,
    readonly visitorIp: string | undefined,
    readonly now: number,
    private readonly request: HttpRequest,
  ) {}

  get remoteAddress(): string {
    return this.request.remoteAddress;
  }
}

export async function passGate(request: HttpRequest, deps: IngressDeps, params: Params, options: GateOptions): Promise<Gate> {
  const apiKey = str(params, "key");
  const sent = checkKeySent(apiKey);
  if (!sent.ok || apiKey === undefined) return { ok: false, reason: sent.ok ? "missing_key" : sent.reason, prepared: null };
  const domainParam = options.domain ?? str(params, "domain");
  const domain = domainParam === "" ? undefined : domainParam?.slice(0, 2048);
  // The `ip` parameter is verify.php's alone (interface.md 4.1): here the rules judge the connecting address.
  const ask = new RequestAsk(domain, str(params, "scope") || undefined, undefined, deps.clock.now(), request);
  const enforced = await deps.enforcer.enforce({ apiKey, ask, endpoint: options.endpoint }, options);
  if (!enforced.ok) return enforced;
  // Counted: a fault answer from here on gives the count back (app.ts's route wrapper).
  request.charged = chargeOf(enforced.call);
  return { ok: true, prepared: enforced.prepared, snapshot: enforced.snapshot, apiKey, ask };
}

/** Who a passed call's `attestation` names (content.php, secret.php): key, organization, the versions judged. */
export function attesterOf(deps: IngressDeps, gate: { prepared: Prepared; snapshot: Resolved }): Attester {
  const { key, org } = gate.prepared;
  return { iss: deps.baseUrl(), keyId: key.id, orgId: org.id, versions: `${gate.snapshot.key.v}|${gate.snapshot.org.v}` };
}
