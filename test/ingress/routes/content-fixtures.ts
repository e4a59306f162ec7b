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
