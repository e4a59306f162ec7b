import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moveToDeadLetters } from "../../shared/platform/streams/dead-letters.js";
import { registerStream } from "../../shared/platform/streams/registry.js";
import { startHeartbeat } from "../../shared/platform/streams/alive.js";
import { type CliIo, runCli } from "../../ops/cli.js";
import { sha256Hex } from "../../shared/platform/crypto/hash.js";
import { createKeys } from "../../shared/platform/redis/keys.js";
import { ADMIN_TOKEN, cleanRedis, startTestGateway, type TestGateway, waitFor } from "../helpers/gateway.js";
import { startDnsServer, type TestDnsServer } from "../ingress/admin/dns-server.js";

let gw: TestGateway;
let dns: TestDnsServer;
let env: Record<string, string>;
const extraPrefixes: string[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  gw = await startTestGateway("cli", { DNS_RESOLVER: dns.resolver });
  env = { ...gw.env, SITE_URL: gw.url };
});
afterAll(async () => {
  await gw?.stop();
  await dns?.close();
  for (const prefix of extraPrefixes) await cleanRedis(prefix);
});

interface Run {
  code: number;
  out: string;
  err: string;
  json(): any;
}

function capture(signal?: AbortSignal) {
  const state = { out: "", err: "" };
  const io: CliIo = {
    stdout: { write: (s: string) => (state.out += s) },
    stderr: { write: (s: string) => (state.err += s) },
    signal,
  };
  return { io, state };
}

async function cli(argv: string[], overrides: Record<string, string | undefined> = {}): Promise<Run> {
  const { io, state } = capture();
  const code = await runCli(argv, { ...env, ...overrides }, io);
  return { code, out: state.out, err: state.err, json: () => JSON.parse(state.out) };
}

describe("command line", () => {
  it("prints the usage on --help (exit 0) and on a missing or unknown command (exit 2)", async () => {
    for (const argv of [["--help"], ["help"], ["-h"]]) {
      const r = await cli(argv);
      expect(r.code, argv.join(" ")).toBe(0);
      expect(r.out).toContain("Usage: gateway");
      for (const command of [
        "org create",
        "key create",
        "key rotate",
        "domain verify",
        "install block",
        "streams",
        "dead-letters retry",
        "snapshots rebuild",
      ]) {
        expect(r.out).toContain(`gateway ${command}`);
      }
    }
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain("Usage: gateway");
    const unknown = await cli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "frobnicate"');
    const unknownVerb = await cli(["key", "frob"]);
    expect(unknownVerb.code).toBe(2);
    expect(unknownVerb.err).toContain("gateway key suspend");
    const nounHelp = await cli(["key", "--help"]);
    expect(nounHelp.code).toBe(0);
    expect(nounHelp.out).toContain("gateway key create");
    expect(nounHelp.out).not.toContain("gateway org create");
  });

  it.each([
    [["key", "create", "--org", "1", "--name", "x", "--kind", "server", "--nmae", "y"], "unknown option --nmae"],
    [["key", "suspend", "abc"], "the key id must be a positive integer"],
    [["key", "suspend"], "the key id is required"],
    [["org", "create"], "--name is required"],
    [["org", "create", "--name"], "--name needs a value"],
    [["key", "create", "--org", "1", "--name", "x", "--kind", "root"], "--kind must be client or server"],
    [["key", "create", "--org", "1", "--name", "x", "--kind", "client"], "needs --domain"],
    [["install", "approve", "5"], "the installation is required"],
    [["streams", "extra"], "unexpected argument"],
    [["streams", "--watch=yes"], "--watch takes no value"],
    [["dead-letters", "retry", "scan"], "or pass --all"],
    [["dead-letters", "retry"], "needs the stream"],
    [["dead-letters", "list", "--count", "0"], "--count must be a positive integer"],
  ])("refuses %j with exit code 2", async (argv, message) => {
    const r = await cli(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.out).toBe("");
  });

  it("stops on a bad environment, naming the variable (exit 2)", async () => {
    const r = await cli(["org", "create", "--name", "x"], { REDIS_URL: "ftp://x" });
    expect(r.code).toBe(2);
    expect(r.err).toContain("REDIS_URL");
    const noToken = await cli(["org", "create", "--name", "x"], { ADMIN_TOKEN: undefined });
    expect(noToken.code).toBe(2);
    expect(noToken.err).toContain("ADMIN_TOKEN");
  });
});

describe("admin commands", () => {
  it("org create: human and --json", async () => {
    const human = await cli(["org", "create", "--name", "Acme Corp", "--plan", "starter"]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^Organization \d+ "Acme Corp" created\./);
    expect(human.out).toContain("starter (300,000 calls per cycle, 0 used)");
    const json = await cli(["org", "create", "--name", "Json", "--json"]);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ ok: true, org: { name: "Json", plan: "free", allowance: 1000, used: 0 } });
    const got = await cli(["org", "get", String(json.json().org.id), "--json"]);
    expect(got.json().org.name).toBe("Json");
  });

  it("reports a refusal with its reason and exit code 1, as JSON with --json", async () => {
    const human = await cli(["org", "create", "--name", "x", "--plan", "gold"]);
    expect(human.code).toBe(1);
    expect(human.err).toContain("bad_plan (HTTP 400)");
    const json = await cli(["org", "create", "--name", "x", "--plan", "gold", "--json"]);
    expect(json.code).toBe(1);
    expect(json.json()).toMatchObject({ ok: false, reason: "bad_plan" });
    const missing = await cli(["key", "get", "999999"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("not_found (HTTP 404)");
  });

  it("takes --url and --token over the environment", async () => {
    const flags = await cli(["org", "create", "--name", "Flags", "--url", gw.url, "--token", ADMIN_TOKEN, "--json"], {
      SITE_URL: "http://127.0.0.1:1",
      ADMIN_TOKEN: "wrong",
    });
    expect(flags.code).toBe(0);
    const wrong = await cli(["org", "create", "--name", "x", "--token", "wrong"]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("unauthorized (HTTP 401)");
    const down = await cli(["org", "create", "--name", "x", "--url", "http://127.0.0.1:1"]);
    expect(down.code).toBe(1);
    expect(down.err).toContain("cannot reach the admin API at http://127.0.0.1:1/admin/v1");
  });

  it("key create, suspend, resume, rotate, revoke", async () => {
    const org = (await cli(["org", "create", "--name", "Keys", "--plan", "starter", "--json"])).json().org.id;
    const created = await cli([
      "key",
      "create",
      "--org",
      String(org),
      "--name",
      "Site",
      "--kind",
      "client",
      "--domain",
      "shop.example.com",
      "--ip-allow",
      "10.0.0.0/8,192.0.2.1",
      "--countries-block",
      "KP",
      "--rate-per-minute",
      "60",
      "--trial",
    ]);
    expect(created.code).toBe(0);
    const key = /\b(ak_live_[A-Za-z0-9]+)\b/.exec(created.out)?.[1];
    expect(key).toBeDefined();
    expect(created.out).toContain("shown this once");
    expect(created.out).toContain("shop.example.com");
    const keyId = Number(/^Key (\d+)/.exec(created.out)?.[1]);
    const details = (await gw.admin("GET", `/keys/${keyId}`)).body.details;
    expect(details).toMatchObject({ ip_allow: ["10.0.0.0/8", "192.0.2.1"], countries_block: ["KP"], rate_per_minute: 60, is_trial: true });
    expect(await gw.ctx.redis.exists(gw.ctx.keys.keyIndex(sha256Hex(key ?? "")))).toBe(1);

    const server = await cli(["key", "create", "--org", String(org), "--name", "Backend", "--kind", "server", "--json"]);
    expect(server.json().key).toMatch(/^sk_live_/);

    const suspended = await cli(["key", "suspend", String(keyId)]);
    expect(suspended.out).toBe(`Key ${keyId} "Site" is now suspended.\n`);
    expect((await cli(["key", "resume", String(keyId), "--json"])).json().details.status).toBe("active");

    const rotated = await cli(["key", "rotate", String(keyId), "--json"]);
    expect(rotated.code).toBe(0);
    const fresh = rotated.json();
    expect(fresh.key).toMatch(/^ak_live_/);
    expect(fresh.key).not.toBe(key);
    expect((await gw.admin("GET", `/keys/${keyId}`)).body.details.status).toBe("revoked");

    const revoked = await cli(["key", "revoke", String(fresh.details.id)]);
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain("now revoked");
    const again = await cli(["key", "resume", String(fresh.details.id)]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("not_found");

    // Starter allows 3 live keys: "Backend" and two more; the revoked ones do not count.
    const more = [];
    for (const name of ["3", "4", "5"]) more.push(await cli(["key", "create", "--org", String(org), "--name", name, "--kind", "server"]));
    expect(more.map((r) => r.code)).toEqual([0, 0, 1]);
    expect(more[2].err).toContain("key_limit_reached (HTTP 409)");
  });

  it("domain add and verify through DNS", async () => {
    const org = String((await cli(["org", "create", "--name", "Domains", "--json"])).json().org.id);
    const added = await cli(["domain", "add", "--org", org, "--domain", "cli.example.com"]);
    expect(added.code).toBe(0);
    const record = /(_gateway-verification\.cli\.example\.com)\s+TXT\s+"([^"]+)"/.exec(added.out);
    expect(record).not.toBeNull();
    expect(added.out).toContain(`gateway domain verify --org ${org} --domain cli.example.com`);

    const early = await cli(["domain", "verify", "--org", org, "--domain", "cli.example.com"]);
    expect(early.code).toBe(1);
    expect(early.err).toContain("is not verified yet");

    dns.txt.set(record?.[1] ?? "", [record?.[2] ?? ""]);
    const verified = await cli(["domain", "verify", "--org", org, "--domain", "cli.example.com"]);
    expect(verified.code).toBe(0);
    expect(verified.out).toBe("Domain cli.example.com is verified.\n");

    const manual = await cli(["domain", "add", "--org", org, "--domain", "hand.example.com", "--verified", "--json"]);
    expect(manual.json().domain).toMatchObject({ name: "hand.example.com", verified: true });
    const duplicate = await cli(["domain", "add", "--org", org, "--domain", "hand.example.com"]);
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toContain("conflict (HTTP 409)");
  });

  it("install approve and block, with names that need encoding", async () => {
    const org = String((await cli(["org", "create", "--name", "Installs", "--json"])).json().org.id);
    const keyId = String((await cli(["key", "create", "--org", org, "--name", "k", "--kind", "server", "--json"])).json().details.id);
    const approved = await cli(["install", "approve", keyId, "ios app/1"]);
    expect(approved.code).toBe(0);
    expect(approved.out).toBe(`Installation ios app/1 of key ${keyId} is now approved.\n`);
    const blocked = await cli(["install", "block", keyId, "ios app/1", "--json"]);
    expect(blocked.json().installation).toMatchObject({ install: "ios app/1", status: "blocked" });
    const listed = await gw.admin("GET", `/keys/${keyId}/installations`);
    expect(listed.body.installations).toEqual([expect.objectContaining({ install: "ios app/1", status: "blocked" })]);
  });
});

describe("redis commands", () => {
  it("streams: every stream and group with length, pending, lag and oldest pending age", async () => {
    const { redis, keys } = gw.ctx;
    const scan = keys.stream("cli-scan");
    const quiet = keys.stream("cli-quiet");
    for (let i = 0; i < 3; i++) await redis.xadd(scan, "*", "data", JSON.stringify({ n: i }));
    await redis.xadd(quiet, "*", "data", "{}");
    // Raw XADDs play a publisher: publishers register what they make (shared/platform/streams/registry.ts).
    await registerStream(redis, keys, scan);
    await registerStream(redis, keys, quiet);
    await redis.xgroup("CREATE", scan, "scanner", "0");
    await redis.xgroup("CREATE", scan, "auditor", "$");
    await redis.xreadgroup("GROUP", "scanner", "c1", "COUNT", 2, "STREAMS", scan, ">");
    await waitFor(async () => {
      const [oldest] = (await redis.xpending(scan, "scanner", "-", "+", 1)) as [string, string, number, number][];
      return oldest !== undefined && Date.now() - Number(oldest[0].split("-")[0]) >= 5;
    }, 1000);

    const json = await cli(["streams", "--json"]);
    expect(json.code).toBe(0);
    const body = json.json();
    expect(body).toMatchObject({ ok: true, prefix: gw.prefix });
    const scanned = body.streams.find((s: { stream: string }) => s.stream === scan);
    expect(scanned).toMatchObject({ length: 3, dead_letters: 0 });
    const scanner = scanned.groups.find((g: { group: string }) => g.group === "scanner");
    expect(scanner).toMatchObject({ consumers: 1, pending: 2, lag: 1 });
    expect(scanner.oldest_pending_age_ms).toBeGreaterThanOrEqual(0);
    expect(scanner.oldest_pending_id).toMatch(/^\d+-\d+$/);
    expect(scanned.groups.find((g: { group: string }) => g.group === "auditor")).toMatchObject({
      pending: 0,
      lag: 0,
      oldest_pending_age_ms: null,
    });
    expect(body.streams.find((s: { stream: string }) => s.stream === quiet)).toMatchObject({ length: 1, groups: [] });

    const human = await cli(["streams"]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^STREAM\s+LENGTH\s+DEAD\s+GROUP\s+CONSUMERS\s+PENDING\s+LAG\s+OLDEST PENDING/);
    expect(human.out).toMatch(/stream:cli-scan\s+3\s+0\s+scanner\s+1\s+2\s+1\s+\d+(ms|s)/);
    expect(human.out).not.toContain(gw.prefix);
  });

  it("streams: the actor processes alive by their heartbeats, beside a group that counts no consumer yet", async () => {
    const { redis, keys } = gw.ctx;
    const before = await cli(["streams"]);
    expect(before.out).toContain("No actor process alive");
    const beats = [
      startHeartbeat(redis, keys, "notifier", "host-1"),
      startHeartbeat(redis, keys, "notifier", "host-2"),
      startHeartbeat(redis, keys, "outbox", "host-1"),
    ];
    const json = await waitFor(async () => {
      const body = (await cli(["streams", "--json"])).json();
      return body.actors.length === 2 ? body : undefined;
    });
    expect(json.actors).toEqual([
      { actor: "notifier", processes: ["host-1", "host-2"], last_beat_at: expect.any(String) },
      { actor: "outbox", processes: ["host-1"], last_beat_at: expect.any(String) },
    ]);
    const human = await cli(["streams"]);
    expect(human.out).toMatch(/ACTOR\s+ALIVE\s+LAST BEAT/);
    expect(human.out).toMatch(/notifier\s+2\s+\d+(ms|s) ago/);
    await beats[0].stop();
    const after = (await cli(["streams", "--json"])).json();
    expect(after.actors[0]).toMatchObject({ actor: "notifier", processes: ["host-2"] });
    for (const beat of beats.slice(1)) await beat.stop();
    expect((await cli(["streams", "--json"])).json().actors).toEqual([]);
  });

  it("says when Redis cannot be reached, without its password (exit 1)", async () => {
    const r = await cli(["streams"], { REDIS_URL: "redis://ops:hunter2@127.0.0.1:1" });
    expect(r.code).toBe(1);
    expect(r.err).toContain("cannot reach Redis at 127.0.0.1:1");
    expect(r.err).not.toContain("hunter2");
  });

  it("streams --watch refreshes until stopped", async () => {
    const controller = new AbortController();
    const { io, state } = capture(controller.signal);
    const running = runCli(["streams", "--watch", "--json"], env, io);
    await waitFor(() => state.out.split("\n").filter(Boolean).length >= 2, 6000);
    controller.abort();
    expect(await running).toBe(0);
    const documents = state.out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(documents.length).toBeGreaterThanOrEqual(2);
    expect(Date.parse(documents[1].at) - Date.parse(documents[0].at)).toBeGreaterThanOrEqual(1900);

    const human = capture(AbortSignal.abort());
    expect(await runCli(["streams", "--watch"], env, human.io)).toBe(0);
    expect(human.state.out).toContain("Every 2s");
  }, 15_000);

  it("dead-letters list and retry", async () => {
    const { redis, keys, clock } = gw.ctx;
    const stream = keys.stream("cli-jobs");
    await redis.xgroup("CREATE", stream, "worker", "0", "MKSTREAM");
    await registerStream(redis, keys, stream);
    const payloads = ['{"job":1}', '{"job":2}', '{"job":3}'];
    for (const data of payloads) await redis.xadd(stream, "*", "data", data);
    const read = (await redis.xreadgroup("GROUP", "worker", "w1", "COUNT", 3, "STREAMS", stream, ">")) as [string, [string, string[]][]][];
    for (const [id, fields] of read[0][1]) {
      await moveToDeadLetters(
        redis,
        keys,
        {
          stream,
          id,
          group: "worker",
          consumer: "w1",
          reason: "permanent",
          error: "boom",
          attempts: 3,
          data: fields[1],
          at: clock.now(),
        },
        1000,
      );
    }

    const all = await cli(["dead-letters", "list", "--json"]);
    expect(all.code).toBe(0);
    const letters = all.json().dead_letters.filter((l: { stream: string }) => l.stream === stream);
    expect(letters.map((l: { data: string }) => l.data)).toEqual(payloads);
    expect(letters[0]).toMatchObject({ group: "worker", consumer: "w1", reason: "permanent", error: "boom", attempts: 3 });
    expect(letters[0].at).toMatch(/Z$/);

    const human = await cli(["dead-letters", "list", "stream:cli-jobs"]);
    expect(human.out).toMatch(/^STREAM\s+DEAD ID\s+GROUP\s+REASON/);
    expect(human.out).toContain('{"job":2}');
    const unknown = await cli(["dead-letters", "list", "no-such-stream"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("no stream");

    const one = await cli(["dead-letters", "retry", "cli-jobs", letters[0].dead_id]);
    expect(one.code).toBe(0);
    expect(one.out).toContain("Retried 1 dead letter of stream:cli-jobs.");
    const missing = await cli(["dead-letters", "retry", `${stream}:dead`, letters[0].dead_id, "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.json()).toMatchObject({ ok: false, retried: [], not_found: [letters[0].dead_id] });

    const rest = await cli(["dead-letters", "retry", stream, "--all", "--json"]);
    expect(rest.json().retried).toHaveLength(2);
    expect(await redis.xlen(keys.deadLetters(stream))).toBe(0);
    // Back on the original stream, byte for byte, addressed to the group that failed them.
    const entries = (await redis.xrange(stream, "-", "+")) as [string, string[]][];
    const retried = entries.slice(3).map(([, fields]) => fields);
    expect(retried.map((f) => f[f.indexOf("data") + 1])).toEqual(payloads);
    for (const fields of retried) expect(fields[fields.indexOf("group") + 1]).toBe("worker");
    expect((await cli(["dead-letters", "list", "cli-jobs"])).out).toContain("No dead letters");
  });

  it("snapshots rebuild: deleting the sentinel makes the running gateway rebuild", async () => {
    const org = (await gw.admin("POST", "/orgs", { name: "Snap", plan: "starter" })).body.org.id;
    const key = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "k", kind: "server" })).body;
    await gw.ctx.redis.del(gw.ctx.keys.keySnapshot(org, key.details.id));
    const r = await cli(["snapshots", "rebuild"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("sentinel deleted");
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.snapshotSentinel())) === 1, 5000);
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.keySnapshot(org, key.details.id))) === 1, 5000);
  });

  it("snapshots rebuild --now rebuilds from the command line itself", async () => {
    // A prefix no gateway watches: only the command can fill it.
    const prefix = `t:clinow:${randomBytes(4).toString("hex")}:`;
    extraPrefixes.push(prefix);
    const keys = createKeys(prefix);
    const org = (await gw.admin("POST", "/orgs", { name: "Now", plan: "starter" })).body.org.id;
    const key = (await gw.admin("POST", `/orgs/${org}/keys`, { name: "k", kind: "server" })).body;
    const r = await cli(["snapshots", "rebuild", "--now", "--json"], { REDIS_PREFIX: prefix });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, orgs: expect.any(Number), keys: expect.any(Number) });
    expect(r.json().keys).toBeGreaterThanOrEqual(1);
    expect(await gw.ctx.redis.exists(keys.snapshotSentinel())).toBe(1);
    expect(await gw.ctx.redis.get(keys.keyIndex(sha256Hex(key.key)))).toBe(`${org}:${key.details.id}`);
    const human = await cli(["snapshots", "rebuild", "--now"], { REDIS_PREFIX: prefix });
    expect(human.out).toMatch(/^Rebuilt the snapshots of \d+ organizations and \d+ keys in \d+ ms\.\n$/);
  });
});
