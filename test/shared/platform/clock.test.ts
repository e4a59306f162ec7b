import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock, sharedTestClock, systemClock, type SharedTestClock } from "../../../shared/platform/clock.js";
import { sourcePath } from "../../../shared/platform/paths.js";
import { createRedis, type Redis } from "../../../shared/platform/redis/client.js";
import { createKeys } from "../../../shared/platform/redis/keys.js";
import { createTestDatabase } from "../../helpers/database.js";
import { ADMIN_TOKEN, cleanRedis, TEST_SECRET, waitFor } from "../../helpers/gateway.js";

describe("system and manual clocks", () => {
  it("the system clock is the wall clock", () => {
    const clock = systemClock();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
    expect(clock.nowSeconds()).toBe(Math.floor(clock.now() / 1000));
  });

  it("the manual clock moves only by hand and tells its listeners", () => {
    const clock = manualClock(1_000_000);
    let moves = 0;
    const off = clock.onMove(() => moves++);
    clock.advance(1500);
    expect(clock.now()).toBe(1_001_500);
    expect(clock.nowSeconds()).toBe(1001);
    off();
    clock.set(5_000);
    expect(clock.now()).toBe(5_000);
    expect(moves).toBe(1);
  });
});

/**
 * The child runs the built code (dist/), as a separate gateway process would. Rebuilt
 * here when the sources are newer, so the test never exercises a stale clock.
 */
function sources(dir: string): string[] {
  return readdirSync(sourcePath(dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => join(dir, f));
}

async function ensureBuilt(): Promise<void> {
  const stale = ["shared", "ingress", "ops", "actors"].flatMap(sources).some((file) => {
    const built = sourcePath("dist", file.replace(/\.ts$/, ".js"));
    return !existsSync(built) || statSync(built).mtimeMs < statSync(sourcePath(file)).mtimeMs;
  });
  if (!stale) return;
  // tsc still emits when unrelated files in the tree do not type-check; only the output matters here.
  await promisify(execFile)(process.execPath, [
    sourcePath("node_modules", "typescript", "bin", "tsc"),
    "-p",
    sourcePath("tsconfig.json"),
  ]).catch(() => {});
  if (!existsSync(sourcePath("dist", "shared", "platform", "clock.js")))
    throw new Error("npm run build did not produce dist/shared/platform/clock.js");
}

const CHILD = `
import { createInterface } from "node:readline";
const dist = (p) => new URL(p, process.env.DIST_URL).href;
const { sharedTestClock } = await import(dist("shared/platform/clock.js"));
const { createRedis } = await import(dist("shared/platform/redis/client.js"));
const { createKeys } = await import(dist("shared/platform/redis/keys.js"));
const redis = createRedis("redis://127.0.0.1:6379", "clock-child");
const clock = await sharedTestClock(redis, createKeys(process.env.PREFIX));
clock.onMove(() => console.log("moved " + clock.nowSeconds()));
console.log("ready " + clock.nowSeconds());
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.split(" ");
  if (command === "advance") console.log("advanced " + (await clock.advance(Number(arg))));
  if (command === "stop") break;
}
await clock.stop();
redis.disconnect();
process.stdin.destroy();
`;

interface Child {
  process: ChildProcessWithoutNullStreams;
  lines: string[];
  latest(kind: string): number | null;
  send(line: string): void;
}

function startChild(prefix: string): Child {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
    env: { ...process.env, PREFIX: prefix, DIST_URL: `${pathToFileURL(sourcePath("dist")).href}/` },
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
  child.stderr.on("data", (chunk: Buffer) => lines.push(`stderr ${chunk.toString()}`));
  return {
    process: child,
    lines,
    latest(kind) {
      for (let i = lines.length - 1; i >= 0; i--) {
        const [k, v] = lines[i].split(" ");
        if (k === kind) return Number(v);
      }
      return null;
    },
    send: (line) => child.stdin.write(`${line}\n`),
  };
}

describe("shared test clock across connections and processes", () => {
  const prefix = `t:clock:${randomBytes(4).toString("hex")}:`;
  const keys = createKeys(prefix);
  const connections: Redis[] = [];
  const clocks: SharedTestClock[] = [];
  let child: Child;

  const open = async () => {
    const redis = createRedis("redis://127.0.0.1:6379", "clock-test");
    connections.push(redis);
    const clock = await sharedTestClock(redis, keys);
    clocks.push(clock);
    return clock;
  };

  beforeAll(async () => {
    await ensureBuilt();
    child = startChild(prefix);
    await waitFor(() => child.latest("ready") !== null || child.lines.some((l) => l.startsWith("stderr")), 10_000);
    expect(child.lines.filter((l) => l.startsWith("stderr"))).toEqual([]);
  });

  afterAll(async () => {
    if (child && child.process.exitCode === null) {
      const exited = new Promise((resolve) => child.process.once("exit", resolve));
      child.send("stop");
      child.process.stdin.end();
      const timer = setTimeout(() => child.process.kill(), 5000);
      await exited;
      clearTimeout(timer);
      expect(child.process.exitCode).toBe(0);
    }
    for (const clock of clocks) await clock.stop();
    for (const redis of connections) redis.disconnect();
    await cleanRedis(prefix);
  });

  it("an advance in one process is seen by the others within a second, and back", async () => {
    const a = await open();
    const b = await open();
    let bMoves = 0;
    b.onMove(() => bMoves++);
    const start = a.nowSeconds();

    await a.advance(3600);
    await waitFor(() => b.nowSeconds() >= start + 3600, 1000);
    await waitFor(() => (child.latest("moved") ?? 0) >= start + 3600, 1000);
    expect(bMoves).toBe(1);

    child.send("advance 7200");
    await waitFor(() => child.latest("advanced") !== null, 1000);
    await waitFor(() => a.nowSeconds() >= start + 10_800 && b.nowSeconds() >= start + 10_800, 1000);
    expect(a.nowSeconds() - start).toBeLessThan(10_800 + 5);
  });

  it("a clock opened later starts from the moved time", async () => {
    const first = clocks[0];
    const late = await open();
    expect(Math.abs(late.now() - first.now())).toBeLessThan(1000);
    expect(late.now() - Date.now()).toBeGreaterThanOrEqual(10_800_000 - 1000);
  });

  it("follows a move whose message was lost, through the poll", async () => {
    const a = clocks[0];
    const offset = Number(await connections[0].get(keys.clockOffset()));
    // Written without PUBLISH: only the one-second poll can notice it.
    await connections[0].set(keys.clockOffset(), String(offset + 60_000));
    await waitFor(() => a.now() - Date.now() >= offset + 60_000 - 50, 3000);
    await waitFor(() => (child.latest("moved") ?? 0) >= Math.floor((Date.now() + offset + 60_000) / 1000) - 2, 3000);
  });

  it("never runs backwards, even when Redis forgets the offset", async () => {
    const [a, b] = clocks;
    const before = a.now();
    await connections[0].del(keys.clockOffset());
    await b.advance(1);
    await waitFor(() => a.now() >= before + 1000, 1000);
    expect(Number(await connections[0].get(keys.clockOffset()))).toBeGreaterThan(10_800_000);
  });
});

describe("test clock of the built ingress process", () => {
  const prefix = `t:clockproc:${randomBytes(4).toString("hex")}:`;
  const keys = createKeys(prefix);
  let redis: Redis;
  let clock: SharedTestClock;
  let ingress: ChildProcessWithoutNullStreams | null = null;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let url = "";
  const output: string[] = [];

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { ok: boolean; now?: number } };
  };

  beforeAll(async () => {
    await ensureBuilt();
    database = await createTestDatabase("clockproc");
    ingress = spawn(process.execPath, [sourcePath("dist", "ops", "start.js"), "ingress"], {
      env: {
        ...process.env,
        PORT: "0",
        HOST: "127.0.0.1",
        REDIS_PREFIX: prefix,
        DATABASE_URL: database.url,
        ADMIN_TOKEN,
        GATEWAY_SECRET: TEST_SECRET,
        GATEWAY_TEST_CLOCK: "1",
        LOG_LEVEL: "silent",
      },
    });
    const child = ingress;
    createInterface({ input: child.stdout }).on("line", (line) => output.push(line));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const listening = await waitFor(() => {
      if (child.exitCode !== null) throw new Error(`ingress exited ${child.exitCode}: ${output.join("\n")}`);
      return output.map((l) => /listening on (http:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
    }, 15_000);
    url = listening ?? "";
    redis = createRedis("redis://127.0.0.1:6379", "clock-proc-test");
    clock = await sharedTestClock(redis, keys);
  }, 30_000);

  afterAll(async () => {
    const child = ingress;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 8000);
      await exited;
      clearTimeout(timer);
    }
    await clock?.stop();
    redis?.disconnect();
    await cleanRedis(prefix);
    await database?.drop();
  });

  it("an advance through the ingress's admin API reaches another process within a second, and back", async () => {
    const start = clock.nowSeconds();
    const moved = await admin("POST", "/clock", { advance_s: 86_400 });
    expect(moved.status).toBe(200);
    expect(moved.body.now).toBeGreaterThanOrEqual(start + 86_400);
    await waitFor(() => clock.nowSeconds() >= start + 86_400, 1000);

    await clock.advance(3600);
    await waitFor(async () => ((await admin("GET", "/clock")).body.now ?? 0) >= start + 90_000, 1000);
  });
});
