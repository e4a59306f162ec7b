import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningActor } from "../../actors/index.js";
import { startNotifier } from "../../actors/notifier/index.js";
import { startOutboxRelay } from "../../actors/outbox/index.js";
import { startSiemPusher, type SiemPusher } from "../../actors/siem/index.js";
import { type CliIo, runCli } from "../../ops/cli.js";
import { startFakeHttp, type FakeHttp } from "../fixtures/siem/collectors.js";
import { scanNow, startFakeScanner, type FakeScanner } from "../helpers/findings.js";
import { startTestGateway, type TestGateway, waitFor } from "../helpers/gateway.js";
import { makeKey, verifyDomain } from "../ingress/routes/verify-fixtures.js";

/**
 * The CLI nouns over the findings, SIEM and status admin calls: each against the running
 * gateway (and its actors), human output and --json, refusals with exit code 1, command-line
 * mistakes with exit code 2.
 */

let gw: TestGateway;
let env: Record<string, string>;
let scanner: FakeScanner;
let relay: RunningActor;
let notifier: RunningActor;
let pusher: SiemPusher;
let collector: FakeHttp;
let receiver: http.Server;
let receiverUrl: string;
const hooks: { type: string; body: string }[] = [];
let orgId: number;
let key: string;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      hooks.push({ type: String(req.headers["x-event-type"]), body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  collector = await startFakeHttp();
  gw = await startTestGateway("clinouns", { OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8" });
  env = { ...gw.env, SITE_URL: gw.url };
  scanner = await startFakeScanner(gw);
  relay = await startOutboxRelay(gw.ctx);
  notifier = await startNotifier(gw.ctx);
  pusher = await startSiemPusher(gw.ctx);
});

afterAll(async () => {
  await pusher?.stop();
  await notifier?.stop();
  await relay?.stop();
  await scanner?.stop();
  await gw?.stop();
  await collector?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

interface Run {
  code: number;
  out: string;
  err: string;
  json(): any;
}

async function cli(...argv: string[]): Promise<Run> {
  const state = { out: "", err: "" };
  const io: CliIo = { stdout: { write: (s: string) => (state.out += s) }, stderr: { write: (s: string) => (state.err += s) } };
  const code = await runCli(argv, env, io);
  return { code, out: state.out, err: state.err, json: () => JSON.parse(state.out) };
}

async function ok(...argv: string[]): Promise<Run> {
  const r = await cli(...argv);
  expect(r.code, `${argv.join(" ")}: ${r.err}`).toBe(0);
  return r;
}

describe("usage", () => {
  it("lists the new nouns, and refuses their command-line mistakes with exit code 2", async () => {
    const help = await ok("--help");
    for (const command of [
      "org update",
      "member add",
      "webhook create",
      "webhook deliveries",
      "note list",
      "siem state",
      "siem test",
      "status service set",
      "status incident update",
      "status maintenance cancel",
    ]) {
      expect(help.out).toContain(`gateway ${command}`);
    }
    const statusHelp = await ok("status", "--help");
    expect(statusHelp.out).toContain("gateway status incident create");
    expect(statusHelp.out).not.toContain("gateway siem");
    for (const [argv, message] of [
      [["org", "update", "1"], "nothing to change"],
      [["webhook", "create", "--org", "1", "https://x.example"], "--secret is required"],
      [["webhook", "create", "--org", "1", "--secret", "whsec_0123456789abcdef"], "the webhook URL is required"],
      [["siem", "create", "--org", "1", "--kind", "http"], "the collector URL is required"],
      [["webhook", "delete", "--org", "1"], "the webhook id is required"],
      [["note", "list", "--org", "1", "--domain", "a.test"], "--finding is required"],
      [["siem", "state", "--org", "1", "x"], "the destination id must be a positive integer"],
      [["status", "service", "set", "mail", "none", "--name", "M"], "the service must be one of website, api, dashboard"],
      [["status", "incident"], 'unknown command "status incident"'],
      [["status", "incident", "edit", "3"], "nothing to change"],
      [["status", "maintenance", "create", "--title", "x"], "--starts-at is required"],
      [["status", "incident", "list", "--limit", "0"], "--limit must be a positive integer"],
    ] as const) {
      const r = await cli(...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toContain(message);
    }
  });
});

describe("findings nouns", () => {
  it("org update and member add: the default owner, shown and refused with the API's reason", async () => {
    orgId = (await ok("org", "create", "--name", "Nouns", "--plan", "professional", "--json")).json().org.id;
    const added = await ok("member", "add", "--org", String(orgId), "--name", "Alice", "--email", "alice@example.com");
    expect(added.out).toBe(`Member Alice <alice@example.com> added to organization ${orgId} as member.\n`);
    expect((await ok("org", "get", String(orgId))).out).toContain("default owner  none (nothing assigned automatically)");
    const set = await ok("org", "update", String(orgId), "--default-owner", "alice@example.com", "--fix-target-days", "14");
    expect(set.out).toContain("default owner  Alice <alice@example.com> (new failing findings)");
    expect(set.out).toContain("fix target     14 days");
    const refused = await cli("org", "update", String(orgId), "--default-owner", "nobody@example.com", "--json");
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({ ok: false, reason: "bad_default_owner" });
    expect((await cli("member", "add", "--org", String(orgId), "--name", "A", "--email", "ALICE@example.com")).err).toContain(
      "conflict (HTTP 409)",
    );
    expect((await ok("org", "get", String(orgId), "--json")).json().org.default_owner).toEqual({
      name: "Alice",
      email: "alice@example.com",
    });
  });

  it("webhook create, list, deliveries and delete", async () => {
    const created = await ok("webhook", "create", "--org", String(orgId), receiverUrl, "--secret", "whsec_0123456789abcdef");
    const id = /^Webhook (\d+) added/.exec(created.out)?.[1];
    expect(id).toBeDefined();
    expect(created.out).not.toContain("whsec_");
    const bad = await cli("webhook", "create", "--org", String(orgId), "ftp://x.example/", "--secret", "whsec_0123456789abcdef");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("bad_url (HTTP 400)");

    // An automatic assignment (the default owner above) makes an event the webhook is told.
    await verifyDomain(gw, orgId, "a.test");
    key = (await makeKey(gw, orgId, { name: "Backend", kind: "server", domain: undefined })).key;
    await scanNow(gw, key, "a.test");
    await waitFor(() => hooks.some((h) => h.type === "finding.assigned"));
    const log = await waitFor(async () => {
      const r = await ok("webhook", "deliveries", "--org", String(orgId), id!, "--json");
      const deliveries = r.json().deliveries as { status: string; event_type: string }[];
      return deliveries.some((d) => d.status === "delivered" && d.event_type === "finding.assigned") ? deliveries : null;
    });
    expect(log.length).toBeGreaterThan(0);
    const human = await ok("webhook", "deliveries", "--org", String(orgId), id!);
    expect(human.out.split("\n")[0]).toMatch(/^DELIVERY\s+EVENT\s+TYPE\s+STATUS/);
    expect(human.out).toMatch(/finding\.assigned\s+delivered\s+1\s+200/);

    const list = await ok("webhook", "list", "--org", String(orgId));
    expect(list.out).toMatch(new RegExp(`^${id}\\s+[1-9]\\d*\\s+\\d+\\s+0\\s+\\S+\\s+-\\s+${receiverUrl.replace(/[.]/g, "\\.")}$`, "m"));
    const json = await ok("webhook", "list", "--org", String(orgId), "--json");
    expect(json.json().webhooks).toHaveLength(1);

    expect((await ok("webhook", "delete", "--org", String(orgId), id!)).out).toContain(`Webhook ${id} (${receiverUrl}) deleted`);
    const again = await cli("webhook", "delete", "--org", String(orgId), id!);
    expect(again.code).toBe(1);
    expect(again.err).toContain("not_found (HTTP 404)");
    expect((await ok("webhook", "list", "--org", String(orgId))).out).toBe(`Organization ${orgId} has no webhooks.\n`);
  });

  it("note add and list on an assigned finding; not_found on one nobody tracks", async () => {
    const where = ["--org", String(orgId), "--domain", "a.test", "--finding", "email:spf"];
    expect((await ok("note", "list", ...where)).out).toBe("No notes.\n");
    const added = await ok("note", "add", ...where, "--who", "Ops", "--body", "Vendor ticket #42");
    expect(added.out).toMatch(/^Note \d+ added to email:spf on a\.test\.$/m);
    await ok("note", "add", ...where, "--who", "Alice", "--body", "fixed in staging");
    const list = await ok("note", "list", ...where);
    expect(
      list.out
        .trimEnd()
        .split("\n")
        .map((l) => l.replace(/^\S+\s+/, "")),
    ).toEqual(["Ops: Vendor ticket #42", "Alice: fixed in staging"]);
    expect((await ok("note", "list", ...where, "--json")).json().notes.map((n: { who: string }) => n.who)).toEqual(["Ops", "Alice"]);
    // The same notes through assignments.php's story.
    const story = await gw.call("/api/v1/assignments.php", {
      query: { key, for_domain: "a.test", finding_key: "email:spf", history: "1" },
    });
    expect(story.body.notes.map((n: { body: string }) => n.body)).toEqual(["Vendor ticket #42", "fixed in staging"]);
    const none = await cli("note", "list", "--org", String(orgId), "--domain", "a.test", "--finding", "headers:csp");
    expect(none.code).toBe(1);
    expect(none.err).toContain("not_found (HTTP 404)");
  });
});

describe("siem noun", () => {
  it("create, list, state, test and delete a destination", async () => {
    const org = ["--org", String(orgId)];
    expect((await ok("siem", "list", ...org)).out).toBe("No SIEM destinations.\n");
    const created = await ok("siem", "create", ...org, "--kind", "http", collector.url, "--collector-token", "t0ken-secret");
    const id = /^SIEM destination (\d+) \(http\) added/.exec(created.out)?.[1];
    expect(id).toBeDefined();
    expect(created.out).not.toContain("t0ken-secret");
    const refused = await cli("siem", "create", ...org, "--kind", "kafka", collector.url, "--json");
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({ ok: false, reason: "bad_kind" });

    const test = await ok("siem", "test", ...org, id!);
    expect(test.out).toBe(`Test event delivered to SIEM destination ${id}.\n`);
    expect(collector.stored.get(0)).toBe(1);
    collector.mode = "fail";
    const failed = await cli("siem", "test", ...org, id!);
    expect(failed.code).toBe(1);
    expect(failed.err).toContain("delivery_failed (HTTP 502)");
    collector.mode = "ok";

    const state = await ok("siem", "state", ...org, id!);
    expect(state.out).toMatch(/^\s+kind\s+http$/m);
    expect(state.out).toMatch(/^\s+token\s+set$/m);
    expect(state.out).toMatch(/^\s+dead letters\s+0$/m);
    expect((await ok("siem", "state", ...org, id!, "--json")).json().destination).toMatchObject({
      id: Number(id),
      kind: "http",
      has_token: true,
    });
    expect((await ok("siem", "list", ...org)).out).toMatch(new RegExp(`^${id}\\s+http\\s+`, "m"));

    expect((await ok("siem", "delete", ...org, id!)).out).toBe(`SIEM destination ${id} deleted.\n`);
    const gone = await cli("siem", "state", ...org, id!);
    expect(gone.code).toBe(1);
    expect(gone.err).toContain("not_found (HTTP 404)");
  });
});

describe("status noun", () => {
  it("service set and list", async () => {
    const set = await ok("status", "service", "set", "api", "https://api.example.com/health", "--name", "Public API");
    expect(set.out).toBe('Service api "Public API" is probed at https://api.example.com/health.\n');
    const list = await ok("status", "service", "list");
    expect(list.out).toMatch(/^api\s+Public API\s+yes\s+https:\/\/api\.example\.com\/health\s+-$/m);
    expect((await ok("status", "service", "set", "api", "none", "--name", "Public API")).out).toContain("is not probed");
    const bad = await cli("status", "service", "set", "api", "ftp://x", "--name", "X", "--json");
    expect(bad.code).toBe(1);
    expect(bad.json()).toMatchObject({ ok: false, reason: "bad_url" });
  });

  it("incident create, update, edit, get, list; the public document shows it", async () => {
    const created = await ok(
      "status",
      "incident",
      "create",
      "--title",
      "Slow verify",
      "--body",
      "Looking into it",
      "--impact",
      "major",
      "--affects",
      "api,website",
      "--json",
    );
    const incident = created.json().incident;
    expect(incident).toMatchObject({ title: "Slow verify", impact: "major", status: "investigating", affects: ["api", "website"] });
    const id = String(incident.id);
    const updated = await ok("status", "incident", "update", id, "--status", "identified", "--body", "A bad deploy");
    expect(updated.out).toContain(`Incident ${id} "Slow verify" updated.`);
    expect(updated.out).toMatch(/^\s+status\s+identified$/m);
    expect(updated.out).toContain("identified: A bad deploy");
    await ok("status", "incident", "edit", id, "--impact", "minor", "--postmortem", "Rolled back.");
    const got = await ok("status", "incident", "get", id);
    expect(got.out).toMatch(/^\s+impact\s+minor$/m);
    expect(got.out).toMatch(/^\s+postmortem\s+Rolled back\.$/m);
    expect((await ok("status", "incident", "list")).out).toMatch(new RegExp(`^${id}\\s+identified\\s+minor\\s+\\S+\\s+Slow verify$`, "m"));
    const doc = await gw.call("/api/status.php");
    expect(JSON.stringify(doc.body)).toContain("Slow verify");
    await ok("status", "incident", "update", id, "--status", "resolved", "--body", "Fixed");
    const after = await cli("status", "incident", "update", id, "--status", "monitoring", "--body", "again");
    expect(after.code).toBe(1);
    expect(after.err).toMatch(/\(HTTP 409\)/);
    expect((await cli("status", "incident", "get", "999999")).err).toContain("not_found (HTTP 404)");
  });

  it("maintenance create, edit, get, list, cancel; status activity", async () => {
    const start = new Date(gw.ctx.clock.now() + 86_400_000).toISOString();
    const end = new Date(gw.ctx.clock.now() + 90_000_000).toISOString();
    const created = await ok(
      "status",
      "maintenance",
      "create",
      "--title",
      "DB upgrade",
      "--starts-at",
      start,
      "--ends-at",
      end,
      "--affects",
      "api",
      "--json",
    );
    const id = String(created.json().maintenance.id);
    const edited = await ok("status", "maintenance", "edit", id, "--title", "PostgreSQL upgrade");
    expect(edited.out).toContain(`Maintenance ${id} "PostgreSQL upgrade" changed.`);
    expect((await ok("status", "maintenance", "get", id)).out).toMatch(/^\s+affects\s+api$/m);
    expect((await ok("status", "maintenance", "list")).out).toMatch(new RegExp(`^${id}\\s+\\S+\\s+\\S+\\s+-\\s+PostgreSQL upgrade$`, "m"));
    const cancelled = await ok("status", "maintenance", "cancel", id);
    expect(cancelled.out).toContain("cancelled.");
    expect(cancelled.out).toMatch(/^\s+cancelled\s+\d{4}-/m);
    const again = await cli("status", "maintenance", "edit", id, "--title", "x");
    expect(again.code).toBe(1);
    const badTime = await cli("status", "maintenance", "create", "--title", "x", "--starts-at", "tomorrow", "--ends-at", end);
    expect(badTime.code).toBe(1);
    expect(badTime.err).toContain("bad_starts_at");
    const activity = await ok("status", "activity", "--limit", "50");
    expect(activity.out).toMatch(new RegExp(`^\\S+  operator: Maintenance ${id} cancelled$`, "m"));
    expect(activity.out).toContain("operator: Incident opened: Slow verify");
  });
});
