import {
  UNNAMED_INSTALL,
  checkKeySent,
  requestHost,
  scopesText,
  type Ask,
  type Enforced,
  type EnforceOptions,
  type Prepared,
  type Resolved,
  type SignedTokens,
} from "../../shared/verify/index.js";
import { isStorableText } from "../../shared/platform/validation.js";
import type { IngressDeps } from "../deps.js";
import { fault } from "../reply.js";
import { RequestAsk } from "./gate.js";
import { chargeOf } from "./refund.js";
import { readParams, str, type Params } from "../params.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { publicKey, refusal, successReply, verifySignature, type Success } from "./verify/answer.js";
import { clientNotice } from "./verify/notice.js";
import { verifyParams } from "./schemas.js";

const NO_OPTIONS: EnforceOptions = Object.freeze({});

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

function readVerifyParams(request: HttpRequest, params: Params, apiKey: string, now: number): VerifyParams | "bad_request" {
  const domain = optional(params, "domain");
  const scope = optional(params, "scope");
  const ip = optional(params, "ip");
  const install = optional(params, "install");
  const nonce = optional(params, "nonce");
  // The installation id is stored (Redis, PostgreSQL): refuse what PostgreSQL text cannot hold.
  if (install !== undefined && !isStorableText(install)) return "bad_request";
  return {
    apiKey,
    ask: new RequestAsk(domain, scope, ip, now, request),
    nonce,
    install,
    endpoint: endpointLabel(str(params, "endpoint")),
    notice: clientNotice(str(params, "client") ?? request.headers["x-gateway-client"], str(params, "sdk_version")),
  };
}

/** What a success needs beyond the answer's own fields: enough to sign its tokens when the memo holds none. */
interface VerifySuccess extends Success {
  deps: IngressDeps;
  snapshot: Resolved;
  /** The host the entitlement names (requestHost). */
  host: string;
}

/** The signed tokens of a success, from the entitlement cache; a plain function, so a call makes no closure for it. */
function signTokens(s: VerifySuccess): SignedTokens {
  const { key } = s.prepared;
  return s.deps.enforcer.entitlement(`${s.snapshot.key.v}|${s.snapshot.org.v}|${s.install ?? ""}|${s.host}`, s.ts, () => ({
    iss: s.deps.baseUrl(),
    keyId: key.id,
    orgId: key.org_id,
    domain: s.host,
    scopes: scopesText(key.scopes),
    environment: key.environment,
    trial: key.is_trial,
    install: s.install,
    nowS: s.ts,
  }));
}

function success(request: HttpRequest, deps: IngressDeps, prepared: Prepared, snapshot: Resolved, p: VerifyParams): HttpReply {
  // The clock read that judged and counted the call: one read per call.
  const now = p.ask.now;
  const ts = Math.floor(now / 1000);
  const domain = p.ask.domain ?? "";
  return successReply<VerifySuccess>(
    {
      prepared,
      nowMs: now,
      domain,
      install: p.install,
      ts,
      signature: verifySignature(p.apiKey, ts, prepared.key.id, domain, p.nonce),
      nonce: p.nonce,
      latencyMs: Math.floor(performance.now() - request.startedMs),
      notice: p.notice,
      deps,
      snapshot,
      // Keyed by the host the entitlement names, not the raw `domain`: a path or query after the
      // host would make every call its own entry (and its own two signatures).
      host: requestHost(prepared, p.ask.domain),
    },
    signTokens,
  );
}

export function verify(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> | HttpReply {
  const params = readParams(request);
  if (params === null || !verifyParams(params)) return refusal("bad_request");
  const apiKey = str(params, "key");
  const sent = checkKeySent(apiKey);
  if (!sent.ok || apiKey === undefined) return refusal(sent.ok ? "missing_key" : sent.reason);
  const p = readVerifyParams(request, params, apiKey, deps.clock.now());
  if (typeof p === "string") return refusal(p);
  // A call naming no installation is the unnamed installation (shared/verify/installations.ts).
  // One promise per call: the answer is made in the enforcer's callback, not in a `then`.
  // Whatever making it throws is this call's fault, never the counting batch's (which called it).
  const call = { apiKey, ask: p.ask, endpoint: p.endpoint, install: p.install ?? UNNAMED_INSTALL };
  return new Promise<HttpReply>((resolve, reject) =>
    deps.enforcer.judgeCall(
      call,
      NO_OPTIONS,
      (enforced) => {
        try {
          resolve(answer(request, deps, p, enforced));
        } catch (error) {
          // Counted, then failed: the route wrapper gives the count back (app.ts). Nothing may
          // throw from here into the batch that called this, not even a pass without its call.
          if (enforced.ok && enforced.call) request.charged = chargeOf(enforced.call);
          reject(error);
        }
      },
      reject,
    ),
  );
}

function answer(request: HttpRequest, deps: IngressDeps, p: VerifyParams, enforced: Enforced): HttpReply {
  if (enforced.ok) return success(request, deps, enforced.prepared, enforced.snapshot, p);
  if (enforced.fault) return fault(request.requestId, true);
  return refusal(enforced.reason, enforced.prepared ? publicKey(enforced.prepared, p.ask.now) : undefined);
}
