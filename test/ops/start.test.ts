import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { getPriority, userInfo } from "node:os";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../ops/cli.js";
import { cleanRedis, waitFor } from "../helpers/gateway.js";

/** The whole tree as an operator starts it: `npm start`'s own command (what it runs after building). */

const startScript = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts.start;

const user = process.env.PGUSER || userInfo().username;
const database = `gwtest_start_${randomBytes(4).toString("hex")}`;
const prefix = `t:start:${randomBytes(4).toString("hex")}:`;
let supervisor: ChildProcess | null = null;
let output = "";

afterAll(async () => {
  supervisor?.kill("SIGKILL");
  await cleanRedis(prefix);
  const client = new pg.Client({ connectionString: `postgres://${user}@127.0.0.1:5432/postgres` });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await client.end();
});

const line = (pattern: RegExp) => pattern.exec(output)?.[1];

const demoEnv = (fresh: NodeJS.ProcessEnv): Record<string, string> => ({
  ...(fresh as Record<string, string>),
  PORT: "0",
  METRICS_PORT: "0",
  REDIS_PREFIX: prefix,
  DATABASE_URL: `postgres://${user}@127.0.0.1:5432/${database}`,
  ADMIN_TOKEN: "",
  GATEWAY_SECRET: "",
  GATEWAY_TEST_CLOCK: "",
  LOG_LEVEL: "info",
  INGRESS_PROCESSES: "2",
});

describe("npm start (supervisor)", () => {
  it("creates the database, seeds and prints the demo keys and admin token, serves, restarts a crashed child, stops on SIGTERM, leaves no child when killed", async () => {
    const { GATEWAY_ENV: _unset, ...fresh } = process.env;
    // `npm install && npm start` on a fresh machine: no GATEWAY_ENV, no GATEWAY_SECRET.
    supervisor = spawn("sh", ["-c", startScript], { env: demoEnv(fresh), stdio: ["ignore", "pipe", "pipe"] });
    supervisor.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    supervisor.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));

    const url = await waitFor(() => line(/listening on (http:\/\/[^\s]+)/), 45_000);
    expect(output).toContain(`created database ${database}`);
    const token = line(/ADMIN_TOKEN=(\S+)/);
    // Demo mode is a development environment: test-prefixed keys, a stored development secret.
    const clientKey = line(/client key: (ak_test_\S+)/);
    const serverKey = line(/server key: (sk_test_\S+)/);
    expect(token && clientKey && serverKey).toBeTruthy();

    await waitFor(async () => (await fetch(`${url}/healthz`)).status === 200, 10_000);
    // Two ingress processes share the one port.
    await waitFor(() => output.split(`listening on ${url}`).length - 1 === 2, 10_000);
    expect([...output.matchAll(/"role":"ingress","pid":(\d+)/g)]).toHaveLength(2);
    const verified = await (
      await fetch(`${url}/api/v1/verify.php`, { method: "POST", body: JSON.stringify({ key: clientKey, domain: "demo.example" }) })
    ).json();
    expect(verified).toMatchObject({ authorized: true, reason: "ok" });
    const org = await fetch(`${url}/admin/v1/orgs/1`, { headers: { authorization: `Bearer ${token}` } });
    expect(org.status).toBe(200);
    // The demo owner's way in to the dashboard: an invitation that registers a passkey.
    const invitation = line(/demo owner \(owner@demo\.example\) signs in at: \S+\/dashboard\/invitation#token=(\S+)/);
    expect(invitation).toBeTruthy();
    const invited = await fetch(`${url}/admin/v1/auth/invitation/accept/options`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: invitation }),
    });
    expect(invited.status).toBe(200);
    expect(((await invited.json()) as { member: { email: string } }).member.email).toBe("owner@demo.example");

    // Actors run at a lower CPU priority than the ingress (ACTOR_NICE, 10 by default), all but
    // the prober, which times the service's answers (ops/priority.ts).
    const pidOf = (role: string) => Number(new RegExp(`"role":"${role}","pid":(\\d+)`).exec(output)?.[1]);
    const base = getPriority();
    for (const role of ["actor usage", "actor scanner", "actor siem"]) {
      expect(pidOf(role), role).toBeGreaterThan(0);
      await waitFor(() => getPriority(pidOf(role)) === Math.max(base, 10), 15_000);
    }
    expect(getPriority(pidOf("actor prober"))).toBe(base);
    expect(getPriority(pidOf("ingress"))).toBe(base);

    // A crashed ingress is restarted by the supervisor (same port: PORT=0 picks a new one, so wait for a new line).
    const ingressPid = Number(/"role":"ingress","pid":(\d+)/.exec(output)?.[1]);
    expect(ingressPid).toBeGreaterThan(0);
    const listeningBefore = output.split("listening on").length;
    process.kill(ingressPid, "SIGKILL");
    await waitFor(() => output.split("listening on").length > listeningBefore, 15_000);
    expect(output).toContain("child exited; restarting");

    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => supervisor?.once("exit", (code) => resolve(code)));
    supervisor.kill("SIGTERM");
    const code = await exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(code).toBe(0);
    supervisor = null;

    // Demo mode keeps its admin token across restarts, and `gateway admin-token` prints it.
    output = "";
    supervisor = spawn("sh", ["-c", startScript], { env: demoEnv(fresh), stdio: ["ignore", "pipe", "pipe"] });
    supervisor.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    supervisor.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await waitFor(() => line(/ADMIN_TOKEN=(\S+)/), 45_000)).toBe(token);
    const printed = { out: "", err: "" };
    const io = { stdout: { write: (t: string) => (printed.out += t) }, stderr: { write: (t: string) => (printed.err += t) } };
    expect(await runCli(["admin-token"], demoEnv(fresh), io)).toBe(0);
    expect(printed.out.trim()).toBe(token);
    expect(await runCli(["admin-token"], { ...demoEnv(fresh), ADMIN_TOKEN: "set-by-the-operator" }, io)).toBe(1);

    // A supervisor killed outright leaves no child behind: each stops when its IPC channel closes.
    await waitFor(() => output.split("listening on").length - 1 === 2, 45_000);
    const childPids = [...output.matchAll(/"role":"[^"]+","pid":(\d+)/g)].map((m) => Number(m[1]));
    expect(childPids.length).toBeGreaterThanOrEqual(3);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    supervisor.kill("SIGKILL");
    await new Promise((resolve) => supervisor?.once("exit", resolve));
    supervisor = null;
    await waitFor(() => childPids.every((pid) => !alive(pid)), 25_000);
  }, 150_000);

  it("refuses to start in production without GATEWAY_SECRET, naming it, before touching anything", async () => {
    for (const role of [[], ["ingress"], ["actor", "usage"]]) {
      const child = spawn(process.execPath, ["dist/ops/start.js", ...role], {
        env: { ...process.env, GATEWAY_ENV: "production", GATEWAY_SECRET: "", PORT: "0", DATABASE_URL: "postgres://127.0.0.1:1/none" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect([role.join(" "), code]).toEqual([role.join(" "), 78]);
      expect(err).toContain("GATEWAY_SECRET");
      expect(err).toContain("GATEWAY_ENV=production");
    }
  });

  it("a bad configuration value stops start-up naming the variable", async () => {
    const child = spawn(process.execPath, ["dist/ops/start.js"], {
      env: { ...process.env, PORT: "eighty" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(err).toContain("PORT");
  });
});
