import { unseal } from "../../shared/platform/crypto/seal.js";
import { secretAad } from "../../shared/verify/index.js";
import type { IngressDeps } from "../deps.js";
import { readParams, str } from "../params.js";
import { fault, refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { attesterOf, passGate } from "./gate.js";
import { verifySignature } from "./verify/answer.js";
import { secretParams } from "./schemas.js";
import { attestedHost } from "../../shared/client/index.js";

/**
 * secret.php (interface.md 4.4): a runtime secret for a server key bound to an IP
 * allowlist, judged on the connecting address only (the `ip` parameter never counts).
 * POST only, parameters in the body only, no CORS headers at all, never cached. The
 * value is sealed at rest (AES-256-GCM under the master secret, bound to org and name)
 * and unsealed only to answer. Signed exactly like a verify answer, and attested (Ed25519,
 * shared/platform/crypto/attestation.ts) over the name and the value. docs/secret.md.
 */

const HEADERS: Readonly<Record<string, string>> = Object.freeze({ "cache-control": "no-store" });
const SUCCESS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "content-type": "application/json",
});
const QUERY_REFUSED = "secret.php takes its parameters in the POST body only, never in the query string";
/** The admin API's secret names: anything else cannot exist. */
const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

function headers(): Record<string, string> {
  return { ...HEADERS };
}

/** GET, HEAD, PUT, ...: 405 with Allow, and still no CORS header. */
export function secretMethodNotAllowed(): HttpReply {
  return refuse("method_not_allowed", {}, { ...HEADERS, allow: "POST" });
}

export async function secret(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  // Parameters in the body only: a key or a secret's name in the URL lands in access logs
  // and proxy logs, so a query string is refused before anything in it is read.
  if (request.query !== "") return refuse("bad_request", { detail: QUERY_REFUSED }, headers());
  const params = readParams(request);
  // A value that does not unseal (GATEWAY_SECRET differs from the one it was sealed with)
  // throws: the route wrapper (app.ts) answers the one fault, like Redis being down.
  if (params === null || !secretParams(params)) return refuse("bad_request", {}, headers());
  const nonce = str(params, "nonce") || undefined;
  const name = str(params, "name");
  const found: { sealed: string | null } = { sealed: null };
  const gate = await passGate(request, deps, params, {
    endpoint: "secret",
    serverOnly: true,
    ipAllowlistRequired: true,
    after: async (prepared) => {
      if (name === undefined || name === "") return "missing_name";
      found.sealed = NAME.test(name) ? await deps.redis.hget(deps.keys.secretSnapshot(prepared.org.id), name) : null;
      return found.sealed === null ? "unknown_secret" : null;
    },
  });
  if (!gate.ok) return gate.fault ? fault(request.requestId) : refuse(gate.reason, {}, headers());
  if (found.sealed === null || name === undefined) throw new Error("secret passed the gate without a sealed value");
  const { key } = gate.prepared;
  const value = unseal(deps.masterSecret, Buffer.from(found.sealed, "base64"), secretAad(key.org_id, name));
  const ts = deps.clock.nowSeconds();
  const domain = gate.ask.domain ?? "";
  const signature = verifySignature(gate.apiKey, ts, key.id, domain, nonce);
  const body: Record<string, unknown> = { ok: true, name, value, ts, signature };
  if (nonce !== undefined) body.nonce = nonce;
  // JSON.stringify writes `value` in the body exactly as here: the attestation digests that text.
  body.attestation = deps.attestations.secret(attesterOf(deps, gate), attestedHost(domain), name, JSON.stringify(value), nonce, ts);
  return { status: 200, headers: { ...SUCCESS_HEADERS }, body: JSON.stringify(body) };
}
