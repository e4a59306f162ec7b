import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../ops/cli.js";
import { insertCheck } from "../../../shared/status/db/status.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("statusadmin");
});
afterAll(async () => {
  await gw?.stop();
});

const future = (hours: number) => new Date(gw.ctx.clock.now() + hours * 3_600_000).toISOString();

describe("admin status calls", () => {
  it("sets, lists and unsets services, recording activity of no organization", async () => {
    const put = await gw.admin("PUT", "/status/services/website", { name: "Website", url: "https://example.com/health" });
    expect(put.status).toBe(200);
    expect(put.body.service).toMatchObject({ key: "website", name: "Website", url: "https://example.com/health", configured: true });
    const list = await gw.admin("GET", "/status/services");
    expect(list.body.services.map((s: any) => [s.key, s.configured])).toEqual([
      ["website", true],
      ["api", false],
      ["dashboard", false],
    ]);
    const activity = await gw.admin("GET", "/status/activity");
    expect(activity.body.activity[0]).toMatchObject({ who: "operator", action_code: "status.service_set", detail: { service: "website" } });
    const { rows } = await gw.ctx.db.query("SELECT org_id, grp, via FROM activity WHERE action_code = 'status.service_set'");
    expect(rows).toEqual([{ org_id: null, grp: "settings", via: "admin" }]);
  });

  it("refuses a private address the prober may not reach at once, naming the setting", async () => {
    for (const url of ["http://127.0.0.1:8080/healthz", "http://10.0.0.5/health", "http://localhost/health"]) {
      const res = await gw.admin("PUT", "/status/services/dashboard", { name: "Dashboard", url });
      expect([url, res.status, res.body.reason]).toEqual([url, 400, "bad_url"]);
      expect(res.body.detail).toContain("PROBE_ALLOW_PRIVATE=1");
    }
    expect(
      (await gw.admin("PUT", "/status/services/dashboard", { name: "Dashboard", url: "http://169.254.169.254/" })).body.detail,
    ).toContain("metadata");
  });

  it("the admin API and the CLI show each service's last probe and why it failed", async () => {
    await gw.admin("PUT", "/status/services/api", { name: "API", url: "https://api.example.com/healthz" });
    const now = gw.ctx.clock.now();
    const error = "refused by the SSRF guard: 10.1.2.3 (private)";
    await insertCheck(gw.ctx.db, {
      service: "api",
      slotMs: now - 60_000,
      atMs: now - 60_000,
      ok: true,
      latencyMs: 12,
      statusCode: 200,
      error: null,
    });
    await insertCheck(gw.ctx.db, { service: "api", slotMs: now, atMs: now, ok: false, latencyMs: null, statusCode: null, error });
    const list = await gw.admin("GET", "/status/services");
    const api = list.body.services.find((s: { key: string }) => s.key === "api");
    const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
    expect(api.last_probe).toEqual({ at, ok: false, status_code: null, latency_ms: null, error });
    expect(list.body.services.find((s: { key: string }) => s.key === "dashboard").last_probe).toBeNull();
    let out = "";
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) } };
    expect(await runCli(["status", "service", "list"], { ...gw.env, SITE_URL: gw.url }, io)).toBe(0);
    expect(out).toMatch(/LAST PROBE/);
    expect(out).toContain(`failed at ${at}: ${error}`);
  });

  it.each([
    ["PUT", "/status/services/mail", { name: "Mail", url: null }, 404, "not_found"],
    ["PUT", "/status/services/api", { name: "API" }, 400, "missing_url"],
    ["PUT", "/status/services/api", { name: "", url: null }, 400, "bad_name"],
    ["PUT", "/status/services/api", { name: "API", url: "ftp://x.example" }, 400, "bad_url"],
    ["PUT", "/status/services/api", { name: "API", url: null, extra: 1 }, 400, "bad_extra"],
    ["POST", "/status/incidents", { body: "x" }, 400, "missing_title"],
    ["POST", "/status/incidents", { title: "T" }, 400, "missing_body"],
    ["POST", "/status/incidents", { title: "T", body: "x", impact: "critical" }, 400, "bad_impact"],
    ["POST", "/status/incidents", { title: "T", body: "x", status: "fixed" }, 400, "bad_status"],
    ["POST", "/status/incidents", { title: "T", body: "x", affects: ["mail"] }, 400, "bad_affects"],
    ["POST", "/status/incidents", { title: "T", body: "x", affects: ["api", "api"] }, 400, "bad_affects"],
    ["POST", "/status/incidents/999999/updates", { status: "identified", body: "x" }, 404, "not_found"],
    ["PATCH", "/status/incidents/999999", { title: "x" }, 404, "not_found"],
    ["POST", "/status/maintenance", { title: "M", starts_at: "tomorrow", ends_at: "2099-01-01T00:00:00Z" }, 400, "bad_starts_at"],
    ["POST", "/status/maintenance", { title: "M", starts_at: "2099-01-02T00:00:00Z", ends_at: "2099-01-01T00:00:00Z" }, 400, "bad_ends_at"],
    ["POST", "/status/maintenance", { title: "M", starts_at: "2001-01-01T00:00:00Z", ends_at: "2001-01-02T00:00:00Z" }, 400, "bad_ends_at"],
    ["POST", "/status/maintenance/999999/cancel", {}, 404, "not_found"],
    ["GET", "/status/incidents/abc", undefined, 404, "not_found"],
  ])("%s %s %j → %i %s", async (method, path, body, status, reason) => {
    const res = await gw.admin(method, path, body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ ok: false, reason });
  });

  it("refuses without the admin token", async () => {
    const res = await gw.call("/admin/v1/status/incidents", { method: "POST", body: { title: "x", body: "y" } });
    expect(res.status).toBe(401);
  });

  it("runs an incident through its statuses; resolved is final; PATCH edits title, impact, affects, postmortem", async () => {
    const created = await gw.admin("POST", "/status/incidents", { title: "Errors", body: "Looking into it" });
    expect(created.status).toBe(201);
    const incident = created.body.incident;
    expect(incident).toMatchObject({
      title: "Errors",
      impact: "minor",
      status: "investigating",
      affects: [],
      resolved_at: null,
      postmortem: null,
    });
    expect(incident.updates).toEqual([{ status: "investigating", body: "Looking into it", at: incident.created_at }]);
    for (const status of ["identified", "monitoring", "investigating", "monitoring", "resolved"]) {
      const res = await gw.admin("POST", `/status/incidents/${incident.id}/updates`, { status, body: `now ${status}` });
      expect(res.status).toBe(201);
      expect(res.body.incident.status).toBe(status);
    }
    const reopened = await gw.admin("POST", `/status/incidents/${incident.id}/updates`, { status: "investigating", body: "again" });
    expect(reopened).toMatchObject({ status: 409, body: { ok: false, reason: "conflict" } });
    const note = await gw.admin("POST", `/status/incidents/${incident.id}/updates`, { status: "resolved", body: "Root cause published" });
    expect(note.status).toBe(201);
    const patched = await gw.admin("PATCH", `/status/incidents/${incident.id}`, {
      title: "API errors",
      impact: "major",
      affects: ["api"],
      postmortem: "Because.",
    });
    expect(patched.body.incident).toMatchObject({
      title: "API errors",
      impact: "major",
      affects: ["api"],
      postmortem: "Because.",
      status: "resolved",
    });
    expect(patched.body.incident.updates.map((u: any) => u.status)).toEqual([
      "resolved",
      "resolved",
      "monitoring",
      "investigating",
      "monitoring",
      "identified",
      "investigating",
    ]);
    const empty = await gw.admin("PATCH", `/status/incidents/${incident.id}`, {});
    expect(empty.status).toBe(400);
    const got = await gw.admin("GET", `/status/incidents/${incident.id}`);
    expect(got.body.incident.title).toBe("API errors");
    const list = await gw.admin("GET", "/status/incidents?limit=5");
    expect(list.body.incidents[0].id).toBe(incident.id);
    const codes = (await gw.admin("GET", "/status/activity?limit=500")).body.activity.map((a: any) => a.action_code);
    expect(codes).toEqual(expect.arrayContaining(["status.incident_created", "status.incident_updated", "status.incident_edited"]));
  });

  it("creates, updates and cancels maintenance; a cancelled window cannot change", async () => {
    const created = await gw.admin("POST", "/status/maintenance", {
      title: "Upgrade",
      affects: ["dashboard"],
      starts_at: future(1),
      ends_at: future(2),
    });
    expect(created.status).toBe(201);
    const id = created.body.maintenance.id;
    expect(created.body.maintenance).toMatchObject({ title: "Upgrade", body: "", affects: ["dashboard"], cancelled_at: null });
    const moved = await gw.admin("PATCH", `/status/maintenance/${id}`, { ends_at: future(3), body: "Longer" });
    expect(moved.status).toBe(200);
    expect(moved.body.maintenance.body).toBe("Longer");
    const bad = await gw.admin("PATCH", `/status/maintenance/${id}`, { starts_at: future(4) });
    expect(bad).toMatchObject({ status: 400, body: { reason: "bad_ends_at" } });
    const cancelled = await gw.admin("POST", `/status/maintenance/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.maintenance.cancelled_at).not.toBeNull();
    expect((await gw.admin("POST", `/status/maintenance/${id}/cancel`)).status).toBe(409);
    expect((await gw.admin("PATCH", `/status/maintenance/${id}`, { title: "x" })).status).toBe(409);
    expect((await gw.admin("GET", `/status/maintenance/${id}`)).body.maintenance.title).toBe("Upgrade");
    expect((await gw.admin("GET", "/status/maintenance")).body.maintenance.map((m: any) => m.id)).toContain(id);
    const doc = (await gw.call("/api/status.php")).body;
    expect(doc.maintenance.upcoming.map((m: any) => m.id)).not.toContain(id);
    const codes = (await gw.admin("GET", "/status/activity?limit=500")).body.activity.map((a: any) => a.action_code);
    expect(codes).toEqual(
      expect.arrayContaining(["status.maintenance_created", "status.maintenance_updated", "status.maintenance_cancelled"]),
    );
  });

  it("an admin change shows on the public document at once", async () => {
    await gw.call("/api/status.php");
    const created = await gw.admin("POST", "/status/incidents", { title: "Fresh", impact: "major", body: "now" });
    const doc = (await gw.call("/api/status.php")).body;
    expect(doc.incidents.open.map((i: any) => i.id)).toContain(created.body.incident.id);
    expect(doc.status.indicator).toBe("down");
  });
});
