import { expect } from "vitest";
import { insertEvent, type EventType } from "../../../shared/events/db/events.js";
import { transaction } from "../../../shared/platform/db/pool.js";
import type { TestGateway } from "../../helpers/gateway.js";

/** Writes n events for the organization, in transactions of up to 25 (a scan's findings commit together). */
export async function writeEvents(gw: TestGateway, orgId: number, n: number, type: EventType = "scan.completed"): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 25) {
    await transaction(gw.ctx.db, async (tx) => {
      for (let j = i; j < Math.min(n, i + 25); j++) {
        ids.push(
          await insertEvent(tx, {
            orgId,
            type,
            timeMs: gw.ctx.clock.now(),
            domain: "example.com",
            payload: { kind: "web", grade: "B", score: 70 + (j % 30), fail_count: j % 5 },
          }),
        );
      }
    });
  }
  return ids;
}

export async function addDestination(gw: TestGateway, orgId: number, body: Record<string, unknown>): Promise<number> {
  const created = await gw.admin("POST", `/orgs/${orgId}/siem`, body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.destination.id as number;
}
