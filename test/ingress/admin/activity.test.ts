import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIVITY_GROUPS } from "../../../shared/accounts/activity.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { startDnsServer, type TestDnsServer } from "./dns-server.js";

let gw: TestGateway;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  gw = await startTestGateway("activity", { DNS_RESOLVER: dns.resolver });
});
afterAll(async () => {
  await gw?.stop();
  await dns?.close();
});

interface Row {
  grp: string;
  action_code: string;
  action: string;
  who: string;
  via: string;
  domain: string | null;
  at: Date;
  detail: Record<string, unknown>;
}

async function rowsOf(orgId: number): Promise<Row[]> {
  const { rows } = await gw.ctx.db.query<Row>("SELECT * FROM activity WHERE org_id = $1 ORDER BY id", [orgId]);
  return rows;
}

describe("activity record", () => {
  it("has no column for an address", async () => {
    const { rows } = await gw.ctx.db.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'activity' ORDER BY ordinal_position",
    );
    const names = rows.map((r) => r.column_name);
    expect(names).toEqual(["id", "org_id", "at", "who", "via", "grp", "action", "action_code", "domain", "detail"]);
    for (const name of names) expect(name).not.toMatch(/ip|addr|remote|client|host/i);
    expect(rows.some((r) => r.data_type === "inet" || r.data_type === "cidr")).toBe(false);
  });

  it("records every admin change with its group and action_code, at the service's clock time", async () => {
    await gw.admin("POST", "/clock", { advance_s: 86400 });
    const clockNow = gw.ctx.clock.now();
    const org = (await gw.admin("POST", "/orgs", { name: "Audited", plan: "starter" })).body.org.id;
    await gw.admin("PATCH", `/orgs/${org}`, { plan: "professional" });
    await gw.admin("POST", `/orgs/${org}/members`, { name: "Ann", email: "ann@example.com", role: "admin" });
    const domain = (await gw.admin("POST", `/orgs/${org}/domains`, { domain: "audited.example.com" })).body.domain;
    dns.txt.set(domain.txt_record.name, [domain.txt_record.value]);
    await gw.admin("POST", `/orgs/${org}/domains/audited.example.com/verify`);
    await gw.admin("POST", `/orgs/${org}/domains`, { domain: "manual.example.com", verified: true });
    const key = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "site", kind: "client", domain: "audited.example.com" })).body.details
      .id;
    await gw.admin("PATCH", `/keys/${key}`, { rate_per_minute: 60 });
    await gw.admin("POST", `/keys/${key}/suspend`);
    await gw.admin("POST", `/keys/${key}/resume`);
    await gw.admin("POST", `/keys/${key}/installations/i-1/approve`);
    await gw.admin("POST", `/keys/${key}/installations/i-2/block`);
    const rotated = (await gw.admin("POST", `/keys/${key}/rotate`)).body.details.id;
    await gw.admin("POST", `/keys/${rotated}/revoke`);

    const rows = await rowsOf(org);
    expect(rows.map((r) => [r.grp, r.action_code])).toEqual([
      ["settings", "org.created"],
      ["settings", "org.updated"],
      ["members", "member.added"],
      ["trust", "domain.added"],
      ["trust", "domain.verified"],
      ["trust", "domain.verified"],
      ["team_security", "key.created"],
      ["team_security", "key.updated"],
      ["team_security", "key.suspended"],
      ["team_security", "key.resumed"],
      ["trust", "installation.approved"],
      ["trust", "installation.blocked"],
      ["team_security", "key.rotated"],
      ["team_security", "key.revoked"],
    ]);
    for (const row of rows) {
      expect(ACTIVITY_GROUPS).toContain(row.grp);
      expect(row).toMatchObject({ who: "operator", via: "admin" });
      expect(row.action.length).toBeGreaterThan(0);
      // Written with the shared clock (one day ahead), not the database's now().
      expect(Math.abs(row.at.getTime() - clockNow)).toBeLessThan(60_000);
      expect(JSON.stringify(row)).not.toMatch(/127\.0\.0\.1|::1/);
    }
    expect(rows.find((r) => r.action_code === "key.created")?.domain).toBe("audited.example.com");
    expect(rows.find((r) => r.action_code === "key.rotated")?.detail).toMatchObject({ old_key_id: key, key_id: rotated });
  });

  it("records nothing for refused changes", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Quiet" })).body.org.id;
    const key = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "only", kind: "server" })).body.details.id;
    const before = (await rowsOf(org)).length;
    await gw.admin("POST", `/orgs/${org}/keys`, { name: "second", kind: "server" }); // 409 key_limit_reached
    await gw.admin("POST", `/orgs/${org}/keys`, { name: "bad", kind: "server", ip_allow: ["x"] }); // 400
    await gw.admin("PATCH", `/orgs/${org}`, { plan: "gold" });
    await gw.admin("PATCH", `/keys/${key}`, { countries_allow: ["XX"] });
    await gw.admin("POST", `/orgs/${org}/domains`, { domain: "not a domain" });
    await gw.admin("POST", `/orgs/${org}/domains/unknown.example.com/verify`);
    await gw.admin("POST", `/orgs/${org}/members`, { name: "x", email: "bad" });
    await gw.admin("POST", `/keys/${key}/revoke`);
    await gw.admin("POST", `/keys/${key}/revoke`); // 404 the second time
    await gw.admin("POST", `/keys/${key}/resume`);
    const after = await rowsOf(org);
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)?.action_code).toBe("key.revoked");
  });
});
