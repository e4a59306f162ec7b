import type { IngressDeps } from "../deps.js";
import type { HttpReply, HttpRequest } from "../types.js";

/**
 * /api/v1/keys.json: the public key that verifies `entitlement` and `lifeline` offline, and
 * the `attestation` of content and secret answers, as a JSON Web Key Set (RFC 7517,
 * OKP/Ed25519 per RFC 8037). docs/entitlement.md.
 */
export function keysJson(_request: HttpRequest, deps: IngressDeps): HttpReply {
  const { jwk } = deps.enforcer.signingKey;
  return {
    status: 200,
    headers: { "access-control-allow-origin": "*", "cache-control": "public, max-age=300" },
    body: { keys: [jwk], tokens: { format: "JWT", alg: "EdDSA", types: ["entitlement", "lifeline", "content", "secret"] } },
  };
}
