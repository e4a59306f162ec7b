import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIngress, type RunningIngress } from "../../ingress/main.js";
import { type CliIo, runCli } from "../../ops/cli.js";
import { loadConfig } from "../../shared/platform/config.js";
import { openContext, type Context } from "../../shared/platform/context.js";
import { seal, unseal } from "../../shared/platform/crypto/seal.js";
import { secretAad } from "../../shared/verify/db/content.js";
import { silentLogger } from "../../shared/platform/log.js";
import { startTestGateway, TEST_SECRET, type TestGateway, waitFor } from "../helpers/gateway.js";

let gw: TestGateway;
let env: Record<string, string>;
let orgs: number[];
let serverKey: string;
const OLD = Buffer.from(TEST_SECRET, "hex");
const NEW = randomBytes(48);

beforeAll(async () => {
  gw = await startTestGateway("reseal");
  env = { ...gw.env, SITE_URL: gw.url };
  orgs = [];
  for (const name of ["A", "B"]) {
    const org = await gw.admin("POST", "/orgs", { name, plan: "starter" });
    orgs.push(org.body.org.id);
  }
  for (const [i, orgId] of orgs.entries()) {
    for (const name of ["db_password", "api_token"]) {
      expect((await gw.admin("PUT", `/orgs/${orgId}/secrets/${name}`, { value: `${name}-of-${i}` })).status).toBe(200);
    }
  }
  const key = await gw.admin("POST", `/orgs/${orgs[0]}/keys`, { name: "Backend", kind: "server", ip_allow: ["127.0.0.1"] });
  serverKey = key.body.key;
  // Sealed columns of the other tables: one webhook secret, one SIEM destination with a token and one without.
  const now = new Date();
  const hook = await gw.ctx.db.query<{ id: string }>(
    "INSERT INTO webhooks (org_id, url, secret_sealed, created_at) VALUES ($1, 'https://hooks.example.com/x', '\\x00', $2) RETURNING id::text",
    [orgs[1], now],
  );
  await gw.ctx.db.query("UPDATE webhooks SET secret_sealed = $1 WHERE id = $2", [
    seal(OLD, "whsec_123", `webhook:${orgs[1]}:${hook.rows[0].id}`),
    hook.rows[0].id,
  ]);
  const siem = await gw.ctx.db.query<{ id: string }>(
    "INSERT INTO siem_destinations (org_id, kind, url, created_at) VALUES ($1, 'splunk_hec', 'https://splunk.example.com', $2), ($1, 'http', 'https://logs.example.com', $2) RETURNING id::text",
    [orgs[0], now],
  );
  await gw.ctx.db.query("UPDATE siem_destinations SET token_sealed = $1 WHERE id = $2", [
    seal(OLD, "hec-token", `siem:${orgs[0]}:${siem.rows[0].id}`),
    siem.rows[0].id,
  ]);
});
afterAll(async () => {
  await gw?.stop();
});

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const state = { out: "", err: "" };
  const io: CliIo = { stdout: { write: (s: string) => (state.out += s) }, stderr: { write: (s: string) => (state.err += s) } };
  const code = await runCli(argv, env, io);
  return { code, ...state };
}

async function sealedRows(): Promise<{ where: string; aad: string; sealed: Buffer }[]> {
  const secrets = await gw.ctx.db.query<{ org_id: number; name: string; sealed: Buffer }>(
    "SELECT org_id, name, sealed FROM secrets ORDER BY org_id, name",
  );
  const hooks = await gw.ctx.db.query<{ org_id: number; id: string; secret_sealed: Buffer }>(
    "SELECT org_id, id::text, secret_sealed FROM webhooks",
  );
  const siem = await gw.ctx.db.query<{ org_id: number; id: string; token_sealed: Buffer }>(
    "SELECT org_id, id::text, token_sealed FROM siem_destinations WHERE token_sealed IS NOT NULL",
  );
  return [
    ...secrets.rows.map((r) => ({ where: `secret ${r.org_id}/${r.name}`, aad: secretAad(r.org_id, r.name), sealed: r.sealed })),
    ...hooks.rows.map((r) => ({ where: `webhook ${r.id}`, aad: `webhook:${r.org_id}:${r.id}`, sealed: r.secret_sealed })),
    ...siem.rows.map((r) => ({ where: `siem ${r.id}`, aad: `siem:${r.org_id}:${r.id}`, sealed: r.token_sealed })),
  ];
}

function opens(master: Buffer, sealed: Buffer, aad: string): string | null {
  try {
    return unseal(master, sealed, aad);
  } catch {
    return null;
  }
}

const askSecret = (url: string, name: string) =>
  fetch(`${url}/api/v1/secret.php`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key: serverKey, name }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

describe("gateway secrets reseal", () => {
  it("refuses a wrong command line (exit 2) and changes nothing", async () => {
    const before = await sealedRows();
    for (const argv of [
      ["secrets", "reseal", "--old", TEST_SECRET],
      ["secrets", "reseal", "--new", NEW.toString("hex")],
      ["secrets", "reseal", "--old", "abcd", "--new", NEW.toString("hex")],
      ["secrets", "reseal", "--old", TEST_SECRET, "--new", "not a secret!"],
      ["secrets", "reseal", "--old", TEST_SECRET, "--new", OLD.toString("base64")],
    ]) {
      const r = await cli(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toMatch(/^error: /);
    }
    expect(await sealedRows()).toEqual(before);
    const help = await cli(["--help"]);
    expect(help.out).toContain("gateway secrets reseal --old SECRET --new SECRET");
  });

  it("reads a weak --old (replacing one is what the command is for) and refuses a weak --new", async () => {
    const before = await sealedRows();
    const weakNew = await cli(["secrets", "reseal", "--old", TEST_SECRET, "--new", "0".repeat(64)]);
    expect([weakNew.code, weakNew.err]).toEqual([2, expect.stringMatching(/^error: --new: not a random secret/)]);
    // A weak --old is read: the rows here were sealed under another secret, so nothing opens and nothing changes.
    const weakOld = await cli(["secrets", "reseal", "--old", "0".repeat(64), "--new", NEW.toString("hex")]);
    expect([weakOld.code, weakOld.err]).toEqual([1, expect.stringContaining("opens with neither --old nor --new")]);
    expect(await sealedRows()).toEqual(before);
  });

  it("aborts the whole transaction when a row opens with neither secret (exit 1)", async () => {
    const wrongOld = randomBytes(32).toString("hex");
    const before = await sealedRows();
    const r = await cli(["secrets", "reseal", "--old", wrongOld, "--new", NEW.toString("hex"), "--json"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("opens with neither --old nor --new: nothing was changed");
    expect(await sealedRows()).toEqual(before);
    expect(await gw.ctx.redis.exists(gw.ctx.keys.snapshotSentinel())).toBe(1);
  });

  it("round trip: reseals every row under the new secret in one go; gateways rebuild; a gateway on the new secret answers", async () => {
    const before = await sealedRows();
    const plaintexts = before.map((row) => opens(OLD, row.sealed, row.aad));
    expect(plaintexts.every((p) => p !== null)).toBe(true);
    expect(before).toHaveLength(6);

    const r = await cli(["secrets", "reseal", "--old", TEST_SECRET, "--new", NEW.toString("base64"), "--json"]);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      ok: true,
      sentinel_deleted: true,
      tables: [
        { table: "secrets", resealed: 4, unchanged: 0 },
        { table: "siem_destinations", resealed: 1, unchanged: 0 },
        { table: "webhooks", resealed: 1, unchanged: 0 },
      ],
    });
    const after = await sealedRows();
    for (const [i, row] of after.entries()) {
      expect(opens(OLD, row.sealed, row.aad), row.where).toBeNull();
      expect(opens(NEW, row.sealed, row.aad), row.where).toBe(plaintexts[i]);
    }
    const { rows: nullTokens } = await gw.ctx.db.query("SELECT id FROM siem_destinations WHERE token_sealed IS NULL");
    expect(nullTokens).toHaveLength(1);

    // The running gateway's watcher rebuilds the snapshots: Redis now holds the new sealed bytes.
    await waitFor(async () => (await gw.ctx.redis.exists(gw.ctx.keys.snapshotSentinel())) === 1, 10_000);
    const cached = await gw.ctx.redis.hget(gw.ctx.keys.secretSnapshot(orgs[0]), "db_password");
    expect(opens(NEW, Buffer.from(cached ?? "", "base64"), secretAad(orgs[0], "db_password"))).toBe("db_password-of-0");

    // A gateway still on the old secret cannot open them (a fault, never a wrong value) ...
    const stale = await askSecret(gw.url, "db_password");
    expect(stale.status).toBe(503);
    // ... one restarted on the new secret answers.
    let ctx: Context | null = null;
    let ingress: RunningIngress | null = null;
    try {
      ctx = await openContext(loadConfig({ ...gw.env, GATEWAY_SECRET: NEW.toString("base64") }), "test", { logger: silentLogger() });
      ingress = await startIngress(ctx);
      const fresh = await askSecret(`http://127.0.0.1:${ingress.port}`, "db_password");
      expect(fresh.status).toBe(200);
      expect(fresh.body.value).toBe("db_password-of-0");
    } finally {
      await ingress?.stop();
      await ctx?.close();
    }

    // Running it again changes nothing; rotating back restores the original gateway.
    const again = await cli(["secrets", "reseal", "--old", TEST_SECRET, "--new", NEW.toString("hex")]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain("secrets: 0 resealed, 4 already under the new secret");
    const back = await cli(["secrets", "reseal", "--old", NEW.toString("hex"), "--new", TEST_SECRET]);
    expect(back.code, back.err).toBe(0);
    expect(back.out).toContain("secrets: 4 resealed");
    expect(back.out).toContain("restart every gateway process");
    await waitFor(async () => (await askSecret(gw.url, "db_password")).status === 200, 10_000);
    expect((await askSecret(gw.url, "api_token")).body.value).toBe("api_token-of-0");
  });
});
