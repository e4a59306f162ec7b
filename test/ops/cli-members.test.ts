import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliIo, runCli } from "../../ops/cli.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";

/**
 * `gateway member role` and `gateway member remove` (docs/accounts.md "Members"): with the
 * admin token, and refused to an organization token, as the admin API refuses it.
 */

let gw: TestGateway;
let base: Record<string, string | undefined>;
let orgId: number;
let adaId: number;
let graceId: number;

interface Run {
  code: number;
  out: string;
  err: string;
  json(): any;
}

async function cli(argv: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const state = { out: "", err: "" };
  const io: CliIo = { stdout: { write: (s: string) => (state.out += s) }, stderr: { write: (s: string) => (state.err += s) } };
  const code = await runCli(argv, { ...base, ...env }, io);
  return { code, out: state.out, err: state.err, json: () => JSON.parse(state.out) };
}

async function ok(argv: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const r = await cli(argv, env);
  expect(r.code, `${argv.join(" ")}: ${r.err}${r.out}`).toBe(0);
  return r;
}

beforeAll(async () => {
  gw = await startTestGateway("climembers");
  base = { ...gw.env, SITE_URL: gw.url };
  orgId = (await gw.admin("POST", "/orgs", { name: "CLI Members" })).body.org.id;
  adaId = (await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Ada", email: "ada@example.com", role: "owner" })).body.member.id;
  graceId = (await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Grace", email: "grace@example.com", role: "member" })).body.member
    .id;
});

afterAll(async () => {
  await gw?.stop();
});

describe("gateway member role|remove", () => {
  it("are listed in --help", async () => {
    const help = await ok(["--help"]);
    expect(help.out).toContain("member remove");
    expect(help.out).toContain("member role");
  });

  it("changes a role, refuses to leave the organization without an owner, and removes a member", async () => {
    const org = ["--org", String(orgId)];
    const role = await ok(["member", "role", ...org, String(graceId), "--role", "admin"]);
    expect(role.out).toContain(`Member ${graceId} Grace <grace@example.com> is admin of organization ${orgId}`);
    expect((await ok(["member", "list", ...org])).out).toMatch(/admin\s+grace@example\.com\s+Grace/);

    const last = await cli(["member", "remove", ...org, String(adaId)]);
    expect(last.code).toBe(1);
    expect(last.err).toContain("conflict (HTTP 409)");
    expect(last.err).toContain("last owner");
    expect((await cli(["member", "role", ...org, String(adaId), "--role", "member"])).err).toContain("conflict");
    const bad = await cli(["member", "role", ...org, String(graceId), "--role", "root"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("bad_role");
    expect((await cli(["member", "role", ...org, String(graceId)])).code).toBe(2);

    const removed = await ok(["member", "remove", ...org, String(graceId), "--json"]);
    expect(removed.json()).toMatchObject({ ok: true, removed: { id: graceId, email: "grace@example.com", role: "admin" } });
    expect((await ok(["member", "list", ...org])).out).not.toContain("grace@example.com");
    const again = await cli(["member", "remove", ...org, String(graceId)]);
    expect(again.err).toContain("not_found");
  });

  it("an organization token may not, whatever its scopes (403 forbidden)", async () => {
    const token = (await gw.admin("POST", `/orgs/${orgId}/tokens`, { name: "cli-rw", scopes: ["read", "write"] })).body.token;
    const held = { ADMIN_TOKEN: undefined, GATEWAY_TOKEN: token };
    const role = await cli(["member", "role", String(adaId), "--role", "member"], held);
    expect(role.code).toBe(1);
    expect(role.err).toContain("forbidden");
    expect((await cli(["member", "remove", String(adaId)], held)).err).toContain("forbidden");
  });
});
