import { type AdminContext, type Body, json } from "./admin-commands.js";
import type { SiemDestinationView } from "./answers.js";
import { idArgument, requiredOption, stringOption } from "./args.js";
import { adminCommand, type Command } from "./command.js";
import { lines, text } from "./format.js";
import { EXIT, print, UsageError } from "./io.js";
import { listCall, PAGING, printPage } from "./paging.js";

/**
 * SIEM destinations (docs/events.md "SIEM destinations (admin API)"). Their dead letters are
 * the `dead-letters` noun's, on stream `events:siem:<id>`.
 */

function base(c: AdminContext): string {
  return `/orgs/${idArgument(requiredOption(c.parsed, "org"), "--org")}/siem`;
}

function stateLines(d: SiemDestinationView): string {
  return lines([
    ["kind", d.kind],
    ["url", d.url],
    ["index", d.index],
    ["token", d.has_token ? "set" : "none"],
    ["delivered", d.delivered],
    ["pending", d.pending],
    ["failed", d.failed],
    ["dead letters", d.dead_letters],
    ["last delivered", d.last_delivered_at],
    ["last event", d.last_event_id],
    ["last error", d.last_error ? `${text(d.last_error)} (${text(d.last_error_at)})` : null],
  ]);
}

async function siemList(c: AdminContext): Promise<number> {
  const answer = await listCall<{ destinations: SiemDestinationView[] }>(c, base(c));
  if (c.json) return json(c, answer);
  const rows = answer.destinations.map((d) => [
    text(d.id),
    text(d.kind),
    text(d.delivered),
    text(d.pending),
    text(d.failed),
    text(d.dead_letters),
    text(d.last_delivered_at),
    text(d.url),
  ]);
  return printPage(
    c,
    answer,
    rows,
    ["ID", "KIND", "DELIVERED", "PENDING", "FAILED", "DEAD", "LAST DELIVERED", "URL"],
    "No SIEM destinations.",
  );
}

async function siemCreate(c: AdminContext): Promise<number> {
  const url = c.args[0];
  if (url === undefined || url === "") throw new UsageError("the collector URL is required");
  const body: Body = { kind: requiredOption(c.parsed, "kind"), url };
  // --token is the admin token of every command: the collector's is --collector-token.
  for (const [option, field] of [
    ["collector-token", "token"],
    ["index", "index"],
  ] as const) {
    const value = stringOption(c.parsed, option);
    if (value !== undefined) body[field] = value;
  }
  const { body: answer } = await c.client.call<{ destination: SiemDestinationView }>("POST", base(c), body);
  if (c.json) return json(c, answer);
  const d = answer.destination;
  print(c.io, `SIEM destination ${text(d.id)} (${text(d.kind)}) added: ${text(d.url)}`);
  print(c.io, `Send a test event: gateway siem test --org ${requiredOption(c.parsed, "org")} ${text(d.id)}`);
  return EXIT.ok;
}

async function siemState(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the destination id");
  const { body: answer } = await c.client.call<{ destination: SiemDestinationView }>("GET", `${base(c)}/${id}`);
  if (c.json) return json(c, answer);
  print(c.io, `SIEM destination ${id}`);
  print(c.io, stateLines(answer.destination));
  return EXIT.ok;
}

/** 502 delivery_failed when the collector refuses: exit 1 with the collector's error. */
async function siemTest(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the destination id");
  const { body: answer } = await c.client.call("POST", `${base(c)}/${id}/test`);
  if (c.json) return json(c, answer);
  print(c.io, `Test event delivered to SIEM destination ${id}.`);
  return EXIT.ok;
}

async function siemDelete(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the destination id");
  const { body: answer } = await c.client.call("DELETE", `${base(c)}/${id}`);
  if (c.json) return json(c, answer);
  print(c.io, `SIEM destination ${id} deleted.`);
  return EXIT.ok;
}

const ORG = { org: "string" } as const;

export const SIEM_COMMANDS: Command[] = [
  adminCommand(
    "siem",
    "list",
    "siem list --org ORG_ID [--limit N] [--page P]",
    "SIEM destinations with their delivery state.",
    { ...ORG, ...PAGING },
    siemList,
  ),
  adminCommand(
    "siem",
    "create",
    "siem create --org ORG_ID --kind splunk_hec|elastic_bulk|syslog_tcp|http URL [--collector-token T] [--index I]",
    "Add a SIEM destination: the organization's events are pushed to it as they happen.",
    { ...ORG, kind: "string", "collector-token": "string", index: "string" },
    siemCreate,
  ),
  adminCommand(
    "siem",
    "state",
    "siem state --org ORG_ID DESTINATION_ID",
    "Delivered, pending, failed, dead letters, last error.",
    ORG,
    siemState,
  ),
  adminCommand(
    "siem",
    "test",
    "siem test --org ORG_ID DESTINATION_ID",
    "Send a test event now (exit 1 when the collector refuses it).",
    ORG,
    siemTest,
  ),
  adminCommand(
    "siem",
    "delete",
    "siem delete --org ORG_ID DESTINATION_ID",
    "Stop pushing to a destination and remove it.",
    ORG,
    siemDelete,
  ),
];
