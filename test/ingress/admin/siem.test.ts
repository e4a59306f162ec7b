import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadDestination } from "../../../actors/siem/index.js";
import { pushNetwork } from "../../../actors/siem/transport/guard.js";
import { sendBatch } from "../../../actors/siem/transport/index.js";
import { destinationById } from "../../../shared/events/db/siem.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { unreachableHost } from "../../../shared/platform/net/outbound/ssrf.js";
import { startFakeHttp, type FakeHttp } from "../../fixtures/siem/collectors.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/** The admin SIEM calls without OUTBOUND_ALLOW_CIDRS: the SSRF guard is on, as in production. */
let gw: TestGateway;
let orgId: number;
let otherOrg: number;
let receiver: FakeHttp;

beforeAll(async () => {
  receiver = await startFakeHttp();
  gw = await startTestGateway("siemadmin");
  orgId = (await gw.admin("POST", "/orgs", { name: "SIEM admin" })).body.org.id;
  otherOrg = (await gw.admin("POST", "/orgs", { name: "Other" })).body.org.id;
});
afterAll(async () => {
  await gw?.stop();
  await receiver?.close();
});

describe("admin SIEM destinations", () => {
  it("creates, reads, lists and deletes; the token is sealed and never shown; every change is in the activity record", async () => {
    const created = await gw.admin("POST", `/orgs/${orgId}/siem`, {
      kind: "splunk_hec",
      url: "https://hec.example.com:8088",
      token: "s3cret-token",
      index: "sec",
    });
    expect(created.status).toBe(201);
    const id = created.body.destination.id as number;
    expect(created.body.destination).toMatchObject({
      id,
      kind: "splunk_hec",
      url: "https://hec.example.com:8088",
      index: "sec",
      has_token: true,
    });
    expect(JSON.stringify(created.body)).not.toContain("s3cret-token");
    const row = await destinationById(gw.ctx.db, id);
    expect(row?.token_sealed?.includes(Buffer.from("s3cret-token"))).toBe(false);
    const loaded = loadDestination(gw.ctx, row!);
    expect(loaded).toMatchObject({
      token: "s3cret-token",
      target: { protocol: "https", host: "hec.example.com", port: 8088, path: "/services/collector/event" },
    });

    const got = await gw.admin("GET", `/orgs/${orgId}/siem/${id}`);
    expect(got.body.destination).toMatchObject({
      delivered: 0,
      pending: 0,
      failed: 0,
      dead_letters: 0,
      last_error: null,
      last_delivered_at: null,
    });
    expect((await gw.admin("GET", `/orgs/${otherOrg}/siem/${id}`)).status).toBe(404);
    expect((await gw.admin("GET", `/orgs/${orgId}/siem`)).body.destinations).toHaveLength(1);
    expect((await gw.admin("DELETE", `/orgs/${otherOrg}/siem/${id}`)).status).toBe(404);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/siem/${id}`)).status).toBe(200);
    expect((await gw.admin("DELETE", `/orgs/${orgId}/siem/${id}`)).status).toBe(404);
    const { rows } = await gw.ctx.db.query<{ action_code: string; grp: string }>(
      "SELECT action_code, grp FROM activity WHERE org_id = $1 ORDER BY id",
      [orgId],
    );
    expect(rows.filter((r) => r.grp === "siem").map((r) => r.action_code)).toEqual(["siem.destination_added", "siem.destination_removed"]);
  });

  it.each([
    [{ url: "http://x.example" }, "missing_kind"],
    [{ kind: "kafka", url: "http://x.example" }, "bad_kind"],
    [{ kind: "http" }, "missing_url"],
    [{ kind: "http", url: "ftp://x.example/" }, "bad_url"],
    [{ kind: "http", url: "not a url" }, "bad_url"],
    [{ kind: "http", url: "http://user:pw@x.example/" }, "bad_url"],
    [{ kind: "syslog_tcp", url: "http://x.example/" }, "bad_url"],
    [{ kind: "elastic_bulk", url: "syslog://x.example" }, "bad_url"],
    [{ kind: "http", url: "http://127.0.0.1:9200/" }, "bad_url"],
    [{ kind: "http", url: "http://169.254.169.254/latest" }, "bad_url"],
    [{ kind: "syslog_tcp", url: "tls://[::1]:6514" }, "bad_url"],
    [{ kind: "http", url: "http://10.1.2.3/" }, "bad_url"],
    [{ kind: "syslog_tcp", url: "tcp://a%40b:514" }, "bad_url"],
    [{ kind: "elastic_bulk", url: "http://es.example", index: "Bad Index" }, "bad_index"],
    [{ kind: "http", url: "http://x.example", token: 5 }, "bad_token"],
    [{ kind: "http", url: "http://x.example", extra: 1 }, "bad_extra"],
  ])("%j → 400 %s", async (body, reason) => {
    const res = await gw.admin("POST", `/orgs/${orgId}/siem`, body);
    expect(res.status).toBe(400);
    expect(res.body.reason).toBe(reason);
  });

  it.each([
    // Not special schemes: WHATWG URL keeps their host as typed; read as an http host is, each is loopback.
    "tcp://0x7f.1",
    "tcp://2130706433",
    "tcp://127.1",
    "tcp://127.0.0.1.",
    "syslog://0177.0.0.1:1514",
    "tls://%31%32%37.0.0.1",
    "syslog+tcp://LOCALHOST.",
    "syslog://app.localhost.",
  ])("syslog_tcp %s is refused at creation like any loopback address", async (url) => {
    const res = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "syslog_tcp", url });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      reason: "bad_url",
      detail: expect.stringMatching(/^the address is refused \(loopback; OUTBOUND_ALLOW_CIDRS/),
    });
  });

  it.each(["http://localhost./", "https://app.localhost.:8088/"])("%s is refused at creation like localhost", async (url) => {
    const res = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url });
    expect(res.body).toMatchObject({ reason: "bad_url", detail: expect.stringMatching(/^the address is refused \(loopback; /) });
  });

  it("unknown organization is 404; no admin token is 401", async () => {
    expect((await gw.admin("POST", "/orgs/999999/siem", { kind: "http", url: "http://x.example" })).status).toBe(404);
    const res = await gw.call(`/admin/v1/orgs/${orgId}/siem`, { method: "GET" });
    expect(res.status).toBe(401);
  });

  it("the pusher's guard refuses a private address at connect time too (after DNS, not only at creation)", async () => {
    const network = pushNetwork({
      outbound: outboundPolicy("siem", "none"),
      resolver: null,
      caPem: null,
      timeoutMs: 2_000,
      hostname: "gw",
    });
    const destination = {
      id: 1,
      orgId,
      kind: "http" as const,
      url: receiver.url,
      token: null,
      index: null,
      target: { protocol: "http" as const, host: "127.0.0.1", port: receiver.port, path: "/" },
    };
    const event = {
      id: 1,
      type: "scan.completed" as const,
      time: new Date().toISOString(),
      domain: "x.example",
      kind: "web" as const,
      grade: "A",
      score: 90,
      fail_count: 0,
    };
    await expect(sendBatch(destination, [event], network)).rejects.toMatchObject({
      message: unreachableHost("127.0.0.1"),
      logDetail: expect.stringMatching(/SSRF guard refused 127\.0\.0\.1: .*loopback/),
    });
    expect(receiver.requests).toBe(0);
    const allowed = pushNetwork({
      outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
      resolver: null,
      caPem: null,
      timeoutMs: 2_000,
      hostname: "gw",
    });
    await sendBatch(destination, [event], allowed);
    expect(receiver.stored.get(1)).toBe(1);
  });
});

describe("send test event when the request cannot be published", () => {
  it("answers the fault and gives its place back: no pusher will ever handle it", async () => {
    const created = await gw.admin("POST", `/orgs/${orgId}/siem`, { kind: "http", url: "https://collector.example.com/in" });
    expect(created.status).toBe(201);
    const outstanding = async () => Number((await gw.ctx.redis.get(gw.ctx.keys.siemTestsOutstanding(orgId))) ?? 0);
    const before = await outstanding();
    const xadd = vi
      .spyOn(gw.ingress.deps.redis, "xadd")
      .mockRejectedValueOnce(new Error("READONLY You can't write against a read only replica."));
    const failed = await gw.admin("POST", `/orgs/${orgId}/siem/${created.body.destination.id}/test`);
    expect(xadd).toHaveBeenCalled();
    xadd.mockRestore();
    expect(failed.status).toBe(500);
    expect(await outstanding()).toBe(before);
  });
});
