import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let orgId: number;
beforeAll(async () => {
  gw = await startTestGateway("contentrisks");
  orgId = (await gw.admin("POST", "/orgs", { name: "Content", plan: "starter" })).body.org.id;
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "risky.example.com", verified: true });
});
afterAll(async () => {
  await gw?.stop();
});

async function codes(): Promise<string[]> {
  const { rows } = await gw.ctx.db.query<{ grp: string; action_code: string }>(
    "SELECT grp, action_code FROM activity WHERE org_id = $1 ORDER BY id",
    [orgId],
  );
  return rows.map((r) => `${r.grp}/${r.action_code}`);
}

describe("content and secrets", () => {
  it("publishes and removes content of each type; bad names and values are 400, unknown ones 404", async () => {
    for (const [type, value] of [
      ["text", "hi"],
      ["html", "<b>x</b>"],
      ["json", { a: [1, null] }],
      ["number", 4.5],
      ["boolean", false],
    ] as const) {
      const r = await gw.admin("PUT", `/orgs/${orgId}/content/item_${type}`, { type, value });
      expect(r.status, type).toBe(200);
      expect(r.body.content[`item_${type}`]).toMatchObject({ type, value });
    }
    expect(await gw.ctx.redis.hlen(gw.ctx.keys.contentSnapshot(orgId))).toBe(5);
    for (const [path, body, reason] of [
      ["item", { type: "number", value: "4" }, "bad_value"],
      ["item", { type: "number", value: null }, "bad_value"],
      ["item", { type: "xml", value: "<a/>" }, "bad_type"],
      ["item", { type: "text" }, "missing_value"],
      ["item", { type: "json", value: { deep: "\u0000" } }, "bad_value"],
      ["has%20space", { type: "text", value: "x" }, "bad_content_key"],
      ["a%00b", { type: "text", value: "x" }, "bad_content_key"],
    ] as const) {
      const r = await gw.admin("PUT", `/orgs/${orgId}/content/${path}`, body);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(r.body.reason).toBe(reason);
    }
    expect((await gw.admin("DELETE", `/orgs/${orgId}/content/item_text`)).body).toEqual({ ok: true, deleted: "item_text" });
    expect(await gw.ctx.redis.hexists(gw.ctx.keys.contentSnapshot(orgId), "item_text")).toBe(0);
    for (const path of ["item_text", "a%00b", "%E0%A4%A", "x".repeat(200)]) {
      expect((await gw.admin("DELETE", `/orgs/${orgId}/content/${path}`)).status, path).toBe(404);
    }
    expect((await gw.admin("PUT", "/orgs/999999/content/x", { type: "text", value: "x" })).status).toBe(404);
  });

  it("stores secrets sealed and never answers their value", async () => {
    const put = await gw.admin("PUT", `/orgs/${orgId}/secrets/stripe_key`, { value: "sk_test_very_secret" });
    expect(put.status).toBe(200);
    expect(put.body.secret).toEqual({ name: "stripe_key", updated_at: expect.stringMatching(/Z$/) });
    expect(JSON.stringify(put.body)).not.toContain("very_secret");
    const { rows } = await gw.ctx.db.query<{ sealed: Buffer }>("SELECT sealed FROM secrets WHERE org_id = $1", [orgId]);
    expect(rows[0].sealed.toString("latin1")).not.toContain("very_secret");
    const cached = await gw.ctx.redis.hget(gw.ctx.keys.secretSnapshot(orgId), "stripe_key");
    expect(cached).not.toBeNull();
    expect(Buffer.from(cached ?? "", "base64").toString("latin1")).not.toContain("very_secret");
    expect((await gw.admin("PUT", `/orgs/${orgId}/secrets/bad%20name`, { value: "x" })).body.reason).toBe("bad_name");
    expect((await gw.admin("PUT", `/orgs/${orgId}/secrets/ok`, { value: "" })).body.reason).toBe("bad_value");
    expect((await gw.admin("DELETE", `/orgs/${orgId}/secrets/stripe_key`)).status).toBe(200);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/secrets/stripe_key`)).status).toBe(404);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/secrets/a%00b`)).status).toBe(404);
    const recorded = await codes();
    expect(recorded).toContain("team_security/secret.updated");
    expect(recorded).toContain("team_security/secret.deleted");
    expect(recorded).toContain("settings/content.updated");
    expect(recorded).toContain("settings/content.deleted");
  });
});

describe("risk acceptance", () => {
  it("accepts, replaces and releases; concurrent acceptances of one finding never collide", async () => {
    const accepted = await gw.admin("POST", `/orgs/${orgId}/risks`, {
      domain: "risky.example.com",
      finding_key: "web:hsts",
      note: "legacy",
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.acknowledgement).toMatchObject({
      domain: "risky.example.com",
      finding_key: "web:hsts",
      note: "legacy",
      expired: false,
    });

    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        gw.admin("POST", `/orgs/${orgId}/risks`, { domain: "risky.example.com", finding_key: "web:hsts", note: `n${i}` }),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(201));
    const { rows } = await gw.ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM acknowledgements WHERE org_id = $1 AND finding_key = 'web:hsts' AND released_at IS NULL",
      [orgId],
    );
    expect(rows[0].n).toBe(1);

    for (const [body, reason] of [
      [{ domain: "risky.example.com", finding_key: "nocolon" }, "bad_finding_key"],
      [{ domain: "risky.example.com", finding_key: "web:hsts", expires_at: "2001-01-01T00:00:00Z" }, "bad_expires_at"],
      [{ domain: "not a domain", finding_key: "web:hsts" }, "bad_domain"],
    ] as const) {
      const r = await gw.admin("POST", `/orgs/${orgId}/risks`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.reason).toBe(reason);
    }
    expect((await gw.admin("POST", `/orgs/${orgId}/risks`, { domain: "other.example.com", finding_key: "web:hsts" })).status).toBe(404);

    const released = await gw.admin("DELETE", `/orgs/${orgId}/risks/risky.example.com/web:hsts`);
    expect(released.status).toBe(200);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/risks/risky.example.com/web:hsts`)).status).toBe(404);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/risks/risky.example.com/%00`)).status).toBe(404);
    const recorded = await codes();
    expect(recorded.filter((c) => c === "risks/risk.accepted")).toHaveLength(9);
    expect(recorded).toContain("risks/risk.released");
  });
});
