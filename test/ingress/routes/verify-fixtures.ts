import { expect } from "vitest";
import type { TestGateway } from "../../helpers/gateway.js";

/** Test fixtures for verify: organizations, verified domains and keys made through the admin API. */

export interface MadeKey {
  key: string;
  id: number;
  orgId: number;
  details: Record<string, unknown>;
}

export async function makeOrg(gw: TestGateway, body: Record<string, unknown> = {}): Promise<number> {
  const created = await gw.admin("POST", "/orgs", { name: "Org", plan: "starter", ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.org.id as number;
}

export async function verifyDomain(gw: TestGateway, orgId: number, domain: string): Promise<void> {
  const added = await gw.admin("POST", `/orgs/${orgId}/domains`, { domain, verified: true });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
}

export async function makeKey(gw: TestGateway, orgId: number, body: Record<string, unknown> = {}): Promise<MadeKey> {
  const created = await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "Site", kind: "client", domain: "example.com", ...body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { key: created.body.key, id: created.body.details.id, orgId, details: created.body.details };
}

/** An organization with example.com verified and one client key locked to it. */
export async function clientSetup(gw: TestGateway, key: Record<string, unknown> = {}, org: Record<string, unknown> = {}): Promise<MadeKey> {
  const orgId = await makeOrg(gw, org);
  await verifyDomain(gw, orgId, "example.com");
  return makeKey(gw, orgId, key);
}

export function verify(gw: TestGateway, params: Record<string, unknown>, headers?: Record<string, string>) {
  return gw.call("/api/v1/verify.php", { method: "POST", body: params, headers });
}

export async function usedOf(gw: TestGateway, orgId: number): Promise<number> {
  const org = await gw.admin("GET", `/orgs/${orgId}`);
  return org.body.org.used as number;
}

export async function advance(gw: TestGateway, seconds: number): Promise<void> {
  const moved = await gw.admin("POST", "/clock", { advance_s: seconds });
  expect(moved.status).toBe(200);
}

export async function patchKey(gw: TestGateway, id: number, body: Record<string, unknown>): Promise<void> {
  const patched = await gw.admin("PATCH", `/keys/${id}`, body);
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
}
