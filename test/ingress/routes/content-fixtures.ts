import { createHash, createPublicKey, verify } from "node:crypto";
import { expect } from "vitest";
import type { TestGateway } from "../../helpers/gateway.js";

/** Fixtures shared by the content, secret and bot-check tests. */

export interface UsageEvent {
  org: number;
  key: number;
  endpoint: string;
  reason: string;
  counted: number;
  n: number;
}

/** Every usage event the counting script published for one organization, oldest first. */
export async function usageEvents(gw: TestGateway, orgId: number): Promise<UsageEvent[]> {
  const entries = await gw.ctx.redis.xrange(gw.ctx.keys.usageStreamOf(orgId), "-", "+");
  const out: UsageEvent[] = [];
  for (const [, fields] of entries) {
    const data = JSON.parse(fields[fields.indexOf("data") + 1]) as { events: UsageEvent[] };
    out.push(...data.events.filter((e) => e.org === orgId));
  }
  return out;
}

/** Calls per `endpoint/reason/counted` of one key. */
export async function usageTally(gw: TestGateway, orgId: number, keyId: number): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  for (const e of await usageEvents(gw, orgId)) {
    if (e.key !== keyId) continue;
    const id = `${e.endpoint}/${e.reason}/${e.counted}`;
    tally[id] = (tally[id] ?? 0) + e.n;
  }
  return tally;
}

export async function putContent(gw: TestGateway, orgId: number, contentKey: string, type: string, value: unknown): Promise<void> {
  const put = await gw.admin("PUT", `/orgs/${orgId}/content/${contentKey}`, { type, value });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

export async function putSecret(gw: TestGateway, orgId: number, name: string, value: string): Promise<void> {
  const put = await gw.admin("PUT", `/orgs/${orgId}/secrets/${name}`, { value });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
}

/** A raw call: the exact body text, for checks that must see the bytes (signatures). */
export async function rawCall(
  gw: TestGateway,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${gw.url}${path}`, {
    method: init.method ?? "POST",
    headers: { "content-type": "application/json", ...(init.headers ?? {}) },
    body: init.body,
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

export const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * An answer's `attestation` checked from the contract's side with nothing but keys.json
 * (docs/content.md, docs/secret.md): its header and claims, or null when the Ed25519
 * signature does not hold.
 */
export async function attested(
  gw: TestGateway,
  token: string,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> } | null> {
  const published = await fetch(`${gw.url}/api/v1/keys.json`);
  const { keys } = (await published.json()) as { keys: { kty: string; crv: string; x: string; kid: string }[] };
  const [header, payload, signature] = token.split(".");
  const head = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>;
  const jwk = keys.find((k) => k.kid === head.kid);
  if (jwk === undefined || head.alg !== "EdDSA") return null;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" });
  if (!verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"))) return null;
  return { header: head, claims: JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown> };
}
