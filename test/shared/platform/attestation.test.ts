import { describe, expect, it } from "vitest";
import { type Attester, createAttestations } from "../../../shared/platform/crypto/attestation.js";
import { deriveSigningKey, verifyToken } from "../../../shared/platform/crypto/entitlement.js";

/**
 * The reuse of signed attestations (shared/platform/crypto/attestation.ts): a token is
 * reused only for the very claims it carries, whatever the snapshot versions say.
 */

const signingKey = deriveSigningKey(Buffer.alloc(32, 7));
const NOW = 1_777_628_000;
const by = (keyId: number, orgId: number): Attester => ({ iss: "https://gateway.example/api/v1", keyId, orgId, versions: "1|1" });
const claims = (token: string) => verifyToken<{ exp: number } & Record<string, unknown>>(token, signingKey.jwk, NOW);
const CONTENT = '{"motd":{"type":"text","value":"hi","updated_at":"2026-05-01T09:30:00Z"}}';

describe("createAttestations", () => {
  it("reuses a content attestation for identical claims only: key, organization, content key and domain", () => {
    const attestations = createAttestations(signingKey);
    const first = attestations.content(by(1, 1), "example.com", null, CONTENT, NOW);
    expect(attestations.content(by(1, 1), "example.com", null, CONTENT, NOW + 5)).toBe(first);
    expect(claims(first)).toMatchObject({ typ: "content", key: 1, org: 1, dom: "example.com", ck: null });
    // Same snapshot versions, another key or organization: the ids are in the cache key themselves.
    expect(claims(attestations.content(by(2, 1), "example.com", null, CONTENT, NOW + 5))).toMatchObject({ key: 2, org: 1 });
    expect(claims(attestations.content(by(1, 2), "example.com", null, CONTENT, NOW + 5))).toMatchObject({ key: 1, org: 2 });
    // A content key named "null", or one that could pass for a piece of the domain, is not every value.
    expect(claims(attestations.content(by(1, 1), "example.com", "null", CONTENT, NOW + 5))).toMatchObject({ ck: "null" });
    const a = claims(attestations.content(by(1, 1), "b|example.com", "a", CONTENT, NOW + 5));
    const b = claims(attestations.content(by(1, 1), "example.com", "a|b", CONTENT, NOW + 5));
    expect([a?.ck, a?.dom, b?.ck, b?.dom]).toEqual(["a", "b|example.com", "a|b", "example.com"]);
  });

  it("reuses a secret attestation without a nonce for the same key and organization only", () => {
    const attestations = createAttestations(signingKey);
    const first = attestations.secret(by(1, 1), "", "api_token", '"v"', undefined, NOW);
    expect(attestations.secret(by(1, 1), "", "api_token", '"v"', undefined, NOW + 5)).toBe(first);
    expect(claims(attestations.secret(by(2, 1), "", "api_token", '"v"', undefined, NOW + 5))).toMatchObject({ key: 2, org: 1 });
    expect(claims(attestations.secret(by(1, 2), "", "api_token", '"v"', undefined, NOW + 5))).toMatchObject({ key: 1, org: 2 });
  });
});
