import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliIo, runCli } from "../../ops/cli.js";
import { startFakeScanner, type FakeScanner } from "../helpers/findings.js";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../helpers/gateway.js";

/**
 * The account verbs of the CLI (docs/accounts.md): lists, tokens, risks, installations and
 * scans, with the admin token or an organization token (GATEWAY_TOKEN or --token).
 */

let gw: TestGateway;
let scanner: FakeScanner;
let base: Record<string, string | undefined>;
let orgId: number;
let otherOrg: number;
let keyId: number;

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

/** An organization token, made through the CLI with the admin token. */
async function token(scopes: string, org = orgId): Promise<string> {
  return (await ok(["token", "create", "--org", String(org), "--name", `cli-${scopes}`, "--scopes", scopes, "--json"])).json().token;
}

/** The environment of someone holding only an organization token. */
const holding = (t: string) => ({ ADMIN_TOKEN: undefined, GATEWAY_TOKEN: t });

beforeAll(async () => {
  gw = await startTestGateway("cliaccounts");
  base = { ...gw.env, SITE_URL: gw.url };
  scanner = await startFakeScanner(gw);
  orgId = (await gw.admin("POST", "/orgs", { name: "CLI Accounts", plan: "enterprise" })).body.org.id;
  otherOrg = (await gw.admin("POST", "/orgs", { name: "Elsewhere", plan: "enterprise" })).body.org.id;
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "shop.example.com", verified: true });
  await gw.admin("POST", `/orgs/${orgId}/domains`, { domain: "pending.example.com" });
  await gw.admin("POST", `/orgs/${orgId}/members`, { name: "Ada", email: "ada@example.com", role: "owner" });
  keyId = (await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "shop", kind: "client", domain: "shop.example.com" })).body.details.id;
  await gw.admin("POST", `/orgs/${orgId}/keys`, { name: "backend", kind: "server" });
});
afterAll(async () => {
  await scanner?.stop();
  await gw?.stop();
});

describe("gateway account verbs", () => {
  it("lists them in --help", async () => {
    const help = await ok(["--help"]);
    for (const command of [
      "org list",
      "key list",
      "domain list",
      "member list",
      "token create",
      "token list",
      "token revoke",
      "risk accept",
      "risk release",
      "risk list",
      "install list",
      "scan run",
      "scan show",
      "me",
    ]) {
      expect(help.out).toContain(`gateway ${command}`);
    }
    expect(help.out).toContain("GATEWAY_TOKEN");
  });

  it("org list: every organization (admin token), refused to an organization token", async () => {
    const human = await ok(["org", "list"]);
    expect(human.out).toContain("CLI Accounts");
    expect(human.out).toContain("Elsewhere");
    const json = (await ok(["org", "list", "--json", "--limit", "1"])).json();
    expect(json).toMatchObject({ ok: true, total: 2, page: 1, has_more: true });
    expect(json.orgs).toHaveLength(1);
    expect((await ok(["org", "list", "--limit", "1"])).out).toContain("next: --page 2");
    const refused = await cli(["org", "list"], holding(await token("read")));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("forbidden");
  });

  it("token create prints the token once; it then works as GATEWAY_TOKEN or --token, without --org", async () => {
    const created = await ok(["token", "create", "--org", String(orgId), "--name", "laptop", "--scopes", "read,write"]);
    const shown = /(gwt_[0-9A-Za-z]{38})/.exec(created.out)?.[1];
    expect(shown).toBeDefined();
    expect(created.out).toContain("shown this once");
    const me = await ok(["me"], holding(shown as string));
    expect(me.out).toContain('Token "laptop" of organization');
    expect((await ok(["me", "--json"], holding(shown as string))).json().principal).toMatchObject({
      kind: "token",
      org: { id: orgId },
      scopes: ["read", "write"],
    });
    const viaFlag = await ok(["me", "--json", "--token", shown as string], { ADMIN_TOKEN: undefined });
    expect(viaFlag.json().principal.kind).toBe("token");
    // --token wins over GATEWAY_TOKEN, which wins over ADMIN_TOKEN.
    expect((await ok(["me", "--json"], { GATEWAY_TOKEN: shown })).json().principal.kind).toBe("token");
    expect((await ok(["me", "--json", "--token", ADMIN_TOKEN], { GATEWAY_TOKEN: shown })).json().principal.kind).toBe("operator");

    const keys = await ok(["key", "list"], holding(shown as string));
    expect(keys.out).toMatch(/PREFIX\s+KIND\s+STATUS/);
    expect(keys.out).toContain("backend");
    expect(keys.out).toContain("shop");
    const clientOnly = (await ok(["key", "list", "--kind", "client", "--json"], holding(shown as string))).json();
    expect(clientOnly.keys.map((k: { name: string }) => k.name)).toEqual(["shop"]);
    expect(clientOnly.keys[0]).toHaveProperty("last_used_at");
    const badStatus = await cli(["key", "list", "--status", "bogus"], holding(shown as string));
    expect(badStatus.code).toBe(1);
    expect(badStatus.err).toContain("bad_status");

    const domains = await ok(["domain", "list"], holding(shown as string));
    expect(domains.out).toContain("shop.example.com");
    expect(domains.out).toMatch(
      /pending\.example\.com\s+not verified\s+_gateway-verification\.pending\.example\.com TXT "gateway-verification=/,
    );
    const members = await ok(["member", "list"], holding(shown as string));
    expect(members.out).toMatch(/owner\s+ada@example\.com\s+Ada/);
    // Another organization's lists are not the token's: 404, as if they did not exist.
    const elsewhere = await cli(["member", "list", "--org", String(otherOrg)], holding(shown as string));
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.err).toContain("not_found");
  });

  it("tokens never create tokens; token list and revoke; a revoked token is refused at once", async () => {
    const writer = await token("read,write");
    const minted = await cli(["token", "create", "--name", "child"], holding(writer));
    expect(minted.code).toBe(1);
    expect(minted.err).toContain("forbidden");
    const listed = (await ok(["token", "list", "--json"], holding(writer))).json();
    const mine = listed.tokens.find((t: { prefix: string }) => writer.startsWith(t.prefix));
    expect(mine).toBeDefined();
    expect(JSON.stringify(listed)).not.toContain(writer);
    expect((await ok(["token", "list"], holding(writer))).out).toMatch(/ID\s+PREFIX\s+SCOPES/);
    const revoked = await ok(["token", "revoke", "--org", String(orgId), String(mine.id)]);
    expect(revoked.out).toContain("is revoked");
    const after = await cli(["key", "list"], holding(writer));
    expect(after.code).toBe(1);
    expect(after.err).toContain("unauthorized");
  });

  it("risk accept, list and release; a read token may list but not accept", async () => {
    const writer = await token("read,write");
    const reader = await token("read");
    const accepted = await ok(
      ["risk", "accept", "--domain", "shop.example.com", "--finding", "email:spf", "--note", "SPF is managed upstream"],
      holding(writer),
    );
    expect(accepted.out).toContain("email:spf on shop.example.com accepted");
    const listed = await ok(["risk", "list"], holding(reader));
    expect(listed.out).toMatch(/shop\.example\.com\s+email:spf/);
    expect(listed.out).toContain("SPF is managed upstream");
    const refused = await cli(["risk", "accept", "--domain", "shop.example.com", "--finding", "email:dmarc"], holding(reader));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("insufficient_scope");
    expect((await ok(["risk", "release", "--domain", "shop.example.com", "--finding", "email:spf"], holding(writer))).out).toContain(
      "released",
    );
    expect((await ok(["risk", "list", "--json"], holding(reader))).json().risks).toEqual([]);
    const missing = await cli(["risk", "accept", "--finding", "email:spf"], holding(writer));
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("--domain is required");
  });

  it("install list shows a key's installations", async () => {
    expect((await ok(["install", "list", String(keyId)])).out).toContain(`Key ${keyId} has no installations yet.`);
    await ok(["install", "approve", String(keyId), "site-1"]);
    const listed = await ok(["install", "list", String(keyId)], holding(await token("read")));
    expect(listed.out).toMatch(/approved\s+\S+\s+\S+\s+site-1/);
    expect((await ok(["install", "list", String(keyId), "--json"])).json().installations).toEqual([
      expect.objectContaining({ install: "site-1", status: "approved" }),
    ]);
  });

  it("scan run and scan show, for a verified domain", async () => {
    const writer = await token("read,write");
    const never = await cli(["scan", "show", "--domain", "shop.example.com"], holding(writer));
    expect(never.code).toBe(1);
    expect(never.err).toContain("no_scan");
    const ran = await ok(["scan", "run", "--domain", "shop.example.com"], holding(writer));
    expect(ran.out).toContain("Scanned shop.example.com now:");
    expect(ran.out).toMatch(/fail\s+email:spf/);
    expect(scanner.jobs.map((j) => j.domain)).toContain("shop.example.com");
    const shown = await ok(["scan", "show", "--domain", "shop.example.com", "--json"], holding(writer));
    expect(shown.json()).toMatchObject({ ok: true, fresh: false, domain: "shop.example.com", web: { grade: expect.any(String) } });
    const unverified = await cli(["scan", "run", "--domain", "pending.example.com"], holding(writer));
    expect(unverified.code).toBe(1);
    expect(unverified.err).toContain("domain_not_verified");
  });

  it("says which token to set when there is none, and asks for --org with the admin token", async () => {
    const none = await cli(["key", "list"], { ADMIN_TOKEN: undefined, GATEWAY_TOKEN: undefined });
    expect(none.code).toBe(2);
    expect(none.err).toContain("GATEWAY_TOKEN");
    const noOrg = await cli(["key", "list"]);
    expect(noOrg.code).toBe(2);
    expect(noOrg.err).toContain("--org is required");
    expect((await ok(["key", "list", "--org", String(orgId), "--json"])).json().total).toBe(2);
  });
});
