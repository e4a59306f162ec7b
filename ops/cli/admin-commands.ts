import { type AdminClient, type AnswerBase, segment } from "./admin-client.js";
import type { DomainView, KeyDetails, OrgView } from "./answers.js";
import { flag, idArgument, listOption, type Parsed, requiredOption, stringOption } from "./args.js";
import { count, lines, text } from "./format.js";
import { type CliIo, EXIT, print, printError, printJson, UsageError } from "./io.js";

/** The commands that drive the admin API: org, key, domain, install. */

export interface AdminContext {
  parsed: Parsed;
  /** Positional words after noun and verb. */
  args: string[];
  json: boolean;
  io: CliIo;
  client: AdminClient;
}

/** A request body, filled field by field from the options given. */
export type Body = Record<string, unknown>;

export function orgLines(org: OrgView): string {
  const allowance = org.allowance === null ? "unlimited" : `${count(Number(org.allowance))} calls per cycle`;
  return lines([
    ["plan", `${text(org.plan)} (${allowance}, ${count(Number(org.used ?? 0))} used)`],
    ["subscription", org.subscription],
    ["cycle", `${text(org.cycle_started_at)} → ${text(org.cycle_resets_at)}`],
    ["fix target", `${text(org.fix_target_days)} days`],
    [
      "default owner",
      org.default_owner
        ? `${text(org.default_owner.name)} <${text(org.default_owner.email)}> (new failing findings)`
        : "none (nothing assigned automatically)",
    ],
  ]);
}

function keyLines(d: KeyDetails): string {
  return lines([
    ["prefix", d.prefix],
    ["kind", d.kind],
    ["status", d.status],
    ["domain", d.domain],
    ["environment", d.environment],
    ["scopes", d.scopes],
    ["ip allow", d.ip_allow],
    ["ip deny", d.ip_deny],
    ["countries", [...(d.countries_allow ?? []).map((c) => `+${c}`), ...(d.countries_block ?? []).map((c) => `-${c}`)]],
    ["rate", `${text(d.rate_per_minute)} per minute`],
    ["expires", d.expires_at],
    ["retires", d.retires_at ? `${text(d.retires_at)} (replaced by a rotation)` : undefined],
  ]);
}

function keyTitle(d: Pick<KeyDetails, "id" | "name">): string {
  return `Key ${text(d.id)} "${text(d.name)}"`;
}

/** Prints the admin API's answer as it came (`--json`). */
export function json(c: AdminContext, answer: AnswerBase, code: number = EXIT.ok): number {
  printJson(c.io, answer);
  return code;
}

export async function orgCreate(c: AdminContext): Promise<number> {
  const body: Body = { name: requiredOption(c.parsed, "name") };
  const plan = stringOption(c.parsed, "plan");
  if (plan !== undefined) body.plan = plan;
  const days = stringOption(c.parsed, "fix-target-days");
  if (days !== undefined) body.fix_target_days = idArgument(days, "--fix-target-days");
  const subscription = stringOption(c.parsed, "subscription");
  if (subscription !== undefined) body.subscription = subscription;
  const { body: answer } = await c.client.call<{ org: OrgView }>("POST", "/orgs", body);
  if (c.json) return json(c, answer);
  const org = answer.org;
  print(c.io, `Organization ${text(org.id)} "${text(org.name)}" created.`);
  print(c.io, orgLines(org));
  return EXIT.ok;
}

export async function orgGet(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the organization id");
  const { body: answer } = await c.client.call<{ org: OrgView }>("GET", `/orgs/${id}`);
  if (c.json) return json(c, answer);
  const org = answer.org;
  print(c.io, `Organization ${text(org.id)} "${text(org.name)}"`);
  print(c.io, orgLines(org));
  return EXIT.ok;
}

export async function keyCreate(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const kind = requiredOption(c.parsed, "kind");
  if (kind !== "client" && kind !== "server") throw new UsageError(`--kind must be client or server, got ${JSON.stringify(kind)}`);
  const body: Body = { name: requiredOption(c.parsed, "name"), kind };
  const domain = stringOption(c.parsed, "domain");
  if (domain !== undefined) body.domain = domain;
  if (kind === "client" && domain === undefined) throw new UsageError("a client key needs --domain (the domain it is locked to)");
  for (const [option, field] of [
    ["environment", "environment"],
    ["industry", "industry"],
    ["expires-at", "expires_at"],
  ] as const) {
    const value = stringOption(c.parsed, option);
    if (value !== undefined) body[field] = value;
  }
  for (const [option, field] of [
    ["scopes", "scopes"],
    ["ip-allow", "ip_allow"],
    ["ip-deny", "ip_deny"],
    ["countries-allow", "countries_allow"],
    ["countries-block", "countries_block"],
  ] as const) {
    const value = listOption(c.parsed, option);
    if (value !== undefined) body[field] = value;
  }
  const rate = stringOption(c.parsed, "rate-per-minute");
  if (rate !== undefined) body.rate_per_minute = idArgument(rate, "--rate-per-minute");
  if (flag(c.parsed, "trial")) body.is_trial = true;
  if (flag(c.parsed, "ip-binding")) body.ip_binding = true;
  const { body: answer } = await c.client.call<NewKey>("POST", `/orgs/${org}/keys`, body);
  return showNewKey(c, answer, "created");
}

/** A key made or rotated: the key itself, shown once, and its settings. */
interface NewKey extends AnswerBase {
  key: string;
  details: KeyDetails;
}

function showNewKey(c: AdminContext, answer: NewKey, what: string): number {
  if (c.json) return json(c, answer);
  const d = answer.details;
  print(c.io, `${keyTitle(d)} ${what}. The key is shown this once; store it now:`);
  print(c.io);
  print(c.io, `  ${text(answer.key)}`);
  print(c.io);
  print(c.io, keyLines(d));
  return EXIT.ok;
}

export async function keyGet(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the key id");
  const { body: answer } = await c.client.call<{ details: KeyDetails }>("GET", `/keys/${id}`);
  if (c.json) return json(c, answer);
  const d = answer.details;
  print(c.io, keyTitle(d));
  print(c.io, keyLines(d));
  return EXIT.ok;
}

export function keyTransition(action: "suspend" | "resume" | "revoke") {
  return async (c: AdminContext): Promise<number> => {
    const id = idArgument(c.args[0], "the key id");
    const { body: answer } = await c.client.call<{ details: KeyDetails }>("POST", `/keys/${id}/${action}`);
    if (c.json) return json(c, answer);
    const d = answer.details;
    print(c.io, `${keyTitle(d)} is now ${text(d.status)}.`);
    return EXIT.ok;
  };
}

export async function keyRotate(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the key id");
  const grace = stringOption(c.parsed, "grace-s");
  // A grace that is no whole number goes as sent: the API names the field it refuses (bad_grace_s).
  const body: Body = grace === undefined ? {} : { grace_s: /^\d+$/.test(grace) ? Number(grace) : grace };
  const { body: answer } = await c.client.call<NewKey>("POST", `/keys/${id}/rotate`, body);
  const graceful = grace !== undefined && Number(grace) > 0;
  return showNewKey(c, answer, `replaces key ${id}, which ${graceful ? `works ${grace} s more, then is revoked` : "is revoked"}`);
}

function domainArgs(c: AdminContext): { org: number; domain: string } {
  return { org: idArgument(requiredOption(c.parsed, "org"), "--org"), domain: requiredOption(c.parsed, "domain") };
}

export async function domainAdd(c: AdminContext): Promise<number> {
  const { org, domain } = domainArgs(c);
  const body: Body = { domain };
  if (flag(c.parsed, "verified")) body.verified = true;
  const { body: answer } = await c.client.call<{ domain: DomainView }>("POST", `/orgs/${org}/domains`, body);
  if (c.json) return json(c, answer);
  const d = answer.domain;
  if (d.verified) {
    print(c.io, `Domain ${text(d.name)} added to organization ${org}, verified by hand.`);
    return EXIT.ok;
  }
  const txt = d.txt_record;
  print(c.io, `Domain ${text(d.name)} added to organization ${org}, not yet verified. Publish this DNS record:`);
  print(c.io);
  print(c.io, `  ${text(txt.name)}  TXT  "${text(txt.value)}"`);
  print(c.io);
  print(c.io, `then run: gateway domain verify --org ${org} --domain ${text(d.name)}`);
  return EXIT.ok;
}

/** Exit code 1 when the record is not there yet, so scripts can retry. */
export async function domainVerify(c: AdminContext): Promise<number> {
  const { org, domain } = domainArgs(c);
  const { body: answer } = await c.client.call<{ domain: DomainView; checked?: { found?: string[]; error?: string | null } }>(
    "POST",
    `/orgs/${org}/domains/${segment(domain)}/verify`,
  );
  const d = answer.domain;
  if (c.json) return json(c, answer, d.verified ? EXIT.ok : EXIT.failed);
  if (d.verified) {
    print(c.io, `Domain ${text(d.name)} is verified.`);
    return EXIT.ok;
  }
  const txt = d.txt_record;
  const checked = answer.checked ?? {};
  const found =
    Array.isArray(checked.found) && checked.found.length > 0
      ? ` Found instead: ${checked.found.map((f) => JSON.stringify(f)).join(", ")}.`
      : "";
  const failed = checked.error ? ` The DNS lookup failed (${text(checked.error)}).` : "";
  printError(c.io, `Domain ${text(d.name)} is not verified yet: no TXT record ${text(txt.name)} = "${text(txt.value)}".${found}${failed}`);
  return EXIT.failed;
}

export function installDecision(decision: "approve" | "block") {
  return async (c: AdminContext): Promise<number> => {
    const id = idArgument(c.args[0], "the key id");
    const install = c.args[1];
    if (install === undefined || install === "") throw new UsageError("the installation is required");
    const { body: answer } = await c.client.call<{ installation: { install: string; status: string } }>(
      "POST",
      `/keys/${id}/installations/${segment(install)}/${decision}`,
    );
    if (c.json) return json(c, answer);
    const i = answer.installation;
    print(c.io, `Installation ${text(i.install)} of key ${id} is now ${text(i.status)}.`);
    return EXIT.ok;
  };
}
