import { readFile } from "node:fs/promises";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedClientKey, startFaultGateway, type FaultGateway } from "./gateway.js";
import { liveHeapAfterFullGc } from "./inspect.js";
import { privatePostgres, privateRedis, type PrivatePostgres, type PrivateRedis } from "./services.js";

/**
 * Hostile clients against the ingress process (docs/operations.md "Hostile clients"):
 * slowloris, aborted bodies, 10 000 connections at once, a 2 MB body, malformed JSON and
 * forms, header floods. No crash, no 5xx for bad input, good clients still answered, the
 * ingress's live heap (after a full collection) after a soak within 10% of before it and its
 * RSS within 25% (steady state: measured after one warm-up round of every case). Pipelining and Content-Length handling are
 * tested with the ingress's HTTP parser (test/ingress), not here.
 */

let redis: PrivateRedis;
let postgres: PrivatePostgres;
let gw: FaultGateway;
let port: number;
let body: string;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([privateRedis(), privatePostgres()]);
  // The inspector lets the test force a full collection and read the live heap (inspect.ts).
  gw = await startFaultGateway(redis, postgres, ["usage"], { NODE_OPTIONS: "--inspect=127.0.0.1:0" });
  port = Number(new URL(gw.url).port);
  const seeded = await seedClientKey(gw);
  body = JSON.stringify({ key: seeded.key, domain: "faults.example" });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([redis?.stop(), postgres?.stop()]);
});

/**
 * RSS at rest: the smallest of several samples taken while a few good calls run, so a
 * garbage collection that has not happened yet after a burst is not counted as growth.
 */
async function restingRssKb(): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 8; i++) {
    await Promise.all(Array.from({ length: 20 }, goodCall));
    least = Math.min(least, await rssKb());
    await new Promise((r) => setTimeout(r, 250));
  }
  return least;
}

/** The ingress's live heap after a full collection, through its inspector (inspect.ts). */
async function liveHeap(): Promise<number> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(gw.roles.get("ingress")?.output() ?? "")?.[1];
  if (!url) throw new Error("the ingress printed no inspector address");
  return liveHeapAfterFullGc(url);
}

async function rssKb(): Promise<number> {
  const pid = gw.roles.get("ingress")?.process.pid;
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

/** One raw request on its own connection; the status code of the answer, or 0 when the server closed without one. */
function raw(request: string | Buffer, timeoutMs = 20_000): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let seen = "";
    const done = (status: number) => {
      socket.destroy();
      resolve(status);
    };
    socket.setTimeout(timeoutMs, () => done(-1));
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(seen);
      if (match) done(Number(match[1]));
    });
    socket.on("error", () => done(0));
    socket.on("close", () => done(0));
    // write, not end: uWS takes a half-closed connection for an aborted one and drops its answer.
    socket.write(request);
  });
}

const verifyRequest = (payload: string, type = "application/json") =>
  `POST /api/v1/verify.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`;

async function goodCall(): Promise<number> {
  const response = await fetch(`${gw.url}/api/v1/verify.php`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const parsed = (await response.json()) as { authorized?: boolean };
  return response.status === 200 && parsed.authorized === true ? 200 : response.status;
}

/** Opens `n` connections that send half a request and then nothing; returns a function closing them. */
async function slowloris(n: number): Promise<() => void> {
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect(port, "127.0.0.1", () => {
            socket.write("POST /api/v1/verify.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: ");
            resolve(socket);
          });
          socket.on("error", () => resolve(socket));
        }),
    ),
  );
  return () => {
    for (const s of sockets) s.destroy();
  };
}

/** Headers and part of a declared body, then the client goes away. */
function abortMidBody(): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(
        `POST /api/v1/verify.php HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"key":"ak_`,
      );
      setImmediate(() => {
        socket.destroy();
        resolve();
      });
    });
    socket.on("error", () => resolve());
  });
}

/** `n` connections open at once, each sending one good verify request; the status codes. */
async function concurrent(n: number): Promise<number[]> {
  const sockets: net.Socket[] = [];
  const statuses: Promise<number>[] = [];
  for (let i = 0; i < n; i++) {
    statuses.push(
      new Promise((resolve) => {
        const socket = net.connect(port, "127.0.0.1");
        sockets.push(socket);
        let seen = "";
        socket.setTimeout(60_000, () => resolve(-1));
        socket.on("data", (c: Buffer) => {
          seen += c.toString("latin1");
          const match = /^HTTP\/1\.[01] (\d{3})/.exec(seen);
          if (match) resolve(Number(match[1]));
        });
        socket.on("error", () => resolve(0));
        socket.on("close", () => resolve(0));
      }),
    );
  }
  // All connected before any sends: the connections are concurrent, not sequential.
  await Promise.all(
    sockets.map((s) =>
      s.connecting
        ? new Promise((r) => {
            s.once("connect", r);
            s.once("error", r);
          })
        : null,
    ),
  );
  for (const socket of sockets) socket.write(verifyRequest(body).replace("Connection: close", "Connection: keep-alive"));
  const result = await Promise.all(statuses);
  for (const socket of sockets) socket.destroy();
  return result;
}

const bigHeaders = () =>
  `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 2_000 }, (_, i) => `X-Flood-${i}: ${"v".repeat(20)}\r\n`).join("")}\r\n`;
const longHeader = () => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: ${"a".repeat(256 * 1024)}\r\n\r\n`;

/** Every hostile case once; the answers the bad inputs got. */
async function hostileRound(): Promise<Record<string, number[]>> {
  const close = await slowloris(500);
  // Good clients are answered while 500 slow ones hold connections.
  const whileSlow = await Promise.all(Array.from({ length: 50 }, goodCall));
  await Promise.all(Array.from({ length: 200 }, abortMidBody));
  const answers: Record<string, number[]> = {
    whileSlow,
    big: [await raw(verifyRequest(JSON.stringify({ key: "x".repeat(2 * 1024 * 1024), domain: "a.example" })))],
    json: await Promise.all(
      ['{"key":', "[1,2", "\u0000\u0001", '{"key":"a","domain":{}}', "null", '"str"', "{".repeat(10_000)].map((p) => raw(verifyRequest(p))),
    ),
    form: await Promise.all(
      ["key=%ZZ&domain=a", "key", "&&&&=", "key=a&key=b&domain=c", "%".repeat(5000)].map((p) =>
        raw(verifyRequest(p, "application/x-www-form-urlencoded")),
      ),
    ),
    headers: await Promise.all([
      raw(bigHeaders()),
      raw(longHeader()),
      raw("GARBAGE\r\n\r\n"),
      raw(`POST /api/v1/verify.php HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`),
    ]),
  };
  close();
  return answers;
}

describe("hostile clients", () => {
  it("no crash, no 5xx for bad input, good clients answered, live heap after a soak within 10%", async () => {
    // Warm-up: one round of everything and 10 000 concurrent connections.
    const first = await hostileRound();
    expect(first.whileSlow.every((s) => s === 200)).toBe(true);
    for (const [name, statuses] of Object.entries(first)) {
      // Bad input: a 4xx answer or a closed connection, never a 5xx or a hang.
      for (const status of statuses)
        expect(status, `${name}: ${statuses.join(",")}`).toSatisfy((s: number) => s === 0 || (s >= 200 && s < 500));
    }
    expect(first.big[0], "2 MB body").toBe(413);
    // Malformed input is refused with a 4xx (401 for a well-formed but unknown key), never dropped.
    for (const status of [...first.json, ...first.form]) expect(status >= 400 && status < 500, String(status)).toBe(true);
    const tenThousand = await concurrent(10_000);
    expect(tenThousand.filter((s) => s !== 200).slice(0, 5)).toEqual([]);
    expect(await goodCall()).toBe(200);
    // Memory: the resting RSS after each of four more rounds. A single reading moves by a third
    // either way with the garbage collector's timing (measured: +30% and -39% between runs), so
    // the check compares the lower reading of the last two rounds with the lower of the first
    // two: a leak raises every reading, GC timing only some. The margin is 25%: on a loaded
    // 2-core machine the lower readings still moved by 11.5% with no leak, while a leak of
    // 2 KB per connection (21 600 connections between the pairs) adds over 40 MB.
    const resting: number[] = [];
    const live: number[] = [];
    for (let round = 0; round < 4; round++) {
      const answers = await hostileRound();
      expect(answers.whileSlow.every((s) => s === 200)).toBe(true);
      for (const statuses of Object.values(answers)) for (const s of statuses) expect(s === 0 || (s >= 200 && s < 500)).toBe(true);
      const all = await concurrent(10_000);
      expect(all.filter((s) => s !== 200).slice(0, 5)).toEqual([]);
      resting.push(await restingRssKb());
      live.push(await liveHeap());
    }
    const before = Math.min(resting[0], resting[1]);
    const after = Math.min(resting[2], resting[3]);
    process.stdout.write(`ingress resting RSS per round: ${resting.join(", ")} kB (${(((after - before) / before) * 100).toFixed(1)}%)\n`);
    expect(after).toBeLessThanOrEqual(before * 1.25);
    // The leak signal proper: the JavaScript heap a full collection leaves (what is still
    // reachable) after the last round within 10% of after the first of these rounds.
    process.stdout.write(`ingress live heap after a full GC per round: ${live.map((b) => Math.round(b / 1024)).join(", ")} kB\n`);
    expect(live[3]).toBeLessThanOrEqual(live[0] * 1.1);
    expect(gw.roles.get("ingress")?.process.exitCode).toBeNull();
    expect(await goodCall()).toBe(200);
  }, 300_000);
});
