import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineActor, runActor } from "../../actors/runtime/index.js";
import { publish } from "../../shared/platform/streams/envelope.js";
import { loadConfig } from "../../shared/platform/config.js";
import { silentLogger } from "../../shared/platform/log.js";
import { startTestGateway, waitFor, type TestGateway } from "../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("metrics");
});
afterAll(async () => {
  await gw?.stop();
});

describe("/healthz and /metrics", () => {
  it("healthz answers ok once snapshots are loaded", async () => {
    const { status, body } = await gw.call("/healthz");
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true });
  });

  it("healthz answers 503 with a reason while snapshots are missing", async () => {
    await gw.ctx.redis.del(gw.ctx.keys.snapshotSentinel());
    const { status, body } = await gw.call("/healthz");
    // The watcher may already have rebuilt; either way the answer is well-formed.
    if (status === 503) expect(body).toEqual({ ok: false, reason: "snapshots_loading", message: expect.any(String) });
    else expect(body).toEqual({ ok: true });
  });

  it("exposes requests by endpoint and reason, and stream and group numbers", async () => {
    await gw.call("/nope");
    const stream = gw.ctx.keys.stream("metrics-probe");
    await publish(gw.ctx.redis, stream, { hello: 1 }, { registry: gw.ctx.keys.streamRegistry() });
    await gw.ctx.redis.xgroup("CREATE", stream, "probe-group", "0", "MKSTREAM");
    const response = await fetch(`${gw.metricsUrl}/metrics`);
    const [status, body] = [response.status, await response.text()];
    expect(status).toBe(200);
    expect(body).toContain('gateway_http_requests_total{endpoint="unknown",status="404",reason="unknown_endpoint"}');
    expect(body).toMatch(/gateway_http_request_duration_seconds_count\{endpoint="unknown",reason="unknown_endpoint"\} [1-9]/);
    expect(body).toContain('gateway_stream_length{stream="stream:metrics-probe"} 1');
    expect(body).toContain('gateway_group_lag{stream="stream:metrics-probe",group="probe-group"} 1');
    expect(body).toContain('gateway_group_pending{stream="stream:metrics-probe",group="probe-group"} 0');
  });
});

describe("where /metrics is served (docs/security.md, item 6)", () => {
  const scrape = async () => (await fetch(`${gw.metricsUrl}/metrics`)).text();

  it("only on the internal listener, loopback by default; the public port answers 404", async () => {
    const pub = await gw.call("/metrics");
    expect([pub.status, pub.body.reason]).toEqual([404, "unknown_endpoint"]);
    expect(loadConfig({})).toMatchObject({ metricsHost: "127.0.0.1", metricsPort: 9464 });
    const other = await fetch(`${gw.metricsUrl}/healthz`);
    expect(other.status).toBe(404);
    expect(await other.text()).toContain("unknown_endpoint");
    expect((await fetch(`${gw.metricsUrl}/metrics`, { method: "POST", body: "" })).status).toBe(405);
  });

  it("lists the streams the runtime made (group creation), never by scanning: an unregistered stream is not shown", async () => {
    const handle = await runActor(
      defineActor<{ n: number }>({
        name: "registry-probe",
        streams: "registry-probe",
        schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        blockMs: 100,
        handler: async () => {},
      }),
      { redis: gw.ctx.redis, keys: gw.ctx.keys, clock: gw.ctx.clock, logger: silentLogger(), consumerName: "probe-1" },
    );
    try {
      const stray = gw.ctx.keys.stream("made-by-hand");
      await gw.ctx.redis.xadd(stray, "*", "data", "{}");
      // Scrapes share one Redis read per 500 ms: wait for one taken after the actor started.
      const text = await waitFor(async () => {
        const body = await scrape();
        return body.includes('gateway_group_lag{stream="stream:registry-probe",group="registry-probe"} 0') ? body : null;
      });
      expect(text).not.toContain("stream:made-by-hand");
      expect(await gw.ctx.redis.sismember(gw.ctx.keys.streamRegistry(), gw.ctx.keys.stream("registry-probe"))).toBe(1);
    } finally {
      await handle.stop({ timeoutMs: 100 });
    }
  });
});

describe("HEAD", () => {
  it("answers with the headers of a GET and no body, so the next request on the connection still parses", async () => {
    const { connect } = await import("node:net");
    const port = Number(new URL(gw.url).port);
    const raw = await new Promise<string>((resolve, reject) => {
      let data = "";
      const socket = connect(port, "127.0.0.1", () => socket.write("HEAD /api/v1/keys.json HTTP/1.1\r\nHost: x\r\n\r\n"));
      socket.on("data", (chunk) => {
        const first = data === "";
        data += chunk.toString();
        // uWS aborts pipelined requests whose answers are asynchronous: send the GET after the HEAD's answer.
        if (first) setTimeout(() => socket.write("GET /api/v1/keys.json HTTP/1.1\r\nHost: x\r\n\r\n"), 50);
        if ((data.match(/HTTP\/1\.1 /g) ?? []).length === 2 && data.endsWith("}")) {
          socket.end();
          resolve(data);
        }
      });
      socket.on("error", reject);
    });
    const [head, get] = raw.split(/(?=HTTP\/1\.1 )/);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.endsWith("\r\n\r\n")).toBe(true);
    const getLength = /content-length: (\d+)/i.exec(get)?.[1];
    expect(/content-length: (\d+)/i.exec(head)?.[1]).toBe(getLength);
    expect(get).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\n\r\n\{[\s\S]*\}$/);
  });
});
