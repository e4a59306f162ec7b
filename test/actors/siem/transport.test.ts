import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEvent } from "../../../actors/siem/handler.js";
import type { LoadedDestination } from "../../../actors/siem/messages.js";
import { DeliveryError, type PushNetwork, pushNetwork, publicUnderDefault } from "../../../actors/siem/transport/guard.js";
import { expectSuccess, postGuarded } from "../../../actors/siem/transport/http-post.js";
import { sendBatch } from "../../../actors/siem/transport/index.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import { unreachableHost } from "../../../shared/platform/net/outbound/ssrf.js";
import { type FixtureDns, startDnsServer } from "../../fixtures/scanner/dns-server.js";

/**
 * A collector's answer is hostile input: one that paces its bytes under the idle timeout, or
 * never ends, must not hold a push (and the loop, or the shared test-event worker, waiting on
 * it) for good.
 */

let server: http.Server;
let port: number;
let dns: FixtureDns;
let network: PushNetwork;
const timers = new Set<NodeJS.Timeout>();
/** What an internal service inside a listed block might answer: never the organization's to read. */
const INTERNAL = "internal-admin-panel: db password hunter2";

beforeAll(async () => {
  dns = await startDnsServer();
  network = networkOf();
  server = http.createServer((request, response) => {
    request.resume();
    if (request.url === "/refuse") {
      response.writeHead(500, { "content-type": "text/plain" }).end(INTERNAL);
      return;
    }
    if (request.url === "/x/_bulk") {
      const items = [{ create: { _id: "1", status: 400, error: { type: "mapper_parsing_exception", reason: INTERNAL } } }];
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ errors: true, items }));
      return;
    }
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
  await dns?.stop();
});

/** OUTBOUND_ALLOW_CIDRS=127.0.0.0/8: the test collector on loopback is reached through a listed block. */
const networkOf = (isPublic?: (ip: string) => boolean) =>
  pushNetwork({
    outbound: outboundPolicy("siem", ["127.0.0.0/8"]),
    resolver: { host: dns.host, port: dns.port },
    caPem: null,
    timeoutMs: 3_000,
    hostname: "gw",
    isPublic,
  });
const post = (path: string) => postGuarded({ protocol: "http", host: "127.0.0.1", port, path }, {}, "[]", network);

const destination = (kind: "http" | "elastic_bulk", host: string, path: string): LoadedDestination => ({
  id: 1,
  orgId: 1,
  kind,
  url: `http://${host}:${port}${path}`,
  target: { protocol: "http", host, port, path },
  token: null,
  index: null,
});
const EVENT = testEvent(0, 1);
/** The DeliveryError a send throws. */
async function failure(send: Promise<unknown>): Promise<DeliveryError> {
  const error = await send.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe("a SIEM push's answer", () => {
  it("is read whole from a collector that answers", async () => {
    expect(await post("/ok")).toEqual({ status: 200, body: '{"ok":true}', isPublic: false });
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

describe("what the organization reads of a failed push", () => {
  it("a collector reached through a listed block: the status only; its words go to the log", async () => {
    const refused = await failure(sendBatch(destination("http", "127.0.0.1", "/refuse"), [EVENT], network));
    expect(refused.message).toBe("http collector answered 500");
    expect(refused.status).toBe(500);
    expect(refused.logDetail).toBe(`http collector answered 500: ${INTERNAL}`);

    const bulk = await failure(sendBatch(destination("elastic_bulk", "127.0.0.1", "/x/_bulk"), [EVENT], network));
    expect(bulk.message).toBe("Elasticsearch _bulk refused 1 of 1: 400");
    expect(bulk.logDetail).toBe(`Elasticsearch _bulk refused 1 of 1: 400 mapper_parsing_exception ${INTERNAL}`);
  });

  it("a collector at a public address: the start of its answer and the bulk reasons too", async () => {
    // The collector listens on loopback; counted public here, as one on the internet would be.
    const publicNetwork = networkOf(() => true);
    const refused = await failure(sendBatch(destination("http", "127.0.0.1", "/refuse"), [EVENT], publicNetwork));
    expect(refused.message).toBe(`http collector answered 500: ${INTERNAL}`);
    expect(refused.logDetail).toBeUndefined();
    const bulk = await failure(sendBatch(destination("elastic_bulk", "127.0.0.1", "/x/_bulk"), [EVENT], publicNetwork));
    expect(bulk.message).toBe(`Elasticsearch _bulk refused 1 of 1: 400 mapper_parsing_exception ${INTERNAL}`);
    // The answer's first 200 characters, no more.
    expect(() => expectSuccess({ status: 503, body: "x".repeat(500), isPublic: true }, "Splunk HEC")).toThrow(
      `Splunk HEC answered 503: ${"x".repeat(200)}`,
    );
  });

  it("a connection refused inside a listed block: the error's code only, never the address", async () => {
    // A closed port on loopback (reached through the listed block): Node's message names 127.0.0.1:<port>.
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const target = (kind: "http" | "syslog"): LoadedDestination =>
      kind === "http"
        ? {
            ...destination("http", "127.0.0.1", "/"),
            url: `http://127.0.0.1:${closed}/`,
            target: { protocol: "http", host: "127.0.0.1", port: closed, path: "/" },
          }
        : {
            ...destination("http", "127.0.0.1", "/"),
            kind: "syslog_tcp",
            url: `tcp://127.0.0.1:${closed}`,
            target: { protocol: "tcp", host: "127.0.0.1", port: closed, path: "" },
          };
    for (const kind of ["http", "syslog"] as const) {
      const inside = await failure(sendBatch(target(kind), [EVENT], network));
      expect(inside.message, kind).toBe("connection failed (ECONNREFUSED)");
      expect(inside.logDetail, kind).toContain(`127.0.0.1:${closed}`);
      // At a public address the organization reads Node's own message: the address is theirs.
      const outside = await failure(
        sendBatch(
          target(kind),
          [EVENT],
          networkOf(() => true),
        ),
      );
      expect(outside.message, kind).toContain(`ECONNREFUSED 127.0.0.1:${closed}`);
    }
  });

  it("public means reachable with OUTBOUND_ALLOW_CIDRS unset", () => {
    expect(["8.8.8.8", "2606:4700:4700::1111"].map(publicUnderDefault)).toEqual([true, true]);
    expect(["127.0.0.1", "10.20.30.40", "::ffff:10.0.0.1", "fd00::1", "169.254.169.254"].map(publicUnderDefault)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("a name that does not resolve and one that resolves inside read the same; why is in the log", async () => {
    // private.test resolves to 10.0.0.1, outside the listed block; nothing-here.test does not resolve.
    const inside = await failure(sendBatch(destination("http", "private.test", "/"), [EVENT], network));
    const missing = await failure(sendBatch(destination("http", "nothing-here.test", "/"), [EVENT], network));
    expect(inside.message).toBe(unreachableHost("private.test"));
    expect(missing.message).toBe(unreachableHost("nothing-here.test"));
    expect(inside.message.replace("private.test", "")).toBe(missing.message.replace("nothing-here.test", ""));
    expect(inside.logDetail).toContain("non-public address (private)");
    expect(missing.logDetail).toContain("cannot resolve nothing-here.test: nxdomain");
    const syslog = { ...destination("http", "private.test", ""), kind: "syslog_tcp" as const };
    expect((await failure(sendBatch({ ...syslog, target: { ...syslog.target, protocol: "tcp" } }, [EVENT], network))).message).toBe(
      unreachableHost("private.test"),
    );
  });
});
