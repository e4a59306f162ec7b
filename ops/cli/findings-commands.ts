import { segment } from "./admin-client.js";
import { type AdminContext, type Body, json, orgLines } from "./admin-commands.js";
import type { DeliveryView, MemberView, NoteView, OrgView, WebhookView } from "./answers.js";
import { idArgument, requiredOption, stringOption } from "./args.js";
import { adminCommand, type Command } from "./command.js";
import { table, text } from "./format.js";
import { EXIT, print, UsageError } from "./io.js";
import { listCall, PAGING, printMore, printPage } from "./paging.js";

/**
 * The findings workflow's admin calls (docs/findings.md "Admin calls"): organization
 * settings (default owner), members, webhooks and assignment notes.
 */

/** `--default-owner ""` or `none` turns automatic assignment off. */
function defaultOwnerOption(c: AdminContext): string | null | undefined {
  const value = stringOption(c.parsed, "default-owner");
  if (value === undefined) return undefined;
  return value === "" || value.toLowerCase() === "none" ? null : value;
}

async function orgUpdate(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the organization id");
  const body: Body = {};
  for (const [option, field] of [
    ["name", "name"],
    ["plan", "plan"],
    ["subscription", "subscription"],
  ] as const) {
    const value = stringOption(c.parsed, option);
    if (value !== undefined) body[field] = value;
  }
  const days = stringOption(c.parsed, "fix-target-days");
  if (days !== undefined) body.fix_target_days = idArgument(days, "--fix-target-days");
  const owner = defaultOwnerOption(c);
  if (owner !== undefined) body.default_owner = owner;
  if (Object.keys(body).length === 0)
    throw new UsageError("nothing to change: pass --name, --plan, --fix-target-days, --subscription or --default-owner");
  const { body: answer } = await c.client.call<{ org: OrgView }>("PATCH", `/orgs/${id}`, body);
  if (c.json) return json(c, answer);
  const org = answer.org;
  print(c.io, `Organization ${text(org.id)} "${text(org.name)}" updated.`);
  print(c.io, orgLines(org));
  return EXIT.ok;
}

async function memberAdd(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const body: Body = { name: requiredOption(c.parsed, "name"), email: requiredOption(c.parsed, "email") };
  const role = stringOption(c.parsed, "role");
  if (role !== undefined) body.role = role;
  const { body: answer } = await c.client.call<{ member: MemberView }>("POST", `/orgs/${org}/members`, body);
  if (c.json) return json(c, answer);
  const m = answer.member;
  print(c.io, `Member ${text(m.name)} <${text(m.email)}> added to organization ${org} as ${text(m.role)}.`);
  return EXIT.ok;
}

async function webhookCreate(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const url = c.args[0];
  if (url === undefined || url === "") throw new UsageError("the webhook URL is required");
  const body = { url, secret: requiredOption(c.parsed, "secret") };
  const { body: answer } = await c.client.call<{ webhook: WebhookView }>("POST", `/orgs/${org}/webhooks`, body);
  if (c.json) return json(c, answer);
  const w = answer.webhook;
  print(c.io, `Webhook ${text(w.id)} added to organization ${org}: ${text(w.url)}`);
  print(c.io, 'Receivers verify X-Signature with the secret (docs/findings.md, "Webhook requests").');
  return EXIT.ok;
}

async function webhookList(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const answer = await listCall<{ webhooks: WebhookView[] }>(c, `/orgs/${org}/webhooks`);
  if (c.json) return json(c, answer);
  const rows = answer.webhooks.map((w) => [
    text(w.id),
    text(w.delivered),
    text(w.pending),
    text(w.failed),
    text(w.last_delivered_at),
    text(w.last_error),
    text(w.url),
  ]);
  return printPage(
    c,
    answer,
    rows,
    ["ID", "DELIVERED", "PENDING", "FAILED", "LAST DELIVERED", "LAST ERROR", "URL"],
    `Organization ${org} has no webhooks.`,
  );
}

async function webhookDelete(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const id = idArgument(c.args[0], "the webhook id");
  const { body: answer } = await c.client.call<{ deleted: { url: string } }>("DELETE", `/orgs/${org}/webhooks/${id}`);
  if (c.json) return json(c, answer);
  print(c.io, `Webhook ${id} (${text(answer.deleted.url)}) deleted, with its pending deliveries.`);
  return EXIT.ok;
}

async function webhookDeliveries(c: AdminContext): Promise<number> {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  const id = idArgument(c.args[0], "the webhook id");
  const { body: answer } = await c.client.call<{ deliveries: DeliveryView[] }>("GET", `/orgs/${org}/webhooks/${id}/deliveries`);
  if (c.json) return json(c, answer);
  const rows = answer.deliveries;
  if (rows.length === 0) {
    print(c.io, `Webhook ${id} has no deliveries yet.`);
    return EXIT.ok;
  }
  print(
    c.io,
    table(
      ["DELIVERY", "EVENT", "TYPE", "STATUS", "ATTEMPTS", "LAST", "NEXT ATTEMPT", "ERROR"],
      rows.map((d) => [
        text(d.id),
        text(d.event_id),
        text(d.event_type),
        text(d.status),
        text(d.attempts),
        text(d.last_status),
        text(d.next_attempt_at),
        text(d.last_error),
      ]),
    ),
  );
  return EXIT.ok;
}

function notePath(c: AdminContext): string {
  const org = idArgument(requiredOption(c.parsed, "org"), "--org");
  return `/orgs/${org}/assignments/${segment(requiredOption(c.parsed, "domain"))}/${segment(requiredOption(c.parsed, "finding"))}/notes`;
}

async function noteAdd(c: AdminContext): Promise<number> {
  const path = notePath(c);
  const { body: answer } = await c.client.call<{ note: NoteView }>("POST", path, {
    who: requiredOption(c.parsed, "who"),
    body: requiredOption(c.parsed, "body"),
  });
  if (c.json) return json(c, answer);
  const n = answer.note;
  print(c.io, `Note ${text(n.id)} added to ${text(n.finding_key)} on ${text(n.domain)}.`);
  return EXIT.ok;
}

async function noteList(c: AdminContext): Promise<number> {
  const answer = await listCall<{ notes: NoteView[] }>(c, notePath(c));
  if (c.json) return json(c, answer);
  const rows = answer.notes;
  if (rows.length === 0) print(c.io, "No notes.");
  for (const n of rows) print(c.io, `${text(n.time)}  ${text(n.who)}: ${text(n.body)}`);
  printMore(c, answer);
  return EXIT.ok;
}

const FINDING = { org: "string", domain: "string", finding: "string" } as const;

export const FINDINGS_COMMANDS: Command[] = [
  adminCommand(
    "org",
    "update",
    "org update ORG_ID [--name N] [--plan P] [--fix-target-days N] [--subscription active|lapsed] [--default-owner EMAIL|none]",
    "Change an organization's settings; --default-owner names the member new failing findings are assigned to.",
    { name: "string", plan: "string", "fix-target-days": "string", subscription: "string", "default-owner": "string" },
    orgUpdate,
  ),
  adminCommand(
    "member",
    "add",
    "member add --org ORG_ID --name NAME --email EMAIL [--role owner|admin|member]",
    "Add a member (an owner of findings).",
    { org: "string", name: "string", email: "string", role: "string" },
    memberAdd,
  ),
  adminCommand(
    "webhook",
    "list",
    "webhook list --org ORG_ID [--limit N] [--page P]",
    "Webhooks with their delivery counts and last error.",
    { org: "string", ...PAGING },
    webhookList,
  ),
  adminCommand(
    "webhook",
    "create",
    "webhook create --org ORG_ID URL --secret SECRET",
    "Add a signed webhook (secret: 16-256 characters, never shown again).",
    { org: "string", secret: "string" },
    webhookCreate,
  ),
  adminCommand(
    "webhook",
    "delete",
    "webhook delete --org ORG_ID WEBHOOK_ID",
    "Delete a webhook and its pending deliveries.",
    { org: "string" },
    webhookDelete,
  ),
  adminCommand(
    "webhook",
    "deliveries",
    "webhook deliveries --org ORG_ID WEBHOOK_ID",
    "The delivery log of a webhook, newest first (at most 200).",
    { org: "string" },
    webhookDeliveries,
  ),
  adminCommand(
    "note",
    "add",
    "note add --org ORG_ID --domain DOMAIN --finding KEY --who NAME --body TEXT",
    "Add a note to an assigned finding.",
    { ...FINDING, who: "string", body: "string" },
    noteAdd,
  ),
  adminCommand(
    "note",
    "list",
    "note list --org ORG_ID --domain DOMAIN --finding KEY [--limit N] [--page P]",
    "The notes of an assigned finding, oldest first.",
    { ...FINDING, ...PAGING },
    noteList,
  ),
];
