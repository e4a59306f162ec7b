import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publish } from "../../actors/runtime/index.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";

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
    if (status === 503) expect(body).toEqual({ ok: false, reason: "snapshots_loading" });
    else expect(body).toEqual({ ok: true });
  });

  it("exposes requests by endpoint and reason, and stream and group numbers", async () => {
    await gw.call("/nope");
    const stream = gw.ctx.keys.stream("metrics-probe");
    await publish(gw.ctx.redis, stream, { hello: 1 });
    await gw.ctx.redis.xgroup("CREATE", stream, "probe-group", "0", "MKSTREAM");
    const { status, body } = await gw.call("/metrics");
    expect(status).toBe(200);
    expect(body).toContain('gateway_http_requests_total{endpoint="unknown",status="404",reason="unknown_endpoint"}');
    expect(body).toMatch(/gateway_http_request_duration_seconds_count\{endpoint="unknown",reason="unknown_endpoint"\} [1-9]/);
    expect(body).toContain('gateway_stream_length{stream="stream:metrics-probe"} 1');
    expect(body).toContain('gateway_group_lag{stream="stream:metrics-probe",group="probe-group"} 1');
    expect(body).toContain('gateway_group_pending{stream="stream:metrics-probe",group="probe-group"} 0');
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
