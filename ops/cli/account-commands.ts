import { segment } from "./admin-client.js";
import { type AdminContext, type Body, json } from "./admin-commands.js";
import type { DomainView, InstallationView, KeyRow, MemberView, OrgView, Principal, RiskView, ScanAnswer, TokenView } from "./answers.js";
import { idArgument, listOption, requiredOption, stringOption } from "./args.js";
import { adminCommand, type Command } from "./command.js";
import { lines, table, text } from "./format.js";
import { EXIT, print, UsageError } from "./io.js";
import { listCall, PAGING, printPage } from "./paging.js";

/**
 * The lists and calls an account owner needs (operator-api.md section 5, docs/accounts.md):
 * `me`, `org list`, `key list`, `domain list`, `member list|remove|role`, `token create|list|revoke`,
 * `risk accept|release|list`, `install list`, `scan run|show`. They take the admin token or
 * an organization token; with an organization token `--org` may be left out (it is the
 * token's own organization, asked of GET /me).
 */

/** `--org`, or the organization of the organization token in use. */
async function orgOf(c: AdminContext): Promise<number> {
  const given = stringOption(c.parsed, "org");
  if (given !== undefined) return idArgument(given, "--org");
  const { body } = await c.client.call<{ principal: Principal }>("GET", "/me");
  const org = body.principal.org;
  if (typeof org?.id !== "number") throw new UsageError("--org is required (the admin token belongs to no organization)");
  return org.id;
}

async function me(c: AdminContext): Promise<number> {
  const { body: answer } = await c.client.call<{ principal: Principal }>("GET", "/me");
  if (c.json) return json(c, answer);
  const p = answer.principal;
  const org = p.org;
  if (p.kind === "operator") print(c.io, "The operator (ADMIN_TOKEN): every organization, every route.");
  else if (p.kind === "token")
    print(c.io, `Token "${text(p.token?.name)}" of organization ${text(org?.id)} "${text(org?.name)}", scopes ${text(p.scopes)}.`);
  else
    print(
      c.io,
      `${text(p.member?.name)} <${text(p.member?.email)}>, ${text(p.role)} of organization ${text(org?.id)} "${text(org?.name)}".`,
    );
  return EXIT.ok;
}

async function orgList(c: AdminContext): Promise<number> {
  const answer = await listCall<{ orgs: OrgView[] }>(c, "/orgs");
  if (c.json) return json(c, answer);
  const rows = answer.orgs.map((o) => [
    text(o.id),
    text(o.plan),
    text(o.subscription),
    text(o.used),
    text(o.allowance ?? "unlimited"),
    text(o.name),
  ]);
  return printPage(c, answer, rows, ["ID", "PLAN", "SUBSCRIPTION", "USED", "ALLOWANCE", "NAME"], "No organizations.");
}

async function keyList(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const answer = await listCall<{ keys: KeyRow[] }>(c, `/orgs/${org}/keys`, {
    status: stringOption(c.parsed, "status"),
    kind: stringOption(c.parsed, "kind"),
  });
  if (c.json) return json(c, answer);
  const rows = answer.keys.map((k) => [
    text(k.id),
    text(k.prefix),
    text(k.kind),
    text(k.status),
    text(k.domain),
    text(k.last_used_at),
    text(k.expires_at),
    text(k.name),
  ]);
  return printPage(
    c,
    answer,
    rows,
    ["ID", "PREFIX", "KIND", "STATUS", "DOMAIN", "LAST USED", "EXPIRES", "NAME"],
    `Organization ${org} has no such keys.`,
  );
}

async function domainList(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const answer = await listCall<{ domains: DomainView[] }>(c, `/orgs/${org}/domains`);
  if (c.json) return json(c, answer);
  const rows = answer.domains.map((d) => {
    const txt = d.txt_record;
    return [text(d.name), d.verified ? "verified" : "not verified", d.verified ? "-" : `${text(txt.name)} TXT "${text(txt.value)}"`];
  });
  return printPage(c, answer, rows, ["DOMAIN", "STATUS", "TXT RECORD TO PUBLISH"], `Organization ${org} has no domains.`);
}

async function memberList(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const answer = await listCall<{ members: MemberView[] }>(c, `/orgs/${org}/members`);
  if (c.json) return json(c, answer);
  const rows = answer.members.map((m) => [text(m.id), text(m.role), text(m.email), text(m.name)]);
  return printPage(c, answer, rows, ["ID", "ROLE", "EMAIL", "NAME"], `Organization ${org} has no members.`);
}

async function memberRemove(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the member id");
  const org = await orgOf(c);
  const { body: answer } = await c.client.call<{
    removed: MemberView;
    assignments_unassigned: number;
    default_owner_cleared: boolean;
    tokens_revoked: number;
  }>("DELETE", `/orgs/${org}/members/${id}`);
  if (c.json) return json(c, answer);
  const m = answer.removed;
  print(c.io, `Member ${id} ${text(m.name)} <${text(m.email)}> (${text(m.role)}) removed from organization ${org}: its sessions end now.`);
  if (answer.tokens_revoked > 0) print(c.io, `${text(answer.tokens_revoked)} organization token(s) it made are revoked.`);
  if (answer.assignments_unassigned > 0) print(c.io, `${text(answer.assignments_unassigned)} of its assignments are unassigned.`);
  if (answer.default_owner_cleared) print(c.io, "It was the default owner: new failing findings are no longer assigned automatically.");
  return EXIT.ok;
}

async function memberRole(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the member id");
  const role = requiredOption(c.parsed, "role");
  const org = await orgOf(c);
  const { body: answer } = await c.client.call<{ member: MemberView }>("PATCH", `/orgs/${org}/members/${id}`, { role });
  if (c.json) return json(c, answer);
  const m = answer.member;
  print(c.io, `Member ${id} ${text(m.name)} <${text(m.email)}> is ${text(m.role)} of organization ${org} from its next request.`);
  return EXIT.ok;
}

async function tokenCreate(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const scopes = listOption(c.parsed, "scopes") ?? ["read"];
  const body: Body = { name: requiredOption(c.parsed, "name"), scopes };
  const expires = stringOption(c.parsed, "expires-at");
  if (expires !== undefined) body.expires_at = expires;
  const { body: answer } = await c.client.call<{ token: string; details: TokenView }>("POST", `/orgs/${org}/tokens`, body);
  if (c.json) return json(c, answer);
  const d = answer.details;
  print(c.io, `Token ${text(d.id)} "${text(d.name)}" created for organization ${org}. It is shown this once; store it now:`);
  print(c.io);
  print(c.io, `  ${text(answer.token)}`);
  print(c.io);
  print(
    c.io,
    lines([
      ["scopes", d.scopes],
      ["expires", d.expires_at ?? "never"],
    ]),
  );
  print(c.io, `Use it as GATEWAY_TOKEN or --token; revoke it with: gateway token revoke ${text(d.id)}`);
  return EXIT.ok;
}

async function tokenList(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const answer = await listCall<{ tokens: TokenView[] }>(c, `/orgs/${org}/tokens`);
  if (c.json) return json(c, answer);
  const rows = answer.tokens.map((t) => [
    text(t.id),
    text(t.prefix),
    text(t.scopes),
    text(t.last_used_at),
    text(t.expires_at ?? "never"),
    text(t.name),
  ]);
  return printPage(c, answer, rows, ["ID", "PREFIX", "SCOPES", "LAST USED", "EXPIRES", "NAME"], `Organization ${org} has no live tokens.`);
}

async function tokenRevoke(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the token id");
  const org = await orgOf(c);
  const { body: answer } = await c.client.call<{ revoked: { name: string } }>("DELETE", `/orgs/${org}/tokens/${id}`);
  if (c.json) return json(c, answer);
  print(c.io, `Token ${id} "${text(answer.revoked.name)}" is revoked: it is refused from its next call on.`);
  return EXIT.ok;
}

function findingOptions(c: AdminContext): { domain: string; finding: string } {
  return { domain: requiredOption(c.parsed, "domain"), finding: requiredOption(c.parsed, "finding") };
}

async function riskAccept(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const { domain, finding } = findingOptions(c);
  const body: Body = { domain, finding_key: finding };
  const note = stringOption(c.parsed, "note");
  if (note !== undefined) body.note = note;
  const expires = stringOption(c.parsed, "expires-at");
  if (expires !== undefined) body.expires_at = expires;
  const { body: answer } = await c.client.call<{ acknowledgement: RiskView }>("POST", `/orgs/${org}/risks`, body);
  if (c.json) return json(c, answer);
  const a = answer.acknowledgement;
  print(
    c.io,
    `Risk of ${text(a.finding_key)} on ${text(a.domain)} accepted${a.expires_at ? ` until ${text(a.expires_at)}` : ", with no end date"}.`,
  );
  return EXIT.ok;
}

async function riskRelease(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const { domain, finding } = findingOptions(c);
  const { body: answer } = await c.client.call("DELETE", `/orgs/${org}/risks/${segment(domain)}/${segment(finding)}`);
  if (c.json) return json(c, answer);
  print(c.io, `Risk acceptance of ${finding} on ${domain} released.`);
  return EXIT.ok;
}

async function riskList(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const answer = await listCall<{ risks: RiskView[] }>(c, `/orgs/${org}/risks`);
  if (c.json) return json(c, answer);
  const rows = answer.risks.map((r) => [
    text(r.domain),
    text(r.finding_key),
    text(r.acked_at),
    r.expired ? `${text(r.expires_at)} (expired)` : text(r.expires_at ?? "never"),
    text(r.note),
  ]);
  return printPage(c, answer, rows, ["DOMAIN", "FINDING", "ACCEPTED", "UNTIL", "NOTE"], `Organization ${org} has accepted no risks.`);
}

async function installList(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the key id");
  const answer = await listCall<{ installations: InstallationView[] }>(c, `/keys/${id}/installations`);
  if (c.json) return json(c, answer);
  const rows = answer.installations.map((i) => [text(i.status), text(i.first_seen_at), text(i.last_seen_at), text(i.install)]);
  return printPage(c, answer, rows, ["STATUS", "FIRST SEEN", "LAST SEEN", "INSTALLATION"], `Key ${id} has no installations yet.`);
}

function scanLines(answer: ScanAnswer): string {
  const section = (name: "web" | "dns") => {
    const s = answer[name];
    return `${text(s.grade)} (score ${text(s.score)}, ${text(s.fail_count)} failing, ${text(s.warn_count)} warnings)`;
  };
  const failing = (["web", "dns"] as const).flatMap((name) =>
    answer[name].findings
      .filter((f) => f.status === "fail" || f.status === "warn")
      .map((f) => [`${text(f.status)}${f.acknowledged ? " (accepted)" : ""}`, text(f.id), text(f.summary)]),
  );
  return [
    lines([
      ["web", section("web")],
      ["dns", section("dns")],
    ]),
    ...(failing.length > 0 ? ["", table(["STATUS", "FINDING", "SUMMARY"], failing)] : []),
  ].join("\n");
}

async function scanRun(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const domain = requiredOption(c.parsed, "domain");
  const { body: answer } = await c.client.call<ScanAnswer>("POST", `/orgs/${org}/scans`, { domain });
  if (c.json) return json(c, answer);
  print(c.io, `Scanned ${text(answer.domain)} now:`);
  print(c.io, scanLines(answer));
  return EXIT.ok;
}

async function scanShow(c: AdminContext): Promise<number> {
  const org = await orgOf(c);
  const domain = requiredOption(c.parsed, "domain");
  const { body: answer } = await c.client.call<ScanAnswer>("GET", `/orgs/${org}/scans/${segment(domain)}`);
  if (c.json) return json(c, answer);
  print(c.io, `Latest scan of ${text(answer.domain)}:`);
  print(c.io, scanLines(answer));
  return EXIT.ok;
}

const ORG = { org: "string" } as const;
const FINDING = { org: "string", domain: "string", finding: "string" } as const;

export const ACCOUNT_COMMANDS: Command[] = [
  {
    noun: "me",
    verb: null,
    uses: "admin",
    synopsis: "me",
    summary: "Who the token in use is: the operator, or an organization token (its organization and scopes).",
    options: {},
    run: (_rt, d) => me(d.admin()),
  },
  adminCommand(
    "org",
    "list",
    "org list [--limit N] [--page P]",
    "Every organization, newest first (the admin token only).",
    PAGING,
    orgList,
  ),
  adminCommand(
    "key",
    "list",
    "key list [--org ORG_ID] [--status active|suspended|revoked|expired] [--kind client|server] [--limit N] [--page P]",
    "An organization's keys, newest first, with when each was last used (never the key itself).",
    { ...ORG, ...PAGING, status: "string", kind: "string" },
    keyList,
  ),
  adminCommand(
    "domain",
    "list",
    "domain list [--org ORG_ID] [--limit N] [--page P]",
    "An organization's domains and the TXT record each still needs.",
    { ...ORG, ...PAGING },
    domainList,
  ),
  adminCommand(
    "member",
    "list",
    "member list [--org ORG_ID] [--limit N] [--page P]",
    "An organization's members and their roles.",
    { ...ORG, ...PAGING },
    memberList,
  ),
  adminCommand(
    "member",
    "remove",
    "member remove [--org ORG_ID] MEMBER_ID",
    "Remove a member (an owner's call): its sessions end at once; the last owner cannot be removed.",
    ORG,
    memberRemove,
  ),
  adminCommand(
    "member",
    "role",
    "member role [--org ORG_ID] MEMBER_ID --role owner|admin|member",
    "Change a member's role (an owner's call), from its next request; the last owner keeps the role.",
    { ...ORG, role: "string" },
    memberRole,
  ),
  adminCommand(
    "token",
    "create",
    "token create [--org ORG_ID] --name NAME [--scopes read|read,write] [--expires-at TIME]",
    "Create an organization token (default scopes: read); the token is printed once. Tokens cannot create tokens.",
    { ...ORG, name: "string", scopes: "string", "expires-at": "string" },
    tokenCreate,
  ),
  adminCommand(
    "token",
    "list",
    "token list [--org ORG_ID] [--limit N] [--page P]",
    "An organization's live tokens (prefix, scopes, last use).",
    { ...ORG, ...PAGING },
    tokenList,
  ),
  adminCommand(
    "token",
    "revoke",
    "token revoke [--org ORG_ID] TOKEN_ID",
    "Revoke a token: refused from its next call on.",
    ORG,
    tokenRevoke,
  ),
  adminCommand(
    "risk",
    "accept",
    "risk accept [--org ORG_ID] --domain DOMAIN --finding KEY [--note TEXT] [--expires-at TIME]",
    "Accept the risk of a finding (until --expires-at, else until released).",
    { ...FINDING, note: "string", "expires-at": "string" },
    riskAccept,
  ),
  adminCommand(
    "risk",
    "release",
    "risk release [--org ORG_ID] --domain DOMAIN --finding KEY",
    "Release a risk acceptance.",
    FINDING,
    riskRelease,
  ),
  adminCommand(
    "risk",
    "list",
    "risk list [--org ORG_ID] [--limit N] [--page P]",
    "The accepted risks, with those past their date marked expired.",
    { ...ORG, ...PAGING },
    riskList,
  ),
  adminCommand(
    "install",
    "list",
    "install list KEY_ID [--limit N] [--page P]",
    "A key's installations and their status, newest first (approve or block the pending ones).",
    PAGING,
    installList,
  ),
  adminCommand(
    "scan",
    "run",
    "scan run [--org ORG_ID] --domain DOMAIN",
    "Scan a verified domain now (10 fresh scans per hour per organization).",
    { ...ORG, domain: "string" },
    scanRun,
  ),
  adminCommand(
    "scan",
    "show",
    "scan show [--org ORG_ID] --domain DOMAIN",
    "The latest stored scan of a verified domain.",
    { ...ORG, domain: "string" },
    scanShow,
  ),
];
