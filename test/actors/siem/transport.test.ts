import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushNetwork } from "../../../actors/siem/transport/guard.js";
import { postGuarded } from "../../../actors/siem/transport/http-post.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";

/**
 * A collector's answer is hostile input: one that paces its bytes under the idle timeout, or
 * never ends, must not hold a push (and the loop, or the shared test-event worker, waiting on
 * it) for good.
 */

let server: http.Server;
let port: number;
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  server = http.createServer((request, response) => {
    request.resume();
    response.writeHead(200, { "content-type": "application/json" });
    if (request.url === "/drip") {
      // A byte every 100 ms: never silent for the idle timeout, never done.
      const timer = setInterval(() => response.write("x"), 100);
      timers.add(timer);
      response.on("close", () => clearInterval(timer));
    } else if (request.url === "/flood") {
      // As fast as the socket takes it, without end.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (response.write(chunk)) {
          /* until the socket is full */
        }
      };
      response.on("drain", pump);
      pump();
    } else {
      response.end('{"ok":true}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const timer of timers) clearInterval(timer);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const network = pushNetwork({
  outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
  resolver: null,
  caPem: null,
  timeoutMs: 3_000,
  hostname: "gw",
});
const post = (path: string) => postGuarded({ protocol: "http", host: "127.0.0.1", port, path }, {}, "[]", network);

describe("a SIEM push's answer", () => {
  it("is read whole from a collector that answers", async () => {
    expect(await post("/ok")).toEqual({ status: 200, body: '{"ok":true}' });
  });

  it("ends at the push's deadline when the collector drips bytes under the idle timeout", async () => {
    // Settled by the push's deadline (twice the idle timeout); without one, by nothing.
    await expect(post("/drip")).rejects.toThrow(/no complete answer within 6000 ms/);
  }, 20_000);

  it("stops reading an answer without end past 4 MiB: the status and what was kept stand", async () => {
    const answer = await post("/flood");
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeLessThanOrEqual(4 * 1024 * 1024);
  }, 20_000);
});
